package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Units.gb;

import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * A multi-bucket run (Open-Sora's {@code bucket_config}): memory, largest batch and suggestions are the largest
 * bucket's, the step time the mean over buckets weighted by their share. Stateless.
 */
final class BucketPricing {

    /** More buckets than any real bucket_config has; keeps one spec's price bounded. */
    static final int MAX_BUCKETS = 64;

    private BucketPricing() {
    }

    /** One bucket as priced: its spec, its resolved run, its costs and its weight. */
    private record Priced(RunSpec spec, ResolvedRun run, Costs costs, double weight) {
    }

    /** {@code estimate} prices in full the one bucket that decides whether the run fits. */
    static Estimate estimate(RunSpec spec, Function<RunSpec, ResolvedRun> resolve, Function<RunSpec, Estimate> estimate) {
        List<RunSpec.Bucket> buckets = spec.buckets();
        if (buckets.size() > MAX_BUCKETS) {
            throw new InvalidSpecException("at most " + MAX_BUCKETS + " buckets, got " + buckets.size());
        }
        // Each bucket is priced (memory and step time); only the one that decides whether the run fits gets the
        // full treatment (largest batch, suggestions, notes), so many buckets stay cheap.
        List<Priced> priced = price(spec, resolve);
        // The first of the buckets with the largest peak.
        Estimate worst = estimate.apply(priced.stream().max(Comparator.comparingLong(p -> p.costs().peakBytes()))
                .orElseThrow().spec());
        double weightSum = 0;
        for (Priced p : priced) {
            weightSum += p.weight();
        }
        double step = 0;
        double samples = 0;
        double modelFlops = 0;
        double hardwareFlops = 0;
        Map<String, Double> stepBreakdown = new LinkedHashMap<>();
        Map<String, Double> operations = new LinkedHashMap<>();
        for (Priced p : priced) {
            Costs c = p.costs();
            Estimate.Flops f = StepTimeModel.flops(p.run());
            double share = p.weight() / weightSum;
            double bucketSamples = share * c.samplesPerSecond() * c.stepSeconds();
            step += share * c.stepSeconds();
            samples += bucketSamples;
            modelFlops += bucketSamples * f.modelPerSample();
            hardwareFlops += bucketSamples * f.hardwarePerSample();
            c.time().forEach((k, v) -> stepBreakdown.merge(k, share * v, Double::sum));
            c.operations().forEach((k, v) -> operations.merge(k, share * v, Double::sum));
        }
        // FLOPs per sample averaged over the samples the buckets train on, so MFU over the mean step stays right.
        Estimate.Flops flops = new Estimate.Flops(modelFlops / samples, hardwareFlops / samples,
                worst.flops().peakPerGpu(), worst.flops().dtype());
        RunSpec resolved = worst.spec().withRegime(worst.spec().textFeatures(), worst.spec().vaeFeatures(),
                worst.spec().weights(), worst.spec().checkpointBlocks(), worst.spec().vaeMicroBatch(), List.copyOf(buckets));
        Double total = spec.totalSteps() == null ? null : step * spec.totalSteps();
        return new Estimate(resolved, worst.model(), worst.gpu(), worst.params(), worst.trainableParams(),
                worst.peakMemoryBytes(), worst.gpuMemoryBytes(), worst.fits(), worst.maxBatch(), step, samples / step,
                worst.breakdown(), Collections.unmodifiableMap(stepBreakdown), total, worst.suggestions(),
                notes(priced, worst, step), flops, Collections.unmodifiableMap(operations), worst.why(),
                worst.hostMemoryBytes(), worst.hostBreakdown(), worst.samplingPeakMemoryBytes(), worst.samplingBreakdown());
    }

    /** Every bucket resolved and priced at its batch, in the spec's order. */
    private static List<Priced> price(RunSpec spec, Function<RunSpec, ResolvedRun> resolve) {
        RunSpec base = spec.withRegime(spec.textFeatures(), spec.vaeFeatures(), spec.weights(), spec.checkpointBlocks(),
                spec.vaeMicroBatch(), null);
        List<Priced> priced = new ArrayList<>();
        for (RunSpec.Bucket bucket : spec.buckets()) {
            if (bucket == null) {
                throw new InvalidSpecException("a bucket is empty");
            }
            double w = bucket.weight() == null ? 1.0 : bucket.weight();
            if (!(w > 0) || !Double.isFinite(w)) {
                throw new InvalidSpecException("bucket weight must be above 0, got " + bucket.weight());
            }
            Integer h = bucket.height() != null ? bucket.height() : spec.height() != null ? spec.height() : spec.resolution();
            Integer wd = bucket.width() != null ? bucket.width() : spec.width() != null ? spec.width() : spec.resolution();
            Integer batch = bucket.batch() != null ? bucket.batch() : spec.batch();
            Integer frames = bucket.frames() != null ? bucket.frames() : spec.frames();
            RunSpec one = (h == null || wd == null) ? base.withShape(batch, spec.resolution(), null, null, frames)
                    : base.withShape(batch, null, h, wd, frames);
            ResolvedRun run = resolve.apply(one);
            priced.add(new Priced(one, run, Costs.of(run, run.batch()), w));
        }
        return priced;
    }

    /** The three largest buckets by memory, what the figures are for, then the largest bucket's own notes. */
    private static List<String> notes(List<Priced> priced, Estimate worst, double step) {
        List<Priced> byMemory = new ArrayList<>(priced);
        byMemory.sort(Comparator.comparingLong((Priced p) -> p.costs().peakBytes()).reversed());
        StringBuilder line = new StringBuilder(priced.size() + " buckets priced; largest memory first:");
        for (int k = 0; k < Math.min(3, byMemory.size()); k++) {
            Priced p = byMemory.get(k);
            line.append(k == 0 ? " " : "; ").append(describeBucket(p.run().resolvedSpec())).append(" batch ")
                    .append(p.run().batch()).append(' ').append(gb(p.costs().peakBytes()))
                    .append(String.format(Locale.ROOT, " %.2f s", p.costs().stepSeconds()));
        }
        if (byMemory.size() > 3) {
            line.append("; ").append(byMemory.size() - 3).append(" more");
        }
        List<String> notes = new ArrayList<>();
        notes.add(line.toString());
        notes.add(String.format(Locale.ROOT,
                "memory, largest batch and suggestions (their step times too) are for the largest bucket (%s); the step time %.2f s is the mean over buckets weighted by their share",
                describeBucket(worst.spec()), step));
        notes.addAll(worst.notes());
        return List.copyOf(notes);
    }

    private static String describeBucket(RunSpec s) {
        String size = s.resolution() != null ? s.resolution() + "x" + s.resolution() : s.height() + "x" + s.width();
        return s.frames() != null ? size + "x" + s.frames() + "f" : size;
    }
}
