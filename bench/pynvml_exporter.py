#!/usr/bin/env python3
"""The peer of `trainwatch agent` in bench/agent-vs-exporter: a Prometheus exporter in the usual Python shape
(prometheus_client + NVIDIA's pynvml) that polls every GPU at a fixed interval and serves the readings on /metrics.

  pynvml_exporter.py LIBRARY PORT [INTERVAL_SECONDS]

It reads exactly the fields trainwatch's agent reads, through the same per-GPU code the agent's pynvml parity test
uses (agent/src/test/python/pynvml_poller.py: identity once, memory v2, utilisation and the buffered samples,
clocks, clock-event reasons, power and limit, energy, temperature, P-state, compute processes with per-process
utilisation, GPM metrics and NVLink counters), and sets one gauge per reading and GPU.
"""
import ctypes
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent", "src", "test", "python"))
import pynvml as nv  # noqa: E402
import pynvml_poller  # noqa: E402
from prometheus_client import Counter, Gauge, start_http_server  # noqa: E402

FIELDS = ["memory_total", "memory_reserved", "memory_free", "memory_used", "util_gpu", "util_mem", "sm_clock_mhz",
          "mem_clock_mhz", "sm_clock_max_mhz", "mem_clock_max_mhz", "clock_reasons", "power_mw", "power_limit_mw",
          "energy_mj", "temperature_c", "pstate", "nvlink_tx_kib", "nvlink_rx_kib"] + \
         ["gpm_" + key for _, key in pynvml_poller.GPM]
WINDOW = ["count", "min", "max", "mean", "idle"]


def main():
    library, port = sys.argv[1], int(sys.argv[2])
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    nv.nvmlLib = ctypes.CDLL(library)
    nv.nvmlInit()
    gpus = [pynvml_poller.Gpu(i) for i in range(nv.nvmlDeviceGetCount())]
    gauges = {f: Gauge("gpu_" + f, f, ["gpu", "uuid"]) for f in FIELDS}
    window = {f: Gauge("gpu_util_window_" + f, f, ["gpu", "uuid"]) for f in WINDOW}
    proc_mem = Gauge("gpu_process_used_memory_bytes", "per process", ["gpu", "pid"])
    proc_sm = Gauge("gpu_process_sm_util", "per process", ["gpu", "pid"])
    polls = Gauge("exporter_poll_seconds", "duration of the last poll")
    failed = Counter("exporter_failed_reads", "GPU polls that raised an NVML error")
    lock = threading.Lock()
    start_http_server(port, addr="127.0.0.1")
    next_poll = time.monotonic()
    while True:
        t0 = time.monotonic()
        with lock:
            for g in gpus:
                try:
                    out = g.poll()
                except nv.NVMLError as e:
                    # pynvml asks for a buffer's size, then fills it: a sample that arrives in between is
                    # "insufficient size". An exporter logs and goes on; this one counts.
                    failed.inc()
                    continue
                labels = (str(g.index), g.uuid)
                for f in FIELDS:
                    v = out.get(f)
                    if v is not None:
                        gauges[f].labels(*labels).set(v)
                for f in WINDOW:
                    if "window" in out:
                        window[f].labels(*labels).set(out["window"][f])
                for p in out["processes"]:
                    proc_mem.labels(str(g.index), str(p["pid"])).set(p["used_memory"])
                    if p["sm_util"] is not None:
                        proc_sm.labels(str(g.index), str(p["pid"])).set(p["sm_util"])
        polls.set(time.monotonic() - t0)
        next_poll += interval
        time.sleep(max(0.0, next_poll - time.monotonic()))


if __name__ == "__main__":
    main()
