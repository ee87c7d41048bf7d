#!/bin/sh
# Runs one libFuzzer target for a bounded time: the checked-in corpus is read
# only, new inputs go to a scratch directory, and a crash input is kept there
# (crash-*) with the fuzzer's report on stderr.
#   run_fuzzer.sh FUZZER CORPUS_DIR WORK_DIR SECONDS
set -eu
fuzzer=$1 corpus=$2 work=$3 seconds=$4
rm -rf "$work" && mkdir -p "$work/new"
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" "$work/new" "$corpus"
