package dev.trainwatch.cli.demo;

import java.util.List;

/**
 * A synthetic GPU's state at one instant, before it is dressed up as a {@link dev.trainwatch.protocol.GpuSample}.
 *
 * @param utilizationRatio  point utilisation 0–1
 * @param utilizationMin    lowest of the buffered samples since the previous poll
 * @param idleFraction      share of buffered samples at or below 5 %
 * @param clockEventReasons active clock-event reasons (NVML names in snake_case)
 */
public record GpuReading(long memoryTotalBytes, long memoryUsedBytes, double utilizationRatio,
                         double utilizationMin, double utilizationMean, double idleFraction, long smClockHz,
                         long smClockMaxHz, double powerWatts, double powerLimitWatts, double temperatureCelsius,
                         List<String> clockEventReasons) {
}
