#!/bin/sh
# parley app-server on stdio with parley-mock-model as its model provider, on
# loopback: the counterpart of codex_app_server.sh, so that parley-bench, which
# sums the server's process tree, counts the mock for both servers. For example:
#
#   parley-bench --server 'bench/parley_with_mock.sh --store memory' --text plain --threads 50
#
# Arguments go to `parley app-server`. MOCK_ARGS adds flags to the mock (e.g.
# '--pace-ms=200 --threads=6000'); PARLEY_BIN and MOCK_BIN override the binaries.
# When parley exits, the mock's CPU time and peak RSS go to stderr (the
# harness's --server-log), so its share can be told apart. The mock serves
# thousands of streams at once, so the provider has no request cap (parley's
# default for a loopback provider is 8): a later -c max_concurrent_requests=N
# in the arguments sets one.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mock=${MOCK_BIN:-$here/../build/release/bench/parley-mock-model}
parley=${PARLEY_BIN:-$here/../build/release/transport/parley}
work=$(mktemp -d /tmp/parley-mock.XXXXXX)
# The mock is on loopback; a proxy from the environment must not be asked for it.
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
# shellcheck disable=SC2086  # MOCK_ARGS is a list of flags
"$mock" --port=0 ${MOCK_ARGS:-} > "$work/mock.out" 2> "$work/mock.err" &
mock_pid=$!
until grep -qs '^listening on' "$work/mock.out"; do
  kill -0 "$mock_pid" 2>/dev/null || { cat "$work/mock.err" >&2; exit 2; }
  sleep 0.02
done
port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/mock.out")
status=0
MOCK_KEY=parley-bench "$parley" app-server \
  -c model=mock-model -c model_provider=mock \
  -c "model_providers.mock.base_url=http://127.0.0.1:$port/v1" \
  -c model_providers.mock.env_key=MOCK_KEY \
  -c model_providers.mock.max_concurrent_requests=0 "$@" || status=$?
# utime + stime (fields 14 and 15 of stat; the command name has no spaces) and VmHWM.
ticks=$(awk '{print $14 + $15}' "/proc/$mock_pid/stat")
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$mock_pid/status")
echo "parley_with_mock.sh: mock cpu_s=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}') peak_rss_kb=$hwm" >&2
kill "$mock_pid" 2>/dev/null || true
wait "$mock_pid" 2>/dev/null || true
rm -rf "$work"
exit "$status"
