package dev.trainwatch.collector.history;

/**
 * How far finished runs of one model family on one GPU model were from their predictions.
 *
 * @param gpuId           catalog GPU id
 * @param family          model family
 * @param stepTimeFactor  multiply the raw predicted step time by this
 * @param memoryFactor    multiply the raw predicted peak memory by this
 * @param runs            finished runs it is based on
 */
public record CalibrationFactors(String gpuId, String family, double stepTimeFactor, double memoryFactor, int runs) {
}
