package dev.trainwatch.protocol;

import com.fasterxml.jackson.annotation.JsonIgnore;

/**
 * What the GPU's hardware counters say it did, beyond "a kernel was running": SM, tensor-pipe and DRAM activity
 * (NVML's GPU performance monitoring, Hopper and newer) over the interval between two polls, PCIe rates and the
 * NVLink byte counters. Every reading the GPU or driver cannot give is null (absent), never 0. Immutable.
 *
 * @param windowSeconds              length of the interval the activity ratios and GPM rates cover
 * @param smActiveRatio              share of SMs busy over the interval, 0–1 ({@code NVML_GPM_METRIC_SM_UTIL})
 * @param smOccupancyRatio           resident warps against the maximum, 0–1 ({@code SM_OCCUPANCY})
 * @param tensorActiveRatio          share of time any tensor pipe was busy, 0–1 ({@code ANY_TENSOR_UTIL})
 * @param tensorHmmaActiveRatio      share of time the half-precision tensor pipe was busy, 0–1 ({@code HMMA_TENSOR_UTIL})
 * @param dramActiveRatio            DRAM bandwidth used against the maximum, 0–1 ({@code DRAM_BW_UTIL})
 * @param pcieRxBytesPerSecond       PCIe traffic into the GPU (GPM's rate over the interval, else NVML's 20 ms window);
 *                                   the {@code Tx} components are the traffic out of it
 * @param nvlinkRxBytesPerSecond     NVLink traffic into the GPU over the interval, all links (GPM)
 * @param nvlinkRxBytes              NVLink data received, all links, since the driver's counter started (bytes)
 */
public record GpuActivity(
        Double windowSeconds,
        Double smActiveRatio,
        Double smOccupancyRatio,
        Double tensorActiveRatio,
        Double tensorHmmaActiveRatio,
        Double dramActiveRatio,
        Double pcieRxBytesPerSecond,
        Double pcieTxBytesPerSecond,
        Double nvlinkRxBytesPerSecond,
        Double nvlinkTxBytesPerSecond,
        Long nvlinkRxBytes,
        Long nvlinkTxBytes) {

    /** True when no reading is present (then a sample carries no activity at all). */
    @JsonIgnore
    public boolean isEmpty() {
        return smActiveRatio == null && smOccupancyRatio == null && tensorActiveRatio == null
                && tensorHmmaActiveRatio == null && dramActiveRatio == null && pcieRxBytesPerSecond == null
                && pcieTxBytesPerSecond == null && nvlinkRxBytesPerSecond == null && nvlinkTxBytesPerSecond == null
                && nvlinkRxBytes == null && nvlinkTxBytes == null;
    }
}
