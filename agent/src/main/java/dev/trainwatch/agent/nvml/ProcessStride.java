package dev.trainwatch.agent.nvml;

/**
 * Which compute-process call to use and the size of one entry it writes. R535-era drivers made
 * {@code nvmlDeviceGetComputeRunningProcesses_v3} write 32-byte entries without a new symbol; later drivers went
 * back to 24 bytes and moved the extra field to {@code nvmlDeviceGetRunningProcessDetailList}. The rule (the one
 * nvitop settled on): 32 bytes only if {@code _v3} and {@code nvmlDeviceGetConfComputeMemSizeInfo} exist and
 * {@code nvmlDeviceGetRunningProcessDetailList} does not; else 24 with {@code _v3}; else {@code _v2} (24); else the
 * legacy unsuffixed call (16).
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
        if (hasV3) {
            return hasConfComputeMemSizeInfo && !hasRunningProcessDetailList ? V3_32 : V3_24;
        }
        if (hasV2) {
            return V2_24;
        }
        return hasV1 ? V1_16 : NONE;
    }
}
