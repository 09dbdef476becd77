package dev.trainwatch.collector.testing;

import dev.trainwatch.collector.state.Predictor;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.estimator.Suggestion;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A hand-written predictor with simple, explicit arithmetic so tests can state expected numbers: peak memory
 * = base + perSample × batch × pixels/1024² (+ encoders when features are online), step time likewise.
 */
public final class FakePredictor implements Predictor {

    /** The fixed preset ({@link #fixed()}): the one model and GPU it knows, and its constant answers. */
    public static final String FIXED_MODEL = "pixart-sigma-xl-2";
    public static final String FIXED_GPU = "a100-80gb";
    public static final long FIXED_PEAK_BYTES = 40L << 30;
    public static final long FIXED_GPU_BYTES = 80L << 30;
    public static final double FIXED_STEP_SECONDS = 1.25;

    private final boolean fixed;

    /** The arithmetic preset: the numbers follow the public fields below. */
    public FakePredictor() {
        this(false);
    }

    private FakePredictor(boolean fixed) {
        this.fixed = fixed;
    }

    /**
     * The fixed preset, so HTTP, series and metric tests do not move when an estimate's arithmetic changes: one
     * model ({@value #FIXED_MODEL}) and one GPU ({@value #FIXED_GPU}), anything else refused as the real estimator
     * refuses an unknown id; a 40 GiB peak and a 1.25 s step whatever the batch.
     */
    public static FakePredictor fixed() {
        return new FakePredictor(true);
    }

    public static final long GIB = 1L << 30;
    public static final long A100_80GB = 80 * GIB;

    public double baseStepSeconds = 1.0;
    public double onlineEncodingSeconds = 1.5;
    public long basePeakBytes = 30 * GIB;
    public long perSampleBytes = GIB;
    public long onlineEncoderBytes = 10 * GIB;
    /**
     * FLOPs the GPU executes per sample at 1024 px (scaled with the pixels), 4/3 of the model's under gradient
     * checkpointing; NaN (the default) gives estimates without FLOPs. Peak: an A100's 312 TFLOP/s in bf16.
     */
    public double hardwareFlopsPerSample = Double.NaN;

    @Override
    public Estimate estimate(RunSpec in) {
        if (fixed) {
            return fixedEstimate(in);
        }
        if (in.model() == null || in.model().equals("no-such-model")) {
            throw new InvalidSpecException("unknown model '" + in.model() + "'");
        }
        String gpu = in.gpu() == null ? "a100-80gb" : in.gpu();
        RunSpec spec = in.overriddenBy(new RunSpec(null, gpu, in.gpus() == null ? 1 : null,
                in.batch() == null ? 8 : null, in.resolution() == null && in.height() == null ? 1024 : null,
                null, null, null, null, null, null, null, in.features() == null ? "precomputed" : null, null,
                null, null, null));
        double pixels = spec.height() != null && spec.width() != null ? (double) spec.height() * spec.width()
                : (double) spec.resolution() * spec.resolution();
        double scale = pixels / (1024.0 * 1024.0);
        boolean online = "online".equals(spec.features());
        long peak = peak(spec.batch(), scale, online);
        double step = baseStepSeconds * spec.batch() / 8.0 * scale + (online ? onlineEncodingSeconds : 0);
        int maxBatch = 0;
        while (peak(maxBatch + 1, scale, online) <= A100_80GB && maxBatch < 1024) {
            maxBatch++;
        }
        List<Suggestion> suggestions = new ArrayList<>();
        if (online) {
            suggestions.add(new Suggestion("precompute T5 and VAE features", onlineEncoderBytes,
                    peak - onlineEncoderBytes, step - onlineEncodingSeconds, Suggestion.SINGLE, List.of(), 0, true,
                    null));
        }
        Map<String, Long> breakdown = new LinkedHashMap<>();
        breakdown.put("weights", basePeakBytes);
        breakdown.put("activations", (long) (perSampleBytes * spec.batch() * scale));
        if (online) {
            breakdown.put("frozen_encoders", onlineEncoderBytes);
        }
        Map<String, Double> stepBreakdown = new LinkedHashMap<>();
        stepBreakdown.put("compute", step - (online ? onlineEncodingSeconds : 0));
        if (online) {
            stepBreakdown.put("text_encoder", onlineEncodingSeconds);
        }
        int dp = spec.gpus();
        Double total = spec.totalSteps() == null ? null : spec.totalSteps() * step;
        return new Estimate(spec, spec.model(), gpu, 600_000_000L, 600_000_000L, peak, A100_80GB,
                peak <= A100_80GB, maxBatch, step, spec.batch() * dp / step, breakdown, stepBreakdown, total,
                suggestions, List.of(), Double.isNaN(hardwareFlopsPerSample) ? null
                        : new Estimate.Flops(hardwareFlopsPerSample * scale
                                / (Boolean.TRUE.equals(spec.gradCheckpointing()) ? 4.0 / 3 : 1.0),
                                hardwareFlopsPerSample * scale, 312e12, "bf16"),
                null, List.of(), 0, Map.of(), 0, Map.of());
    }

    private static Estimate fixedEstimate(RunSpec spec) {
        if (spec.model() != null && !spec.model().equals(FIXED_MODEL)) {
            throw new InvalidSpecException("unknown model '" + spec.model() + "'; see 'trainwatch models'");
        }
        if (spec.gpu() != null && !spec.gpu().equals(FIXED_GPU)) {
            throw new InvalidSpecException("unknown GPU '" + spec.gpu() + "'; see 'trainwatch gpus'");
        }
        int batch = spec.batch() == null ? 8 : spec.batch();
        int gpus = spec.gpus() == null ? 1 : spec.gpus();
        Double total = spec.totalSteps() == null ? null : spec.totalSteps() * FIXED_STEP_SECONDS;
        return new Estimate(spec, FIXED_MODEL, FIXED_GPU, 611_000_000L, 611_000_000L, FIXED_PEAK_BYTES,
                FIXED_GPU_BYTES, true, 20, FIXED_STEP_SECONDS, batch * gpus / FIXED_STEP_SECONDS,
                Map.of("weights", 2_444_000_000L), Map.of("compute", 1.0), total, List.of(), List.of(), null, null,
                List.of(), 0, Map.of(), 0, Map.of());
    }

    private long peak(int batch, double scale, boolean online) {
        return basePeakBytes + (long) (perSampleBytes * batch * scale) + (online ? onlineEncoderBytes : 0);
    }

    @Override
    public Optional<String> resolveGpuId(String deviceName) {
        if (fixed) {
            return deviceName != null && deviceName.contains("A100") ? Optional.of(FIXED_GPU) : Optional.empty();
        }
        return deviceName != null && deviceName.contains("A100") && deviceName.contains("80GB")
                ? Optional.of("a100-80gb") : Optional.empty();
    }

    @Override
    public OptionalInt latentDownsample(String modelId) {
        if (fixed) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(modelId.startsWith("sana") ? 32 : 8);
    }
}
