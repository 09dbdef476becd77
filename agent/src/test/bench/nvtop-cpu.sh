#!/usr/bin/env bash
# CPU time of nvtop polling the fake NVML library, for the NVML benchmark (docs/PERFORMANCE.md).
# Usage: nvtop-cpu.sh NVTOP FAKE_LIB_DIR SCENARIO SECONDS
# nvtop is an interactive program: it runs in a pseudo-terminal (script) refreshing every 0.1 s (-d 1); its CPU
# time (utime+stime from /proc) is taken over SECONDS after a 2 s start-up, and its GPU reads are counted by the
# fake (FAKE_NVML_COUNT_FILE: utilisation calls, one per GPU and refresh). Prints one JSON line.
set -euo pipefail
nvtop="$1" libdir="$2" scenario="$3" secs="$4"
count="$(mktemp)"
export FAKE_NVML_COUNT_FILE="$count" FAKE_NVML_SCENARIO="$scenario" FAKE_NVML_CLOCK=wall LD_LIBRARY_PATH="$libdir" TERM=xterm COLUMNS=200 LINES=60
script -qfc "exec $nvtop -d 1" /dev/null >/dev/null 2>&1 &
spid=$!
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; wait "$spid" 2>/dev/null || true; rm -f "$count"; }
trap cleanup EXIT
sleep 2
pid="$(pgrep -P "$spid" | head -1)"
[ -n "$pid" ] || { echo "nvtop did not start" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
reads() { tr -d ' \n' < "$count"; }
t0="$(ticks)"; s0="$(date +%s.%N)"; r0="$(reads)"
sleep "$secs"
t1="$(ticks)"; s1="$(date +%s.%N)"; r1="$(reads)"
hz="$(getconf CLK_TCK)"
awk -v t0="$t0" -v t1="$t1" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v r0="${r0:-0}" -v r1="${r1:-0}" 'BEGIN {
  printf "{\"cpu_seconds\": %.3f, \"wall_seconds\": %.3f, \"gpu_samples\": %d}\n", (t1 - t0) / hz, s1 - s0, r1 - r0 }'
