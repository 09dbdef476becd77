package dev.trainwatch.agent.nvml;

/**
 * Which compute-process call to use and its entry size (nvitop's rule): 32 bytes only with {@code _v3} and
 * ConfComputeMemSizeInfo but no RunningProcessDetailList (R535); else 24 with {@code _v3}, 24 with {@code _v2}, or 16.
 */
enum ProcessStride {
    V3_32("nvmlDeviceGetComputeRunningProcesses_v3", 32),
    V3_24("nvmlDeviceGetComputeRunningProcesses_v3", 24),
    V2_24("nvmlDeviceGetComputeRunningProcesses_v2", 24),
    V1_16("nvmlDeviceGetComputeRunningProcesses", 16),
    NONE(null, 0);

    final String symbol;
    final int bytes;

    ProcessStride(String symbol, int bytes) {
        this.symbol = symbol;
        this.bytes = bytes;
    }

    static ProcessStride choose(boolean hasV3, boolean hasV2, boolean hasV1, boolean hasConfComputeMemSizeInfo,
                                boolean hasRunningProcessDetailList) {
        return hasV3 ? (hasConfComputeMemSizeInfo && !hasRunningProcessDetailList ? V3_32 : V3_24)
                : hasV2 ? V2_24 : hasV1 ? V1_16 : NONE;
    }
}
