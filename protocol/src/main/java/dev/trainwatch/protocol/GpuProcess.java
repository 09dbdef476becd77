package dev.trainwatch.protocol;

/**
 * A compute process on a GPU, as NVML lists it.
 *
 * @param pid                    host PID
 * @param usedMemoryBytes        device memory the process holds; null when NVML cannot tell
 * @param smUtilizationRatio     the process's SM utilisation 0–1 since the last poll, where supported
 * @param memoryUtilizationRatio the process's memory-controller utilisation 0–1, where supported
 */
public record GpuProcess(long pid, Long usedMemoryBytes, Double smUtilizationRatio, Double memoryUtilizationRatio) {
}
