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
 * @param flops             what one sample costs in floating-point operations and what one GPU can do: the basis of
 *                          model and hardware FLOP utilisation (null from predictors that do not count FLOPs)
 * @param stepOperations    seconds per step by kind of operation ({@code gemm}, {@code attention}, {@code elementwise},
 *                          {@code text_encoder}, {@code vae_encoder}, {@code optimizer}, {@code ema},
 *                          {@code allreduce}); null from predictors that do not price operations
 * @param why               the step's largest terms, each with what would save it, largest first (empty when unknown)
 * @param hostMemoryBytes   predicted peak host (CPU) memory of one training process: runtime, the checkpoint read at
 *                          start, pinned copies of swapped blocks; 0 from predictors that do not price it
 * @param hostBreakdown     bytes per host memory term ({@code process_runtime}, {@code checkpoint_load},
 *                          {@code pinned_swap_blocks})
 * @param samplingPeakMemoryBytes predicted device memory while the trainer samples (validation images or videos at
 *                          the training size beside the training state); 0 when not priced
 * @param samplingBreakdown bytes per term of that peak
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
        List<String> notes,
        Flops flops,
        Map<String, Double> stepOperations,
        List<String> why,
        long hostMemoryBytes,
        Map<String, Long> hostBreakdown,
        long samplingPeakMemoryBytes,
        Map<String, Long> samplingBreakdown) {

    /** The same estimate with other notes (e.g. a config reader's lines first). */
    public Estimate withNotes(List<String> newNotes) {
        return new Estimate(spec, model, gpu, params, trainableParams, peakMemoryBytes, gpuMemoryBytes, fits, maxBatch,
                stepSeconds, samplesPerSecond, breakdown, stepBreakdown, totalSeconds, suggestions, List.copyOf(newNotes),
                flops, stepOperations, why, hostMemoryBytes, hostBreakdown, samplingPeakMemoryBytes, samplingBreakdown);
    }

    /**
     * FLOPs per training sample and the GPU's dense peak for the run's dtype.
     *
     * @param modelPerSample    model FLOPs of one sample's training step: 3 × forward (forward, and backward at
     *                          twice the forward), the trained network only (no frozen encoders); what MFU counts
     * @param hardwarePerSample FLOPs the GPU really executes per sample: model FLOPs plus the forward passes
     *                          recomputed under gradient checkpointing; what HFU counts
     * @param peakPerGpu        dense (no 2:4 sparsity) peak FLOP/s of one GPU in the dtype the matmuls run in
     * @param dtype             that dtype: {@code fp32}, {@code tf32}, {@code fp16}, {@code bf16}
     */
    public record Flops(double modelPerSample, double hardwarePerSample, double peakPerGpu, String dtype) {

        /** The share of {@code gpus} GPUs' peak that {@code samplesPerSecond} uses in model FLOPs; NaN if unknown. */
        public double modelUtilization(double samplesPerSecond, int gpus) {
            return utilization(modelPerSample, samplesPerSecond, gpus);
        }

        /** The same in executed (hardware) FLOPs. */
        public double hardwareUtilization(double samplesPerSecond, int gpus) {
            return utilization(hardwarePerSample, samplesPerSecond, gpus);
        }

        private double utilization(double perSample, double samplesPerSecond, int gpus) {
            if (!(samplesPerSecond > 0) || gpus <= 0 || !(peakPerGpu > 0) || !(perSample > 0)) {
                return Double.NaN;
            }
            return perSample * samplesPerSecond / (gpus * peakPerGpu);
        }
    }
}
