package dev.trainwatch.estimator;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A run priced at one batch size: peak bytes with their terms, step seconds with theirs. Immutable.
 *
 * @param peakBytes        predicted peak device memory
 * @param memory           bytes per memory term
 * @param stepSeconds      seconds per optimizer step
 * @param time             seconds per step-time term
 * @param samplesPerSecond over all data-parallel ranks
 * @param operations       the same step by kind of operation (gemm, attention, elementwise, encoders, …)
 */
record Costs(long peakBytes, Map<String, Long> memory, double stepSeconds, Map<String, Double> time,
        double samplesPerSecond, Map<String, Double> operations) {

    /** Prices a run at a batch with both models. */
    static Costs of(ResolvedRun r, int batch) {
        Map<String, Long> memory = MemoryModel.terms(r, batch);
        long peak = TrainerLevers.sum(memory);
        Map<String, Double> operations = new LinkedHashMap<>();
        Map<String, Double> time = StepTimeModel.terms(r, batch, operations);
        double step = 0;
        for (double v : time.values()) {
            step += v;
        }
        return new Costs(peak, Collections.unmodifiableMap(memory), step, Collections.unmodifiableMap(time),
                (double) batch * r.accumulation() * r.gpus() / step, Collections.unmodifiableMap(operations));
    }
}
