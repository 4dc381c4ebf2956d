#!/usr/bin/env bash
# Runs a command with CPU-bound busy loops beside it, to see whether timing-sensitive tests hold on a
# loaded machine: `bash devenv/with-busy-loops.sh npm test` (BUSY_LOOPS, default 2: one per core
# here). The loops end with this script, however it ends (each checks that the script still runs).
set -euo pipefail
loops="${BUSY_LOOPS:-2}"
script_pid=$$
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for _ in $(seq "$loops"); do
  (while kill -0 "$script_pid" 2>/dev/null; do :; done) &
  pids+=($!)
done
echo "with-busy-loops: $loops busy loop(s) beside: $*" >&2
"$@"
