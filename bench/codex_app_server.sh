#!/bin/sh
# The real Codex 0.169.0 app-server on stdio, offline: inside a network
# namespace with nothing but loopback, with parley-mock-model as its model
# (see mock_model.md). For parley-bench:
#
#   parley-bench --server 'bench/codex_app_server.sh' --text plain --threads 20
#
# CODEX_BIN overrides the codex binary (default: the one npx installs); MOCK_ARGS
# adds flags to the mock (e.g. --pace-ms=200). When Codex exits, the mock's CPU
# time and peak RSS go to stderr (the harness's --server-log).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mock=${MOCK_BIN:-$here/../build/release/bench/parley-mock-model}
codex=${CODEX_BIN:-$(ls -d /root/.npm/_npx/*/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex 2>/dev/null | head -n1)}
if [ -z "$codex" ] || [ ! -x "$codex" ]; then
  echo "codex_app_server.sh: no codex binary; run 'npx -y @openai/codex@0.169.0 --version' once" >&2
  exit 2
fi
work=$(mktemp -d /tmp/parley-codex.XXXXXX)
exec unshare -n sh -c '
  set -eu
  ip link set lo up
  work=$1; mock=$2; codex=$3
  mkdir -p "$work/home" "$work/user"
  "$mock" --port=18765 ${MOCK_ARGS:-} > "$work/mock.out" 2> "$work/mock.err" &
  mock_pid=$!
  until grep -qs "^listening on" "$work/mock.out"; do sleep 0.05; done
  cat > "$work/home/config.toml" <<TOML
model = "mock-model"
model_provider = "mock"
approval_policy = "on-request"

[model_providers.mock]
name = "parley mock model"
base_url = "http://127.0.0.1:18765/v1"
wire_api = "responses"
requires_openai_auth = false
TOML
  HOME="$work/user" CODEX_HOME="$work/home" "$codex" app-server 2> "$work/codex.err" || true
  # The share of the mock in the figures parley-bench sums over the process tree
  # (utime + stime, fields 14 and 15 of stat; VmHWM), as parley_with_mock.sh reports it.
  ticks=$(awk "{print \$14 + \$15}" "/proc/$mock_pid/stat")
  hwm=$(awk "/^VmHWM:/ {print \$2}" "/proc/$mock_pid/status")
  echo "codex_app_server.sh: mock cpu_s=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" "BEGIN {printf \"%.2f\", t / hz}") peak_rss_kb=$hwm" >&2
  kill "$mock_pid" 2>/dev/null || true
' sh "$work" "$mock" "$codex"
