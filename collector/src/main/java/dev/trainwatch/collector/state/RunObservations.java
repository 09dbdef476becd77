package dev.trainwatch.collector.state;

import static dev.trainwatch.collector.detect.WindowStats.mean;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.collector.detect.RankSeries;
import dev.trainwatch.collector.detect.Stats;
import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.collector.state.view.ComparisonView;
import dev.trainwatch.collector.state.view.HostMemoryView;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RankView;
import dev.trainwatch.collector.state.view.RunGpuView;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.state.window.GpuWindow;
import dev.trainwatch.collector.state.window.HostMemoryWindow;
import dev.trainwatch.collector.state.window.RankWindows;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunEnding;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.stream.IntStream;

/**
 * What a run is observed to do, derived from the fleet's live state: the run view, the comparison with the
 * prediction, efficiency figures and the history summary. Only called under the {@link Fleet}'s lock.
 */
final class RunObservations {
    private final Predictor predictor;
    private final double windowSeconds;
    /** Views report utilisation and clocks over this recent span. */
    static final double RECENT_SECONDS = 60;
    /** A spec without any data this long gets an identity hint (view, page, log). */
    static final double UNMATCHED_AFTER_SECONDS = 60;

    private final Registry registry;
    private GpuHourPrices prices = GpuHourPrices.NONE;

    RunObservations(Predictor predictor, Registry registry) {
        this.predictor = predictor;
        this.windowSeconds = registry.windowSeconds;
        this.registry = registry;
    }

    void prices(GpuHourPrices newPrices) {
        prices = Objects.requireNonNull(newPrices);
    }

    /** Seconds of each step's data time that are online encoding by the prediction (PixArt's); 0 when precomputed. */
    double encodingSecondsPerStep(RunState run) {
        Estimate e = run.estimate();
        if (e == null || e.stepBreakdown() == null) {
            return 0;
        }
        return e.stepBreakdown().getOrDefault("text_encoder", 0.0) + e.stepBreakdown().getOrDefault("vae_encoder", 0.0);
    }

    RunView view(RunState run, double now) {
        List<GpuState> gs = registry.runGpus(run);
        ObservedView observed = observed(run, gs, now);
        ComparisonView comparison = comparison(run, observed);
        List<RunGpuView> gpuViews = new ArrayList<>(gs.size());
        double recent = now - RECENT_SECONDS;
        for (GpuState g : gs) {
            GpuWindow w = g.window;
            RunState.HostPart part = run.hosts().get(w.host());
            List<Integer> ranks = part == null ? List.of() : part.ranksByGpu.getOrDefault(w.uuid(), List.of());
            RunGpuView.Process process = null;
            if (part != null) {
                for (Map.Entry<Integer, RunState.RankProc> e : part.procs.entrySet()) {
                    RunState.RankProc p = e.getValue();
                    if (w.uuid().equals(p.gpuUuid)) {
                        process = new RunGpuView.Process(e.getKey(), p.pid, p.state, nan(p.cpuRate(30)),
                                toLong(p.rss), p.workers >= 0 ? p.workers : null, toLong(p.workersRss));
                        break;
                    }
                }
            }
            Double gpuPower = g.latest != null && g.latest.powerWatts() != null && Double.isFinite(g.latest.powerWatts())
                    ? g.latest.powerWatts() : null;
            gpuViews.add(new RunGpuView(w.uuid(), w.host(), w.index(), w.name(), List.copyOf(ranks),
                    toLong(WindowStats.latestMemory(w)), toLong(w.memoryTotalBytes()), toLong(w.peakMemory()),
                    nan(mean(w, recent, Reading.UTILIZATION)),
                    nan(mean(w, recent, Double.POSITIVE_INFINITY, w::clockRatio)), w.lost(), gpuPower, process,
                    nan(mean(w, recent, Reading.SM_ACTIVE)), nan(mean(w, recent, Reading.TENSOR_ACTIVE)),
                    nan(mean(w, recent, Reading.DRAM_ACTIVE)), nan(mean(w, recent, Reading.NVLINK_BYTES_PER_S))));
        }
        gpuViews.sort(Comparator.comparing(RunGpuView::host, Comparator.nullsLast(Comparator.naturalOrder()))
                .thenComparingInt(RunGpuView::index));
        return new RunView(run.runId(), run.estimate() != null ? run.estimate().spec() : run.registeredSpec(),
                run.estimate(), observed, comparison, run.tracker().snapshot(), gpuViews,
                List.copyOf(run.hosts().keySet()), run.firstSeen(), run.lastSeen(), run.ended(), nan(run.endedAt()),
                run.synthetic() ? Boolean.TRUE : null, unmatched(run, now), hostMemoryOf(run), ending(run),
                run.phaseKind() == null || run.ended() || run.phaseTs() < run.lastCountedTs() ? null
                        : new RunView.Phase(run.phaseKind(), run.phaseTs(), run.phaseProgress()));
    }

    /** How an ended run ended: stopped by its user, or without a cause in its log (and where to look). */
    static RunView.Ending ending(RunState run) {
        if (run.ended() && run.stoppedBy() != null) {
            return new RunView.Ending("was stopped by its user (" + run.stoppedBy()
                    + ", received by trainwatch and passed on to the command)", null, null, null);
        }
        RunEnding e = run.ending();
        if (!run.ended() || e == null || e.causeInLog() || run.failure() != null) {
            return null;
        }
        List<String> outputs = e.outputs() == null ? List.of() : e.outputs();
        StringBuilder m = new StringBuilder("ended without a cause in the log");
        m.append(e.log() != null ? " (" + e.log() + ")" : " (no log was read)");
        if (!outputs.isEmpty()) {
            m.append("; if it did not finish, its traceback went to its output: ").append(String.join(", ", outputs))
                    .append(" — point --log at ").append(outputs.size() == 1 ? "it" : "the one that holds it");
        } else {
            m.append("; if it did not finish, its traceback went to its processes' stderr (a terminal or a pipe): "
                    + "save that output to a file and point --log at it");
        }
        return new RunView.Ending(m.toString(), e.log(), e.lastLine(), outputs.isEmpty() ? null : List.copyOf(outputs));
    }

    private List<HostMemoryView> hostMemoryOf(RunState run) {
        List<HostMemoryView> out = run.hosts().keySet().stream().map(registry::hostMemory)
                .filter(w -> w != null && w.size() > 0).map(RunObservations::hostMemory).toList();
        return out.isEmpty() ? null : out;
    }

    /** A spec nothing has reported for {@link #UNMATCHED_AFTER_SECONDS}: which runs the agents do report. */
    RunView.Unmatched unmatched(RunState run, double now) {
        if (run.registeredSpec() == null || run.ended() || Slots.observed(run)
                || now - run.firstSeen() < UNMATCHED_AFTER_SECONDS) {
            return null;
        }
        List<String> ids = registry.runs().stream()
                .filter(other -> other != run && !other.ended() && other.registeredSpec() == null && Slots.observed(other))
                .sorted(Comparator.comparingDouble((RunState r) -> r.lastSeen()).reversed()).limit(10)
                .map(r -> r.runId()).toList();
        String waited = now - run.firstSeen() < 120 ? "a minute" : Math.round((now - run.firstSeen()) / 60) + " minutes";
        String message = ids.isEmpty()
                ? "nothing has reported run '" + run.runId() + "' in " + waited + " since its spec, and no agent reports "
                        + "a run without a spec either: is the agent running and pointed at this collector?"
                : "nothing has reported run '" + run.runId() + "' in " + waited + " since its spec, while "
                        + String.join(", ", ids.stream().map(id -> "'" + id + "'").toList())
                        + (ids.size() == 1 ? " reports" : " report") + " data without a spec: register the spec under "
                        + "that id, or start the agent with --run-id " + run.runId();
        return new RunView.Unmatched(Math.round(now - run.firstSeen()), ids, message);
    }

    private ObservedView observed(RunState run, List<GpuState> gs, double now) {
        double fromSteps = now - windowSeconds;
        double recent = now - RECENT_SECONDS;
        GpuFigures g = new GpuFigures(gs);
        StepSeries steps = run.steps();
        double stepSeconds = WindowStats.medianStepSeconds(steps, fromSteps);
        Integer bucketH = null;
        Integer bucketW = null;
        if (run.largestBucketCells() > 0) {
            int f = latentDownsample(run).orElse(0);
            if (f > 0) {
                bucketH = run.largestBucketHeight() * f;
                bucketW = run.largestBucketWidth() * f;
            }
        }
        double samplesPerSecond = samplesPerSecond(run, stepSeconds, fromSteps);
        int dataParallel = dataParallel(run, gs.size());
        Estimate.Flops flops = run.estimate() != null ? run.estimate().flops() : null;
        double mfu = flops == null ? Double.NaN : flops.modelUtilization(samplesPerSecond, dataParallel);
        double hfu = flops == null ? Double.NaN : flops.hardwareUtilization(samplesPerSecond, dataParallel);
        // More model FLOPs per second than the GPUs can do: the spec is not this run, and its figures are not shown.
        String specMismatch = null;
        if (mfu > 1.0) {
            specMismatch = String.format(Locale.ROOT, "the run is faster than its GPUs could be under the "
                    + "registered spec (%.0f%% of their peak in model FLOPs): the spec does not match the run (model, "
                    + "batch, resolution or GPUs), so its prediction does not apply; register the spec the run really "
                    + "uses", mfu * 100);
            mfu = Double.NaN;
            hfu = Double.NaN;
        }
        double until = accountedUntil(run, now);
        RunAccounting acc = run.accounting();
        Map<String, Double> wall = new LinkedHashMap<>();
        acc.wallSeconds(until).forEach((reason, secs) -> wall.put(reason.label, Math.round(secs * 10) / 10.0));
        double gpuHours = acc.gpuSeconds() / 3600;
        double price = prices.price(gpuId(run));
        return new ObservedView(toLong(run.peakMemory()), toLong(g.fullestUsed), toLong(g.fullestTotal),
                nan(stepSeconds), stepShare(run, fromSteps, WindowStats.StepPart.DATA),
                stepShare(run, fromSteps, WindowStats.StepPart.TEXT_ENCODER),
                stepShare(run, fromSteps, WindowStats.StepPart.VAE),
                nan(meanOver(gs, recent, Reading.UTILIZATION)), nan(samplesPerSecond),
                run.lastStep() >= 0 ? run.lastStep() : null, nan(run.lastStepTs()), bucketH, bucketW, gs.size(),
                g.anyPower ? g.power : null, rankViews(run, fromSteps), nan(mfu), nan(hfu),
                nan(acc.goodput(until)), nan(acc.energyJoules()), gpuHours, nan(gpuHours * price),
                wall.isEmpty() ? null : wall, acc.start(), nan(run.losses().newestFinite()),
                run.losses().newestNonFinite() ? Boolean.TRUE : null,
                run.losses().nonFiniteLossReports() > 0 ? run.losses().nonFiniteLossReports() : null, specMismatch,
                nan(meanOver(gs, recent, Reading.SM_ACTIVE)), nan(meanOver(gs, fromSteps, Reading.TENSOR_ACTIVE)));
    }

    /** What a run's GPUs say together: the fullest one's memory, total power. */
    private static final class GpuFigures {
        double fullestUsed = Double.NaN;
        double fullestTotal = Double.NaN;
        double fullestHeadroom = Double.POSITIVE_INFINITY;
        double power;
        boolean anyPower;

        GpuFigures(List<GpuState> gs) {
            for (GpuState g : gs) {
                double used = WindowStats.latestMemory(g.window);
                double total = g.window.memoryTotalBytes();
                if (!Double.isNaN(used)) {
                    double headroom = Double.isNaN(total) ? Double.POSITIVE_INFINITY : total - used;
                    if (Double.isNaN(fullestUsed) || headroom < fullestHeadroom
                            || (headroom == fullestHeadroom && used > fullestUsed)) {
                        fullestUsed = used;
                        fullestTotal = total;
                        fullestHeadroom = headroom;
                    }
                }
                if (g.latest != null && g.latest.powerWatts() != null && Double.isFinite(g.latest.powerWatts())) {
                    power += g.latest.powerWatts();
                    anyPower = true;
                }
            }
        }
    }

    /** The end of the run's accounted time: now, or when it ended. */
    static double accountedUntil(RunState run, double now) {
        return run.ended() && !Double.isNaN(run.endedAt()) ? Math.min(now, run.endedAt()) : now;
    }

    /** Data-parallel GPUs: the spec's, else the GPUs attributed to the run. */
    private static int dataParallel(RunState run, int attributed) {
        if (run.estimate() != null && run.estimate().spec() != null && run.estimate().spec().gpus() != null) {
            return run.estimate().spec().gpus();
        }
        return attributed;
    }

    /** The estimator's id of the run's GPU (what prices are keyed by), null when unknown. */
    private static String gpuId(RunState run) {
        return run.estimate() != null ? run.estimate().gpu() : run.registeredSpec() != null ? run.registeredSpec().gpu() : null;
    }

    /** Each rank's own reports in the window, when at least two ranks have some; else null. */
    private static List<RankView> rankViews(RunState run, double fromTs) {
        RankWindows ranks = run.ranks();
        if (ranks == null || ranks.count() < 2) {
            return null;
        }
        List<RankView> out = new ArrayList<>(ranks.count());
        for (int k = 0; k < ranks.count(); k++) {
            StepSeries s = ranks.steps(k);
            int reports = WindowStats.reports(s, fromTs);
            if (reports == 0) {
                continue;
            }
            int rank = ranks.rank(k);
            out.add(new RankView(rank, rank == ranks.lead() ? Boolean.TRUE : null, reports,
                    nan(WindowStats.meanStepSeconds(s, fromTs)),
                    nan(WindowStats.stepShare(s, fromTs, WindowStats.StepPart.DATA)),
                    nan(WindowStats.stepShare(s, fromTs, WindowStats.StepPart.TEXT_ENCODER)),
                    nan(WindowStats.stepShare(s, fromTs, WindowStats.StepPart.VAE)), s.step(s.size() - 1),
                    s.ts(s.size() - 1)));
        }
        return out.size() >= 2 ? List.copyOf(out) : null;
    }

    /** Samples per second over all ranks: from the reports' sample counts, else the spec's global batch. */
    private double samplesPerSecond(RunState run, double stepSeconds, double fromTs) {
        if (!(stepSeconds > 0)) {
            return Double.NaN;
        }
        StepSeries s = run.steps();
        double perStep = Stats.median(IntStream.range(s.firstIndexAtOrAfter(fromTs), s.size()).mapToDouble(s::samples)
                .filter(v -> !Double.isNaN(v)).toArray());
        if (Double.isNaN(perStep)) {
            perStep = specSamplesPerStep(run);
        }
        return perStep / stepSeconds;
    }

    /** Samples per step over all ranks by the spec, NaN when it does not say: the fallback for reports without one. */
    static double specSamplesPerStep(RunState run) {
        if (run.estimate() == null || run.estimate().spec() == null || run.estimate().spec().batch() == null) {
            return Double.NaN;
        }
        RunSpec s = run.estimate().spec();
        int dp = s.gpus() != null ? s.gpus() : 1;
        int accumulation = s.gradAccumulation() != null ? s.gradAccumulation() : 1;
        return (double) s.batch() * dp * accumulation;
    }

    private ComparisonView comparison(RunState run, ObservedView o) {
        Estimate e = run.estimate();
        Long headroom = o.memoryUsedBytes() != null && o.memoryTotalBytes() != null
                ? o.memoryTotalBytes() - o.memoryUsedBytes() : null;
        if (e == null) {
            return new ComparisonView(null, null, null, null, headroom, o.memoryTotalBytes(), null, null, null,
                    null, null, null, null, null);
        }
        Double stepRatio = o.stepSeconds() != null && e.stepSeconds() > 0 ? o.stepSeconds() / e.stepSeconds() : null;
        Double memoryRatio = o.peakMemoryBytes() != null && e.peakMemoryBytes() > 0
                ? (double) o.peakMemoryBytes() / e.peakMemoryBytes() : null;
        Double throughputRatio = o.samplesPerSecond() != null && e.samplesPerSecond() > 0
                ? o.samplesPerSecond() / e.samplesPerSecond() : null;
        Long remaining = null;
        Double eta = null;
        Long total = e.spec() != null ? e.spec().totalSteps() : null;
        if (total == null && run.registeredSpec() != null) {
            total = run.registeredSpec().totalSteps();
        }
        if (total != null) {
            long last = Math.max(0, run.lastStep());
            remaining = Math.max(0, total - last);
            double perStep = o.stepSeconds() != null ? o.stepSeconds() : e.stepSeconds();
            eta = remaining * perStep;
        }
        Long capacity = o.memoryTotalBytes() != null ? o.memoryTotalBytes() : e.gpuMemoryBytes() > 0 ? e.gpuMemoryBytes() : null;
        int dataParallel = dataParallel(run, o.gpuCount());
        Double predictedMfu = e.flops() == null ? null
                : nan(e.flops().modelUtilization(e.samplesPerSecond(), dataParallel));
        Double projectedGpuHours = null;
        Double projectedEnergy = null;
        Double projectedCost = null;
        if (eta != null && !run.ended()) {
            int held = o.gpuCount() > 0 ? o.gpuCount() : dataParallel;
            projectedGpuHours = (o.gpuHours() != null ? o.gpuHours() : 0) + eta * held / 3600;
            if (o.energyJoules() != null && o.powerWatts() != null) {
                projectedEnergy = o.energyJoules() + eta * o.powerWatts();
            }
            projectedCost = nan(projectedGpuHours * prices.price(gpuId(run)));
        }
        return new ComparisonView(e.stepSeconds(), stepRatio, e.peakMemoryBytes(), memoryRatio, headroom, capacity,
                e.samplesPerSecond(), throughputRatio, remaining, eta, predictedMfu, projectedGpuHours, projectedEnergy,
                projectedCost);
    }

    /** The run's summary for listeners (the history), its numbers computed as in {@link #view}. */
    RunSummary summarize(RunState run, double now) {
        List<GpuState> gs = registry.runGpus(run);
        double fromSteps = now - windowSeconds;
        double stepSeconds = WindowStats.medianStepSeconds(run.steps(), fromSteps);
        Estimate e = run.estimate();
        return new RunSummary(run.runId(), run.registeredSpec(), run.firstSeen(), run.lastSeen(), run.ended(),
                nan(run.endedAt()), run.lastStep() >= 0 ? run.lastStep() : null, nan(run.lastStepTs()), nan(stepSeconds),
                e != null ? e.stepSeconds() : null, toLong(run.peakMemory()), e != null ? e.peakMemoryBytes() : null,
                nan(meanOver(gs, now - RECENT_SECONDS, Reading.UTILIZATION)),
                nan(samplesPerSecond(run, stepSeconds, fromSteps)),
                List.copyOf(run.hosts().keySet()), List.copyOf(run.gpuUuids()), run.tracker().snapshot(),
                run.synthetic() ? Boolean.TRUE : null,
                stepShare(run, fromSteps, WindowStats.StepPart.DATA),
                stepShare(run, fromSteps, WindowStats.StepPart.TEXT_ENCODER),
                stepShare(run, fromSteps, WindowStats.StepPart.VAE));
    }

    /** The share of the run's steps since {@code fromTs} spent in {@code part}, by all its ranks' reports. */
    private static Double stepShare(RunState run, double fromTs, WindowStats.StepPart part) {
        return nan(WindowStats.stepShare(run.steps(), run.ranks() != null ? run.ranks() : RankSeries.NONE, fromTs, part));
    }

    /** Mean over the run's GPUs of each one's mean reading {@code r} since {@code fromTs}; NaN when none has any. */
    private static double meanOver(List<GpuState> gs, double fromTs, Reading r) {
        double sum = 0;
        int n = 0;
        for (GpuState g : gs) {
            double u = mean(g.window, fromTs, r);
            if (!Double.isNaN(u)) {
                sum += u;
                n++;
            }
        }
        return n > 0 ? sum / n : Double.NaN;
    }

    OptionalInt latentDownsample(RunState run) {
        String model = run.estimate() != null ? run.estimate().model()
                : run.registeredSpec() != null ? run.registeredSpec().model() : null;
        return model == null ? OptionalInt.empty() : predictor.latentDownsample(model);
    }

    static Double nan(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : v;
    }

    static HostMemoryView hostMemory(HostMemoryWindow w) {
        int n = w.size() - 1;
        return new HostMemoryView(w.host(), toLong(w.memAvailableBytes(n)), toLong(w.memTotalBytes(n)),
                toLong(w.shmUsedBytes(n)), toLong(w.shmTotalBytes(n)), w.ts(n));
    }

    static Long toLong(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v);
    }
}
