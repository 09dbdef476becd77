package dev.trainwatch.collector.state.view;

import java.util.List;
import java.util.Map;

/**
 * What the run does, as observed (the {@code observed} object of {@code GET /v1/runs/{id}}). Null = not known
 * (no agent samples yet, no steps yet). Bytes, seconds, ratios 0–1, unix seconds. Immutable.
 *
 * @param peakMemoryBytes        highest device memory in use on any of the run's GPUs since the run appeared
 * @param memoryUsedBytes        memory in use now on the run's fullest GPU
 * @param memoryTotalBytes       capacity of that GPU
 * @param stepSeconds            median seconds per step over the window
 * @param dataWaitRatio          share of step time spent waiting for data (PixArt: includes online encoding)
 * @param textEncoderRatio       share of step time in the text encoder (Sana's log splits it out)
 * @param vaeRatio               share of step time in the VAE encoder (Sana)
 * @param gpuUtilizationRatio    mean utilisation over the run's GPUs in the last minute
 * @param samplesPerSecond       throughput over all ranks
 * @param lastStep               newest step number
 * @param lastStepTs             unix seconds of the newest step report
 * @param largestBucketHeightPx  largest multi-scale bucket seen in the log, in pixels
 * @param largestBucketWidthPx   its width in pixels
 * @param gpuCount               GPUs attributed to the run
 * @param powerWatts             power draw summed over the run's GPUs
 * @param ranks                  each rank's own reports, lowest rank first, when two or more ranks report each
 *                               step (Open-Sora's timer lines, torchrun's {@code [rankN]:} prefixes); null
 *                               otherwise. The fields above are the run's: its lead rank's step series, and for
 *                               {@code dataWaitRatio} the largest rank's share
 * @param mfuRatio               model FLOP utilisation: the estimator's model FLOPs per sample (3 × forward, the
 *                               trained network only) × observed samples per second ÷ (GPUs × the dtype's dense
 *                               peak); null without a spec or without a step time
 * @param hfuRatio               hardware FLOP utilisation: the same with the FLOPs really executed (the forward
 *                               passes recomputed under gradient checkpointing count)
 * @param goodputRatio           productive step time over wall time since {@code accountedSinceTs}
 * @param energyJoules           energy the run's GPUs used while attributed to it (the NVML energy counter, else
 *                               power × time); null when no GPU reports either
 * @param gpuHours               GPU-hours the run held (time between samples of each of its GPUs)
 * @param cost                   {@code gpuHours} × the collector's price per GPU-hour ({@code --gpu-hour-price});
 *                               null without a price
 * @param wallSeconds            wall time since {@code accountedSinceTs} by reason ({@code productive},
 *                               {@code startup}, {@code data_wait}, {@code encoding}, {@code stall},
 *                               {@code checkpoint}, {@code evaluation}, {@code lost_work}, {@code idle},
 *                               {@code pending}); the parts sum to the wall time
 * @param accountedSinceTs       when the collector started accounting the run's time (its first sight of the run,
 *                               or its own restart)
 * @param loss                   the newest finite training loss reported
 * @param lossNonfinite          true while the newest report's loss or grad norm is NaN or infinite
 * @param lossNonfiniteReports   reports whose loss was NaN or infinite since the run appeared
 * @param specMismatch           set when the observation is impossible under the registered spec (model FLOPs at
 *                               more than the GPUs' peak: an MFU above 100 %): says so, and {@code mfuRatio} and
 *                               {@code hfuRatio} are then null (no figure nobody can reach is shown); null otherwise
 * @param smActiveRatio          mean share of SMs at work over the run's GPUs in the last minute (GPM; null for
 *                               GPUs without hardware activity counters)
 * @param hardwareMfuRatio       hardware MFU: the mean share of time the tensor pipes were busy over the run's GPUs
 *                               in the step window (GPM) — beside {@code mfuRatio}, the FLOP model's figure; null
 *                               without counters
 */
public record ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                           Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio,
                           Double gpuUtilizationRatio, Double samplesPerSecond, Long lastStep, Double lastStepTs,
                           Integer largestBucketHeightPx, Integer largestBucketWidthPx, int gpuCount,
                           Double powerWatts, List<RankView> ranks, Double mfuRatio, Double hfuRatio,
                           Double goodputRatio, Double energyJoules, Double gpuHours, Double cost,
                           Map<String, Double> wallSeconds, Double accountedSinceTs, Double loss,
                           Boolean lossNonfinite, Long lossNonfiniteReports, String specMismatch,
                           Double smActiveRatio, Double hardwareMfuRatio) {

    /** A view with a spec mismatch, without hardware activity counters. */
    public ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                        Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio, Double gpuUtilizationRatio,
                        Double samplesPerSecond, Long lastStep, Double lastStepTs, Integer largestBucketHeightPx,
                        Integer largestBucketWidthPx, int gpuCount, Double powerWatts,
                        List<RankView> ranks, Double mfuRatio, Double hfuRatio, Double goodputRatio,
                        Double energyJoules, Double gpuHours, Double cost, Map<String, Double> wallSeconds,
                        Double accountedSinceTs, Double loss, Boolean lossNonfinite, Long lossNonfiniteReports,
                        String specMismatch) {
        this(peakMemoryBytes, memoryUsedBytes, memoryTotalBytes, stepSeconds, dataWaitRatio, textEncoderRatio,
                vaeRatio, gpuUtilizationRatio, samplesPerSecond, lastStep, lastStepTs, largestBucketHeightPx,
                largestBucketWidthPx, gpuCount, powerWatts, ranks, mfuRatio, hfuRatio, goodputRatio, energyJoules,
                gpuHours, cost, wallSeconds, accountedSinceTs, loss, lossNonfinite, lossNonfiniteReports, specMismatch,
                null, null);
    }

    /** A view with hardware activity counters, without a spec mismatch. */
    public ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                        Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio, Double gpuUtilizationRatio,
                        Double samplesPerSecond, Long lastStep, Double lastStepTs, Integer largestBucketHeightPx,
                        Integer largestBucketWidthPx, int gpuCount, Double powerWatts,
                        List<RankView> ranks, Double mfuRatio, Double hfuRatio, Double goodputRatio,
                        Double energyJoules, Double gpuHours, Double cost, Map<String, Double> wallSeconds,
                        Double accountedSinceTs, Double loss, Boolean lossNonfinite, Long lossNonfiniteReports,
                        Double smActiveRatio, Double hardwareMfuRatio) {
        this(peakMemoryBytes, memoryUsedBytes, memoryTotalBytes, stepSeconds, dataWaitRatio, textEncoderRatio,
                vaeRatio, gpuUtilizationRatio, samplesPerSecond, lastStep, lastStepTs, largestBucketHeightPx,
                largestBucketWidthPx, gpuCount, powerWatts, ranks, mfuRatio, hfuRatio, goodputRatio, energyJoules,
                gpuHours, cost, wallSeconds, accountedSinceTs, loss, lossNonfinite, lossNonfiniteReports, null,
                smActiveRatio, hardwareMfuRatio);
    }

    /** A view without a spec mismatch or hardware activity counters. */
    public ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                        Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio, Double gpuUtilizationRatio,
                        Double samplesPerSecond, Long lastStep, Double lastStepTs, Integer largestBucketHeightPx,
                        Integer largestBucketWidthPx, int gpuCount, Double powerWatts,
                        List<RankView> ranks, Double mfuRatio, Double hfuRatio, Double goodputRatio,
                        Double energyJoules, Double gpuHours, Double cost, Map<String, Double> wallSeconds,
                        Double accountedSinceTs, Double loss, Boolean lossNonfinite, Long lossNonfiniteReports) {
        this(peakMemoryBytes, memoryUsedBytes, memoryTotalBytes, stepSeconds, dataWaitRatio, textEncoderRatio,
                vaeRatio, gpuUtilizationRatio, samplesPerSecond, lastStep, lastStepTs, largestBucketHeightPx,
                largestBucketWidthPx, gpuCount, powerWatts, ranks, mfuRatio, hfuRatio, goodputRatio, energyJoules,
                gpuHours, cost, wallSeconds, accountedSinceTs, loss, lossNonfinite, lossNonfiniteReports, (String) null);
    }

    /** A view without loss readings. */
    public ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                        Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio, Double gpuUtilizationRatio,
                        Double samplesPerSecond, Long lastStep, Double lastStepTs, Integer largestBucketHeightPx,
                        Integer largestBucketWidthPx, int gpuCount, Double powerWatts,
                        List<RankView> ranks, Double mfuRatio, Double hfuRatio, Double goodputRatio,
                        Double energyJoules, Double gpuHours, Double cost, Map<String, Double> wallSeconds,
                        Double accountedSinceTs) {
        this(peakMemoryBytes, memoryUsedBytes, memoryTotalBytes, stepSeconds, dataWaitRatio, textEncoderRatio,
                vaeRatio, gpuUtilizationRatio, samplesPerSecond, lastStep, lastStepTs, largestBucketHeightPx,
                largestBucketWidthPx, gpuCount, powerWatts, ranks, mfuRatio, hfuRatio, goodputRatio, energyJoules,
                gpuHours, cost, wallSeconds, accountedSinceTs, null, null, null);
    }

    /** A view without efficiency figures. */
    public ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                        Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio, Double gpuUtilizationRatio,
                        Double samplesPerSecond, Long lastStep, Double lastStepTs, Integer largestBucketHeightPx,
                        Integer largestBucketWidthPx, int gpuCount, Double powerWatts,
                        List<RankView> ranks) {
        this(peakMemoryBytes, memoryUsedBytes, memoryTotalBytes, stepSeconds, dataWaitRatio, textEncoderRatio,
                vaeRatio, gpuUtilizationRatio, samplesPerSecond, lastStep, lastStepTs, largestBucketHeightPx,
                largestBucketWidthPx, gpuCount, powerWatts, ranks, null, null, null, null, null, null, null, null,
                null, null, null);
    }

    /** A view without a per-rank breakdown. */
    public ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                        Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio, Double gpuUtilizationRatio,
                        Double samplesPerSecond, Long lastStep, Double lastStepTs, Integer largestBucketHeightPx,
                        Integer largestBucketWidthPx, int gpuCount, Double powerWatts) {
        this(peakMemoryBytes, memoryUsedBytes, memoryTotalBytes, stepSeconds, dataWaitRatio, textEncoderRatio,
                vaeRatio, gpuUtilizationRatio, samplesPerSecond, lastStep, lastStepTs, largestBucketHeightPx,
                largestBucketWidthPx, gpuCount, powerWatts, null);
    }
}
