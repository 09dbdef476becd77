#!/usr/bin/env python3
"""A poller built on NVIDIA's own Python binding (pynvml), reading the same fields as trainwatch's agent.

Used two ways by the agent's tests and benchmark:
  pynvml_poller.py LIBRARY read          one poll of every GPU, as JSON on stdout (parity test)
  pynvml_poller.py LIBRARY bench N       N polls after a warm-up; JSON with the process CPU time per GPU-sample
  pynvml_poller.py LIBRARY activity T0 T1  polls at scenario times T0 and T1 (fake clock), JSON of the second poll
                                         (GPM metrics over T0..T1, NVLink counters, PCIe throughput)
The fake library reads FAKE_NVML_SCENARIO / FAKE_NVML_CLOCK from the environment.
"""
import ctypes
import json
import sys
import time

import pynvml as nv

IDLE = 0.05
ALL_LINKS = 0xFFFFFFFF  # scopeId: the NVLink counters of all links summed (nvml.h)
# GPM metrics read, with the keys of the JSON output
GPM = [(nv.NVML_GPM_METRIC_SM_UTIL, "sm_util"), (nv.NVML_GPM_METRIC_SM_OCCUPANCY, "sm_occupancy"),
       (nv.NVML_GPM_METRIC_ANY_TENSOR_UTIL, "any_tensor_util"), (nv.NVML_GPM_METRIC_HMMA_TENSOR_UTIL, "hmma_tensor_util"),
       (nv.NVML_GPM_METRIC_DRAM_BW_UTIL, "dram_bw_util"), (nv.NVML_GPM_METRIC_PCIE_TX_PER_SEC, "pcie_tx_mibps"),
       (nv.NVML_GPM_METRIC_PCIE_RX_PER_SEC, "pcie_rx_mibps"),
       (nv.NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlink_rx_mibps"),
       (nv.NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvlink_tx_mibps")]


def call(fn, *args):
    """The value, or None when the GPU does not support the reading (never -1 or 0)."""
    try:
        return fn(*args)
    except nv.NVMLError as e:
        if e.value in (nv.NVML_ERROR_NOT_SUPPORTED, nv.NVML_ERROR_NOT_FOUND):
            return None
        raise


class Gpu:
    def __init__(self, index):
        self.index = index
        self.handle = nv.nvmlDeviceGetHandleByIndex(index)
        h = self.handle
        self.uuid = nv.nvmlDeviceGetUUID(h)
        self.name = nv.nvmlDeviceGetName(h)
        self.pci = nv.nvmlDeviceGetPciInfo(h).busId
        self.sm_max = call(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM)
        self.mem_max = call(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM)
        self.last_sample = 0
        self.last_proc = 0
        self.gpm = None  # [older sample, newer sample] when the GPU has GPM
        self.gpm_taken = False
        self.pcie = True
        try:
            if nv.nvmlGpmQueryDeviceSupport(h).isSupportedDevice:
                self.gpm = [nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()]
        except nv.NVMLError as e:
            if e.value not in (nv.NVML_ERROR_NOT_SUPPORTED, nv.NVML_ERROR_FUNCTION_NOT_FOUND):
                raise

    def free(self):
        for smp in self.gpm or []:
            nv.nvmlGpmSampleFree(smp)
        self.gpm = None

    def activity(self, out):
        """GPM metrics since the previous poll, NVLink data counters (all links), PCIe throughput."""
        h = self.handle
        if self.gpm:
            older, newer = self.gpm
            nv.nvmlGpmSampleGet(h, newer)
            if self.gpm_taken:
                q = nv.c_nvmlGpmMetricsGet_t()
                q.version = nv.NVML_GPM_METRICS_GET_VERSION
                q.numMetrics = len(GPM)
                q.sample1, q.sample2 = older, newer
                for i, (mid, _) in enumerate(GPM):
                    q.metrics[i].metricId = mid
                nv.nvmlGpmMetricsGet(q)
                for i, (_, key) in enumerate(GPM):
                    m = q.metrics[i]
                    out["gpm_" + key] = m.value if m.nvmlReturn == nv.NVML_SUCCESS else None
            self.gpm = [newer, older]
            self.gpm_taken = True
        try:
            fv = nv.nvmlDeviceGetFieldValues(h, [(nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ALL_LINKS),
                                                 (nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ALL_LINKS)])
            out["nvlink_tx_kib"] = fv[0].value.ullVal if fv[0].nvmlReturn == nv.NVML_SUCCESS else None
            out["nvlink_rx_kib"] = fv[1].value.ullVal if fv[1].nvmlReturn == nv.NVML_SUCCESS else None
        except nv.NVMLError as e:
            if e.value != nv.NVML_ERROR_FUNCTION_NOT_FOUND:
                raise
        # Like the agent: not when GPM gave the PCIe rates, and not again on a GPU that does not support it.
        if self.pcie and out.get("gpm_pcie_rx_mibps") is None:
            out["pcie_tx_kbps"] = call(nv.nvmlDeviceGetPcieThroughput, h, nv.NVML_PCIE_UTIL_TX_BYTES)
            out["pcie_rx_kbps"] = call(nv.nvmlDeviceGetPcieThroughput, h, nv.NVML_PCIE_UTIL_RX_BYTES)
            self.pcie = out["pcie_tx_kbps"] is not None or out["pcie_rx_kbps"] is not None

    def poll(self):
        h = self.handle
        out = {"index": self.index, "uuid": self.uuid, "name": self.name, "pci_bus_id": self.pci,
               "sm_clock_max_mhz": self.sm_max, "mem_clock_max_mhz": self.mem_max}
        m = call(nv.nvmlDeviceGetMemoryInfo, h, nv.nvmlMemory_v2)
        if m is not None:
            out.update(memory_total=m.total, memory_reserved=m.reserved, memory_free=m.free, memory_used=m.used)
        u = call(nv.nvmlDeviceGetUtilizationRates, h)
        if u is not None:
            out.update(util_gpu=u.gpu, util_mem=u.memory)
        s = call(nv.nvmlDeviceGetSamples, h, nv.NVML_GPU_UTILIZATION_SAMPLES, self.last_sample)
        if s is not None and s[1]:
            vals = [x.sampleValue.uiVal / 100.0 for x in s[1]]
            stamps = [x.timeStamp for x in s[1]]
            self.last_sample = max(stamps)
            out["window"] = {"count": len(vals), "min": min(vals), "max": max(vals), "mean": sum(vals) / len(vals),
                             "idle": sum(1 for v in vals if v <= IDLE) / len(vals),
                             "from_us": min(stamps), "to_us": max(stamps)}
        out["sm_clock_mhz"] = call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM)
        out["mem_clock_mhz"] = call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM)
        out["clock_reasons"] = call(nv.nvmlDeviceGetCurrentClocksThrottleReasons, h)
        out["power_mw"] = call(nv.nvmlDeviceGetPowerUsage, h)
        out["power_limit_mw"] = call(nv.nvmlDeviceGetEnforcedPowerLimit, h)
        out["energy_mj"] = call(nv.nvmlDeviceGetTotalEnergyConsumption, h)
        out["temperature_c"] = call(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU)
        out["pstate"] = call(nv.nvmlDeviceGetPerformanceState, h)
        procs = call(nv.nvmlDeviceGetComputeRunningProcesses, h) or []
        util = {}
        pu = call(nv.nvmlDeviceGetProcessUtilization, h, self.last_proc) if procs else None
        for x in pu or []:
            self.last_proc = max(self.last_proc, x.timeStamp)
            util.setdefault(x.pid, []).append((x.smUtil, x.memUtil))
        out["processes"] = [{"pid": p.pid, "used_memory": p.usedGpuMemory,
                             "sm_util": (sum(a for a, _ in util[p.pid]) / len(util[p.pid])) if p.pid in util else None,
                             "mem_util": (sum(b for _, b in util[p.pid]) / len(util[p.pid])) if p.pid in util else None}
                            for p in procs]
        self.activity(out)
        return out


def main():
    library, mode = sys.argv[1], sys.argv[2]
    nv.nvmlLib = ctypes.CDLL(library)
    nv.nvmlInit()
    try:
        gpus = [Gpu(i) for i in range(nv.nvmlDeviceGetCount())]
        if mode == "read":
            print(json.dumps({"driver": nv.nvmlSystemGetDriverVersion(), "gpus": [g.poll() for g in gpus]}))
            return
        set_time = nv.nvmlLib.fake_nvml_set_time
        set_time.argtypes = [ctypes.c_double]
        if mode == "activity":
            set_time(float(sys.argv[3]))
            for g in gpus:
                g.poll()
            set_time(float(sys.argv[4]))
            print(json.dumps({"gpus": [g.poll() for g in gpus]}))
            return
        n = int(sys.argv[3])
        # The fake's clock advances one second per poll, as at a 1 Hz poll: every poll sees new buffered samples.
        t = [1000.0]

        def poll_all():
            t[0] += 1
            set_time(t[0])
            for g in gpus:
                g.poll()

        for _ in range(max(n // 10, 10)):
            poll_all()
        thread0, cpu0, wall0 = time.thread_time(), time.process_time(), time.perf_counter()
        for _ in range(n):
            poll_all()
        thread, cpu = time.thread_time() - thread0, time.process_time() - cpu0
        wall = time.perf_counter() - wall0
        samples = n * len(gpus)
        print(json.dumps({"polls": n, "gpus": len(gpus), "thread_cpu_us_per_gpu_sample": thread / samples * 1e6,
                          "process_cpu_us_per_gpu_sample": cpu / samples * 1e6,
                          "wall_us_per_gpu_sample": wall / samples * 1e6}))
    finally:
        for g in gpus if "gpus" in locals() else []:
            g.free()
        nv.nvmlShutdown()


if __name__ == "__main__":
    main()
