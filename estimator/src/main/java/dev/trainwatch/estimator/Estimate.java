package dev.trainwatch.estimator;

import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import java.util.Map;

/**
 * What a run should cost: the output of {@link Estimator#estimate(RunSpec)} and the {@code --json} object of
 * {@code trainwatch estimate}. Bytes are bytes, times seconds. Immutable.
 *
 * @param spec              the resolved spec (defaults filled in)
 * @param model             model id
 * @param gpu               GPU id
 * @param params            parameter count of the trained network
 * @param trainableParams   parameters that receive gradients
 * @param peakMemoryBytes   predicted peak device memory as NVML would show it
 * @param gpuMemoryBytes    device memory of the GPU
 * @param fits              peak below capacity
 * @param maxBatch          largest per-GPU batch that fits (0 when not even 1 fits)
 * @param stepSeconds       predicted seconds per optimizer step
 * @param samplesPerSecond  predicted throughput over all data-parallel ranks
 * @param breakdown         bytes per memory term ({@code weights}, {@code gradients}, {@code optimizer}, …)
 * @param stepBreakdown     seconds per step-time term ({@code compute}, {@code text_encoder}, …)
 * @param totalSeconds      predicted time for {@code spec.totalSteps()}, null when no total is given
 * @param suggestions       single changes that help, best first
 * @param notes             explanations worth showing with the numbers (e.g. why CAME costs more here)
 */
public record Estimate(
        RunSpec spec,
        String model,
        String gpu,
        long params,
        long trainableParams,
        long peakMemoryBytes,
        long gpuMemoryBytes,
        boolean fits,
        int maxBatch,
        double stepSeconds,
        double samplesPerSecond,
        Map<String, Long> breakdown,
        Map<String, Double> stepBreakdown,
        Double totalSeconds,
        List<Suggestion> suggestions,
        List<String> notes) {
}
