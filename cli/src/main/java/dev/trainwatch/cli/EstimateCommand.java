package dev.trainwatch.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.collector.history.CalibratingPredictor;
import dev.trainwatch.collector.history.Calibrator;
import dev.trainwatch.collector.history.HistoryException;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.Suggestion;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code trainwatch estimate}: what a run should cost, as a table or one JSON object. */
@Command(name = "estimate", mixinStandardHelpOptions = true,
        description = "Predict parameters, peak GPU memory (with a breakdown), step time, the largest batch that fits "
                + "and the single changes that help.")
final class EstimateCommand implements Callable<Integer> {

    @Mixin
    EstimateOptions options;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Calibrate with the finished runs a collector recorded in DIR (its --data-dir), as the"
                    + " collector does: the same numbers its page and alerts compare with. With --from-run: the"
                    + " history the run is read from (read-only).")
    Path dataDir;

    @Option(names = "--from-run", paramLabel = "RUN",
            description = "Re-price a run the collector observed (its spec and step time from --data-dir) on the GPU,"
                    + " GPU count and batch the other options give, anchored on what it measured.")
    String fromRun;

    @Option(names = "--compare-gpus", paramLabel = "ID,ID,...", split = ",",
            description = "A plan across GPUs, side by side: fits, largest batch, step time, time and cost to finish"
                    + " (with --total-steps or --images, and --gpu-hour-price).")
    List<String> compareGpus;

    @Option(names = "--gpu-hour-price", paramLabel = "PRICE",
            description = "What one GPU-hour costs, in your currency (one number, or by GPU id:"
                    + " a100-80gb=1.79,*=2): with --total-steps the estimate says what the whole run costs.")
    String gpuHourPrice;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws JsonProcessingException {
        if (fromRun != null || compareGpus != null) {
            return EstimatePlans.run(this);
        }
        RunSpec run = options.toRunSpec();
        if (run.model() == null) {
            throw new UserError(ExitCodes.USAGE, "no model given: use --model ID or --config FILE (see 'trainwatch models')");
        }
        if (run.gpu() == null) {
            throw new UserError(ExitCodes.USAGE, "no GPU given: use --gpu ID (see 'trainwatch gpus')");
        }
        PrintWriter out = spec.commandLine().getOut();
        Estimate estimate;
        String calibrationLine = null;
        if (dataDir == null) {
            estimate = options.catalog.estimator().estimate(run);
        } else {
            List<Path> catalogs = new ArrayList<>(options.catalog.files());
            if (Files.isRegularFile(dataDir.resolve("catalog.json"))) {
                catalogs.add(dataDir.resolve("catalog.json")); // as the collector with this data directory reads it
            }
            CalibratingPredictor predictor = calibrated(dataDir, CatalogOption.load(catalogs));
            estimate = predictor.estimate(run);
            calibrationLine = describeCalibration(predictor, estimate);
        }
        // A bucketed config (Open-Sora's bucket_config) gives a batch per bucket: that is a batch given.
        boolean batchDefaulted = run.batch() == null && (run.buckets() == null || run.buckets().isEmpty());
        if (!options.configNotes.isEmpty() || batchDefaulted) {
            List<String> notes = new ArrayList<>();
            if (batchDefaulted) {
                notes.add("no --batch given" + (options.config != null ? " and none in the config" : "")
                        + ": priced at batch " + estimate.spec().batch() + " per GPU; pass --batch N for yours");
            }
            notes.addAll(options.configNotes);
            notes.addAll(estimate.notes());
            estimate = estimate.withNotes(notes);
        }
        if (json) {
            out.println(Json.MAPPER.writeValueAsString(estimate));
        } else {
            printTable(out, estimate, CollectorOptions.gpuHourPrices(gpuHourPrice).price(estimate.gpu()));
            if (calibrationLine != null) {
                out.printf(Locale.ROOT, "%ncalibration       %s%n", calibrationLine);
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** The bundled estimator calibrated by the history in {@code dir}, exactly as the collector calibrates it. */
    private static CalibratingPredictor calibrated(Path dir, Estimator estimator) {
        RunHistoryReader.database(dir);
        CalibratingPredictor predictor = new CalibratingPredictor(estimator);
        try (HistoryStore store = HistoryStore.open(dir)) {
            predictor.recalibrate(Calibrator.factors(store));
        } catch (HistoryException e) {
            throw new UserError(ExitCodes.FAILURE, e.getMessage());
        }
        return predictor;
    }

    /** Whether this estimate is calibrated, and by how many runs; or why not. */
    static String describeCalibration(CalibratingPredictor predictor, Estimate e) {
        for (var f : predictor.factors()) {
            if (f.gpuId().equals(e.gpu()) && predictor.familyOf(e.model()).map(f.family()::equals).orElse(false)) {
                if (!f.applied()) {
                    return String.format(Locale.ROOT, "not calibrated: %d of the %d finished runs needed on %s/%s"
                                    + " agree (%d recorded)", f.usedRuns().size(),
                            Calibrator.MIN_RUNS, f.gpuId(), f.family(), f.runs());
                }
                return String.format(Locale.ROOT, "calibrated on %s/%s from %d finished run(s): step time x%.2f,"
                                + " memory x%.2f%s", f.gpuId(), f.family(), f.usedRuns().size(), f.stepTimeFactor(),
                        f.memoryFactor(), f.outlierRuns().isEmpty() ? ""
                                : " (outliers left out: " + String.join(", ", f.outlierRuns()) + ")");
            }
        }
        return "not calibrated: no finished run on " + e.gpu() + " of this model's family yet";
    }

    static String plainNumber(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    /** Host memory beside the GPU's, and the sampling (validation) phase's own peak, where many LoRA runs die. */
    static void printHostAndSampling(PrintWriter out, Estimate e) {
        if (e.samplingPeakMemoryBytes() > 0) {
            out.printf(Locale.ROOT, "sampling peak     %s of %s  %s (validation samples beside the training state)%n",
                    gb(e.samplingPeakMemoryBytes()), gb(e.gpuMemoryBytes()),
                    e.samplingPeakMemoryBytes() <= e.gpuMemoryBytes() ? "fits" : "DOES NOT FIT");
        }
        if (e.hostMemoryBytes() > 0) {
            Long pinned = e.hostBreakdown().get("pinned_swap_blocks");
            out.printf(Locale.ROOT, "host memory       %s peak%s%n", gb(e.hostMemoryBytes()),
                    pinned == null ? " (while loading the checkpoint)" : ", " + gb(pinned) + " of it pinned for swapped blocks");
        }
    }

    static void printTable(PrintWriter out, Estimate e, double pricePerGpuHour) {
        RunSpec s = e.spec();
        String size = s.resolution() != null ? s.resolution() + " px" : s.height() + "x" + s.width() + " px";
        String shape = String.format(Locale.ROOT, "batch %d per GPU at %s%s", s.batch(), size,
                s.frames() != null ? ", " + s.frames() + " frames" : "");
        if (s.buckets() != null && !s.buckets().isEmpty()) {
            shape = s.buckets().size() + " buckets (largest memory: " + shape + ")";
        }
        out.printf(Locale.ROOT, "%s on %d x %s, %s%n", e.model(), s.gpus(), e.gpu(), shape);
        String checkpointing = s.checkpointBlocks() != null
                ? "blocks " + s.checkpointBlocks().stream().map(String::valueOf).collect(Collectors.joining("+"))
                : onOff(s.gradCheckpointing());
        String features = s.textFeatures() != null ? "text " + s.textFeatures() + "/VAE " + s.vaeFeatures() : s.features();
        String weights = s.weights() == null || s.weights().equals("fp32") ? "" : ", " + s.weights() + " weights";
        boolean upcast = "fp32".equals(s.attentionPrecision()) && ("fp16".equals(s.precision()) || "bf16".equals(s.precision()));
        String extras = (s.gradAccumulation() > 1 ? ", " + s.gradAccumulation() + " accumulation steps" : "")
                + ("compiled".equals(s.kernels()) ? ", compiled kernels" : "")
                + (s.loraRank() != null ? ", LoRA rank " + s.loraRank() + " on " + String.join("/", s.loraTargets()) : "")
                + (s.loraRank() == null && s.loraTargets() != null ? ", training only " + String.join("/", s.loraTargets()) : "");
        extras += (s.baseWeights() != null ? ", " + s.baseWeights() + " base weights" : "")
                + (s.blocksToSwap() != null ? ", " + s.blocksToSwap() + " blocks swapped to host memory" : "");
        out.printf(Locale.ROOT, "  %s%s, %s, checkpointing %s, EMA %s, features %s, ZeRO %d, %s%s attention%s%n",
                s.precision(), weights, s.optimizer(), checkpointing, onOff(s.ema()), features, s.zero(),
                upcast ? "fp32 " : "", s.attention(), extras);
        out.printf(Locale.ROOT, "%nparameters        %,d (%,d trainable)%n", e.params(), e.trainableParams());
        out.printf(Locale.ROOT, "peak memory       %s of %s  %s%n", gb(e.peakMemoryBytes()), gb(e.gpuMemoryBytes()),
                e.fits() ? "fits" : "DOES NOT FIT");
        printHostAndSampling(out, e);
        out.printf(Locale.ROOT, "largest batch     %s%n", e.maxBatch() > 0 ? String.valueOf(e.maxBatch())
                : "none: even batch 1 does not fit");
        out.printf(Locale.ROOT, "step time         %.3f s  (%.2f samples/s over %d GPU%s)%n", e.stepSeconds(),
                e.samplesPerSecond(), s.gpus(), s.gpus() == 1 ? "" : "s");
        if (e.flops() != null) {
            double mfu = e.flops().modelUtilization(e.samplesPerSecond(), s.gpus());
            if (!Double.isNaN(mfu)) {
                out.printf(Locale.ROOT, "model FLOP use    %.1f%% of the GPUs' dense %s peak (MFU; the collector shows the"
                        + " run's own beside it)%n", 100 * mfu, e.flops().dtype());
            }
        }
        if (e.totalSeconds() != null) {
            double gpuHours = e.totalSeconds() * s.gpus() / 3600;
            out.printf(Locale.ROOT, "total time        %s for %,d steps, %,.0f GPU-hours%s%n", duration(e.totalSeconds()),
                    s.totalSteps(), gpuHours, Double.isNaN(pricePerGpuHour) ? ""
                            : String.format(Locale.ROOT, ", cost %,.0f at %s per GPU-hour", gpuHours * pricePerGpuHour,
                                    plainNumber(pricePerGpuHour)));
        }
        out.printf(Locale.ROOT, "%nmemory breakdown%n");
        for (Map.Entry<String, Long> term : e.breakdown().entrySet()) {
            out.printf(Locale.ROOT, "  %-24s %10s  %5.1f%%%n", term.getKey(), gb(term.getValue()),
                    100.0 * term.getValue() / e.peakMemoryBytes());
        }
        out.printf(Locale.ROOT, "%nstep time breakdown%n");
        Map<String, Double> steps = e.stepOperations() != null ? e.stepOperations() : e.stepBreakdown();
        for (Map.Entry<String, Double> term : steps.entrySet()) {
            out.printf(Locale.ROOT, "  %-24s %9.3f s  %5.1f%%%n", term.getKey(), term.getValue(),
                    100.0 * term.getValue() / e.stepSeconds());
        }
        if (e.why() != null && !e.why().isEmpty()) {
            out.printf(Locale.ROOT, "%nwhere the step goes%n");
            e.why().forEach(w -> out.println("  - " + w));
        }
        if (!e.notes().isEmpty()) {
            out.printf(Locale.ROOT, "%nnotes%n");
            e.notes().forEach(n -> out.println("  - " + n));
        }
        if (!e.suggestions().isEmpty()) {
            int gpus = e.spec().gpus() == null ? 1 : e.spec().gpus();
            out.printf(Locale.ROOT, "%nsuggestions (on %s first; plans that add GPUs last)%n",
                    gpus == 1 ? "your one GPU" : "your " + gpus + " GPUs");
            for (Suggestion x : e.suggestions()) {
                boolean givesUpSaid = x.givesUp() == null || x.change().contains("gives up")
                        || Suggestion.MORE_GPUS.equals(x.plan());
                out.printf(Locale.ROOT, "  - %s%n      -> peak %s, step %.3f s%s%n", x.change(), gb(x.newPeakMemoryBytes()),
                        x.newStepSeconds(), givesUpSaid ? "" : "; gives up " + x.givesUp());
            }
        }
    }

    private static String onOff(Boolean b) {
        return Boolean.TRUE.equals(b) ? "on" : "off";
    }

    static String gb(long bytes) {
        return String.format(Locale.ROOT, "%.2f GiB", bytes / (double) (1L << 30));
    }

    static String duration(double seconds) {
        long s = Math.round(seconds);
        long days = s / 86_400;
        long hours = s % 86_400 / 3600;
        long minutes = s % 3600 / 60;
        return days > 0 ? String.format(Locale.ROOT, "%dd %02dh %02dm", days, hours, minutes)
                : String.format(Locale.ROOT, "%dh %02dm", hours, minutes);
    }
}
