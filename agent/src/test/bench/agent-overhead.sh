#!/usr/bin/env bash
# Overhead of `trainwatch agent`: 8 GPUs (the fake NVML library) polled at 1 Hz, batches shipped to a local sink.
# Samples the agent's CPU time (/proc/PID/stat utime+stime) and resident memory (/proc/PID/status VmRSS) every
# 10 s, ignores a warm-up, and prints average CPU as a share of one core, RSS min/max and the RSS trend.
#
#   agent/src/test/bench/agent-overhead.sh [SECONDS (default 600)] [JVM options...]
#
# Needs: cli/target/trainwatch-all.jar (./mvnw -B -o -q package -pl cli -am -Dmaven.test.skip=true) and the fake
# library agent/target/fake-nvml/libnvidia-ml.so.1 (./mvnw -B -o -q -pl agent test-compile).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
duration="${1:-600}"; shift || true
jvm_opts=("$@")
[ ${#jvm_opts[@]} -eq 0 ] && jvm_opts=(-Xms16m -Xmx32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -XX:-UsePerfData)
jar=cli/target/trainwatch-all.jar
lib=agent/target/fake-nvml/libnvidia-ml.so.1
[ -f "$jar" ] || { echo "missing $jar" >&2; exit 1; }
[ -f "$lib" ] || { echo "missing $lib" >&2; exit 1; }
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# Eight "ranks" of one torchrun-like run, so attribution reads real /proc entries and environments.
rank_pids=()
for i in 0 1 2 3 4 5 6 7; do
  env TORCHELASTIC_RUN_ID=bench-run RANK=$i LOCAL_RANK=$i WORLD_SIZE=8 MASTER_ADDR=127.0.0.1 sleep 100000 &
  pids+=($!); rank_pids+=($!)
done

scenario="$work/8gpu.scenario"
{
  echo "0 - driver 535.261.03"
  for i in 0 1 2 3 4 5 6 7; do
    printf '0 %d uuid GPU-%08d-aaaa-bbbb-cccc-dddddddddddd\n' "$i" "$i"
    echo "0 $i name NVIDIA A100-SXM4-80GB"
    printf '0 %d pci 00000000:%02X:00.0\n' "$i" $((i + 7))
    echo "0 $i processes ${rank_pids[$i]}:64424509440:95:40"
  done
  echo "0 * memory_total 85899345920"
  echo "0 * memory_reserved 670040064"
  echo "0 * memory_used 1073741824"
  echo "3600 * memory_used ~64424509440"
  echo "0 * util_gpu 97"
  echo "0 * util_mem 45"
  echo "0 * sm_clock_mhz 1410"
  echo "0 * mem_clock_mhz 1593"
  echo "0 * max_sm_clock_mhz 1410"
  echo "0 * max_mem_clock_mhz 1593"
  echo "0 * clock_reasons 0x0"
  echo "0 * power_mw 390000"
  echo "0 * power_limit_mw 400000"
  echo "0 * energy_mj 1000000"
  echo "3600 * energy_mj ~1405000000"
  echo "0 * temperature_c 64"
  echo "0 * pstate 0"
} > "$scenario"

# A sink standing in for the collector: answers 200 and counts batches.
port_file="$work/port"
python3 - "$port_file" "$work/batches" <<'PY' &
import sys, http.server
port_file, count_file = sys.argv[1], sys.argv[2]
count = 0
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the collector
    def do_POST(self):
        global count
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/v1/samples":
            count += 1
            open(count_file, "w").write(str(count))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    do_PUT = do_POST
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
open(port_file, "w").write(str(server.server_address[1]))
server.serve_forever()
PY
pids+=($!)
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done

FAKE_NVML_SCENARIO="$scenario" FAKE_NVML_CLOCK=wall java "${jvm_opts[@]}" -jar "$jar" agent \
  --collector "http://127.0.0.1:$(cat "$port_file")" --interval 1s --nvml-library "$lib" \
  --spool-dir "$work/spool" --host bench-node 2>"$work/agent.err" &
agent=$!
pids+=($agent)

hz=$(getconf CLK_TCK)
warmup=60
echo "agent pid $agent, JVM options: ${jvm_opts[*]}, ${duration}s (first ${warmup}s are warm-up)"
echo "t_s cpu_ticks rss_kb event_thread_ticks"
start=$(date +%s)
: > "$work/samples"
while :; do
  now=$(( $(date +%s) - start ))
  [ -d /proc/$agent ] || { echo "agent exited:"; cat "$work/agent.err"; exit 1; }
  ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' /proc/$agent/stat)
  rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$agent/status)
  # The NVML event thread: in the fake library its nvmlEventSetWait polls every 5 ms (the real driver blocks in
  # the kernel), so its CPU is reported apart.
  event_ticks=0
  for t in /proc/$agent/task/*; do
    if grep -q '(trainwatch-nvml' "$t/stat" 2>/dev/null; then
      event_ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$t/stat")
    fi
  done
  echo "$now $ticks $rss $event_ticks" | tee -a "$work/samples"
  [ "$now" -ge "$duration" ] && break
  sleep 10
done
python3 - "$work/samples" "$hz" "$warmup" "$(cat "$work/batches" 2>/dev/null || echo 0)" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
hz, warmup, batches = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
steady = [r for r in rows if r[0] >= warmup]
(t0, c0, _, e0), (t1, c1, _, e1) = steady[0], steady[-1]
cpu = (c1 - c0) / hz / (t1 - t0) * 100
cpu_without_events = (c1 - c0 - (e1 - e0)) / hz / (t1 - t0) * 100
rss = [r[2] for r in steady]
n = len(steady); mt = sum(r[0] for r in steady) / n; mr = sum(rss) / n
slope = sum((r[0] - mt) * (r[2] - mr) for r in steady) / sum((r[0] - mt) ** 2 for r in steady)
print(f"steady window {t1 - t0:.0f}s: CPU {cpu:.3f}% of one core ({(c1 - c0) / hz:.2f}s CPU); "
      f"without the fake NVML's event-wait loop {cpu_without_events:.3f}%")
print(f"RSS min {min(rss) / 1024:.1f} MB, max {max(rss) / 1024:.1f} MB, last {rss[-1] / 1024:.1f} MB; "
      f"trend {slope * 3600 / 1024:+.2f} MB/hour (least squares over the steady window)")
print(f"total CPU including start-up: {rows[-1][1] / hz:.2f}s; batches received by the sink: {batches}")
PY
