package dev.trainwatch.collector.series;

import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.SeriesSource;
import java.util.Objects;
import java.util.Optional;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import static dev.trainwatch.collector.state.window.GpuWindow.maxNan;
import static dev.trainwatch.collector.state.window.GpuWindow.minNan;

/**
 * Turns a run's rolling windows (its step reports and its GPUs' entries) into a {@link RunSeries}: each series
 * downsampled to at most {@code maxPoints}, and the run as a whole on one time axis. Pure function, linear in the
 * entries read; it runs on copies of the windows taken under the fleet's lock, after the lock is released.
 */
public final class SeriesBuilder {

    /** A GPU that sent nothing in a point's span still counts with a reading at most this old. */
    public static final double GPU_HOLD_SECONDS = 30;
    /** Step figures hold the latest report for at least this long (else three report gaps). */
    public static final double MIN_STEP_HOLD_SECONDS = 30;
    /** GPUs listed with their own series; the run's points aggregate all of them regardless. */
    public static final int MAX_GPU_TRACKS = 64;
    /** Points over all listed GPU series together (each gets its share, at least {@link #MIN_TRACK_POINTS}). */
    public static final int MAX_GPU_POINTS = 8_192;
    static final int MIN_TRACK_POINTS = SeriesRequest.MIN_POINTS;

    private SeriesBuilder() {
    }

    /** Empty when the run is unknown. */
    public static Optional<RunSeries> series(Fleet fleet, String runId, SeriesRequest request) {
        return copy(fleet, runId, request).map(source -> build(source, request));
    }

    /** The build's input, copied from the fleet (the only part of a build that holds its lock). */
    public static Optional<SeriesSource> copy(Fleet fleet, String runId, SeriesRequest request) {
        Objects.requireNonNull(request, "request");
        return fleet.seriesSource(runId, firstSeen -> gpuReadFromTs(request, firstSeen));
    }

    /** The earliest GPU entry a build reads: {@code since} less {@link #GPU_HOLD_SECONDS}, not before gpuFromTs. */
    public static double gpuReadFromTs(SeriesRequest request, double gpuFromTs) {
        double from = request.sinceTs() == null ? Double.NEGATIVE_INFINITY : request.sinceTs();
        return Math.max(gpuFromTs, from - GPU_HOLD_SECONDS);
    }

    /**
     * GPU entries outside {@code [gpuFromTs, gpuToTs]} (before the run's first sighting, after its end) belong to
     * another user of the GPU and are left out.
     */
    public static RunSeries build(SeriesSource src, SeriesRequest request) {
        double from = request.sinceTs() == null ? Double.NEGATIVE_INFINITY : request.sinceTs();
        double gpuFrom = Math.max(from, src.gpuFromTs());
        int maxPoints = request.maxPoints();

        // Readings from shortly before `since` are read too, only to carry into the first points: a point's
        // values do not depend on where the caller's range starts.
        double stepHold = stepHold(src.steps());
        SortedSteps steps = SortedSteps.of(src.steps(), from - stepHold, from);
        List<GpuSeries> gpus = new ArrayList<>(src.gpus());
        gpus.sort(Comparator.comparing(GpuSeries::host, Comparator.nullsLast(Comparator.naturalOrder()))
                .thenComparingInt(GpuSeries::index)
                .thenComparing(GpuSeries::uuid, Comparator.nullsLast(Comparator.naturalOrder())));
        int[] gpuStart = new int[gpus.size()];
        int[] gpuCarryStart = new int[gpus.size()];
        int[] gpuEnd = new int[gpus.size()];
        for (int g = 0; g < gpus.size(); g++) {
            GpuSeries gpu = gpus.get(g);
            gpuEnd[g] = src.gpuToTs() == Double.POSITIVE_INFINITY ? gpu.size()
                    : gpu.firstIndexAtOrAfter(Math.nextUp(src.gpuToTs()));
            gpuStart[g] = Math.min(gpu.firstIndexAtOrAfter(gpuFrom), gpuEnd[g]);
            gpuCarryStart[g] = Math.min(gpu.firstIndexAtOrAfter(gpuReadFromTs(request, src.gpuFromTs())),
                    gpuStart[g]);
        }

        boolean downsampled = false;

        int firstStep = steps.first();
        int stepCount = steps.size() - firstStep;
        int[] stepBounds = Buckets.split(stepCount, i -> steps.ts(firstStep + i), maxPoints);
        downsampled |= stepCount > maxPoints;
        List<RunSeries.StepPoint> stepPoints = new ArrayList<>(stepBounds.length - 1);
        for (int k = 0; k + 1 < stepBounds.length; k++) {
            stepPoints.add(steps.point(firstStep + stepBounds[k], firstStep + stepBounds[k + 1],
                    src.samplesPerStepFallback()));
        }

        List<RunSeries.GpuTrack> tracks = null;
        Integer omitted = null;
        if (request.includeGpus()) {
            int listed = Math.min(gpus.size(), MAX_GPU_TRACKS);
            int perTrack = listed == 0 ? maxPoints
                    : Math.max(MIN_TRACK_POINTS, Math.min(maxPoints, MAX_GPU_POINTS / listed));
            tracks = new ArrayList<>(listed);
            for (int g = 0; g < listed; g++) {
                GpuSeries gpu = gpus.get(g);
                int start = gpuStart[g];
                int n = gpuEnd[g] - start;
                int[] bounds = Buckets.split(n, i -> gpu.ts(start + i), perTrack);
                List<RunSeries.GpuPoint> points = new ArrayList<>(bounds.length - 1);
                GpuAccumulator acc = new GpuAccumulator();
                for (int k = 0; k + 1 < bounds.length; k++) {
                    acc.reset();
                    for (int i = start + bounds[k]; i < start + bounds[k + 1]; i++) {
                        acc.add(gpu, i);
                    }
                    points.add(acc.point());
                }
                downsampled |= n > perTrack;
                tracks.add(new RunSeries.GpuTrack(gpu.uuid(), gpu.host(), gpu.index(), gpu.name(),
                        toLong(gpu.memoryTotalBytes()), n > perTrack, points));
            }
            omitted = gpus.size() > listed ? gpus.size() - listed : null;
        }

        // The run as a whole: every distinct time any GPU or step report has, grouped like the others.
        double[] times = timeline(gpus, gpuStart, gpuEnd, steps);
        downsampled |= times.length > maxPoints;
        List<RunSeries.RunPoint> runPoints = runPoints(times, maxPoints, gpus, gpuStart, gpuCarryStart, gpuEnd,
                steps, stepHold, src.samplesPerStepFallback());

        return new RunSeries(src.runId(), src.nowTs(), src.windowSeconds(), request.sinceTs(), maxPoints,
                downsampled, predicted(src.predicted()), src.capacityBytes(), runPoints, stepPoints, tracks, omitted);
    }

    private static RunSeries.Predicted predicted(SeriesSource.Predicted p) {
        return p == null ? null : new RunSeries.Predicted(p.stepSeconds(), p.peakMemoryBytes(), p.samplesPerSecond());
    }

    /** How long step figures are carried forward: a few report gaps, at least {@link #MIN_STEP_HOLD_SECONDS}. */
    private static double stepHold(StepSeries steps) {
        double gap = steps.expectedReportGapSeconds();
        return Double.isNaN(gap) ? MIN_STEP_HOLD_SECONDS : Math.max(MIN_STEP_HOLD_SECONDS, 3 * gap);
    }

    /** Distinct timestamps (to the millisecond) of the GPU entries and step reports read, ascending. */
    private static double[] timeline(List<GpuSeries> gpus, int[] gpuStart, int[] gpuEnd, SortedSteps steps) {
        int total = steps.size() - steps.first();
        for (int g = 0; g < gpus.size(); g++) {
            total += gpuEnd[g] - gpuStart[g];
        }
        double[] all = new double[total];
        int n = 0;
        for (int g = 0; g < gpus.size(); g++) {
            GpuSeries gpu = gpus.get(g);
            for (int i = gpuStart[g]; i < gpuEnd[g]; i++) {
                all[n++] = Math.rint(gpu.ts(i) * 1000) / 1000;
            }
        }
        for (int p = steps.first(); p < steps.size(); p++) {
            all[n++] = Math.rint(steps.ts(p) * 1000) / 1000;
        }
        return Arrays.stream(all).sorted().distinct().toArray();
    }

    private static List<RunSeries.RunPoint> runPoints(double[] times, int maxPoints, List<GpuSeries> gpus,
                                                      int[] gpuStart, int[] gpuCarryStart, int[] gpuEnd,
                                                      SortedSteps steps,
                                                      double stepHold,
                                                      double samplesPerStepFallback) {
        int[] bounds = Buckets.split(times.length, i -> times[i], maxPoints);
        List<RunSeries.RunPoint> out = new ArrayList<>(bounds.length - 1);
        int[] next = gpuStart.clone(); // per GPU: first entry not yet consumed
        int nextStep = steps.first();
        GpuAccumulator acc = new GpuAccumulator();
        for (int k = 0; k + 1 < bounds.length; k++) {
            double from = times[bounds[k]];
            // A GPU entry belongs to the point whose span holds its (millisecond-rounded) time.
            double to = times[bounds[k + 1] - 1] + 0.0005;
            double tsSum = 0;
            for (int i = bounds[k]; i < bounds[k + 1]; i++) {
                tsSum += times[i];
            }
            double ts = tsSum / (bounds[k + 1] - bounds[k]);

            double memory = Double.NaN;
            Mean util = new Mean();
            double utilMin = Double.NaN;
            double idle = Double.NaN;
            double power = 0;
            boolean anyPower = false;
            int contributing = 0;
            for (int g = 0; g < gpus.size(); g++) {
                GpuSeries gpu = gpus.get(g);
                int i = next[g];
                while (i < gpuEnd[g] && gpu.ts(i) < to) {
                    i++;
                }
                acc.reset();
                if (i > next[g]) {
                    for (int j = next[g]; j < i; j++) {
                        acc.add(gpu, j);
                    }
                } else if (i > gpuCarryStart[g] && from - gpu.ts(i - 1) <= GPU_HOLD_SECONDS) {
                    acc.add(gpu, i - 1); // nothing new in this span: the latest reading still stands
                }
                next[g] = i;
                if (acc.entries == 0) {
                    continue;
                }
                contributing++;
                memory = maxNan(memory, acc.memory);
                util.add(acc.util.value());
                utilMin = minNan(utilMin, acc.utilMin);
                idle = maxNan(idle, acc.idle.value());
                double p = acc.power.value();
                if (!Double.isNaN(p)) {
                    power += p;
                    anyPower = true;
                }
            }

            int s = nextStep;
            while (s < steps.size() && steps.ts(s) < to) {
                s++;
            }
            RunSeries.StepPoint step = null;
            if (s > nextStep) {
                step = steps.point(nextStep, s, samplesPerStepFallback);
            } else if (s > 0 && from - steps.ts(s - 1) <= stepHold) {
                step = steps.point(s - 1, s, samplesPerStepFallback);
            }
            nextStep = s;

            out.add(new RunSeries.RunPoint(ts, toLong(memory), ratio(util.value()),
                    ratio(utilMin), ratio(idle), anyPower ? rounded(power, 100) : null,
                    contributing > 0 ? contributing : null,
                    step == null ? null : step.step(), step == null ? null : step.stepSeconds(),
                    step == null ? null : step.dataWaitRatio(), step == null ? null : step.samplesPerSecond(),
                    step == null ? null : step.loss(), step == null ? null : step.encodingRatio()));
        }
        return out;
    }

    /**
     * The step reports from a time on, ordered by their time (reports may arrive out of order); {@code first} is the
     * sorted position of the first report in the caller's range (the ones before it only carry forward).
     */
    private record SortedSteps(StepSeries series, int[] order, double[] ts, int first) {

        /** Reports at or after {@code readFromTs}; {@link #first} is the first at or after {@code fromTs}. */
        static SortedSteps of(StepSeries s, double readFromTs, double fromTs) {
            int[] order = IntStream.range(0, s.size()).filter(i -> s.ts(i) >= readFromTs).boxed()
                    .sorted(Comparator.comparingDouble(s::ts)) // stable: equal times keep arrival order
                    .mapToInt(Integer::intValue).toArray();
            int n = order.length;
            double[] ts = new double[n];
            int first = n;
            for (int p = 0; p < n; p++) {
                ts[p] = s.ts(order[p]);
                if (first == n && ts[p] >= fromTs) {
                    first = p;
                }
            }
            return new SortedSteps(s, order, ts, first);
        }

        int size() {
            return order.length;
        }

        double ts(int p) {
            return ts[p];
        }

        /** The reports at sorted positions {@code [lo, hi)} as one point, weighted by the steps each covers. */
        RunSeries.StepPoint point(int lo, int hi, double samplesPerStepFallback) {
            double tsSum = 0;
            long step = Long.MIN_VALUE;
            double timeSteps = 0;
            double stepCount = 0;
            double dataPart = 0;
            double dataTime = 0;
            double encodingPart = 0;
            double encodingTime = 0;
            double samples = 0;
            double samplesTime = 0;
            double lossSum = 0;
            int lossN = 0;
            for (int p = lo; p < hi; p++) {
                int i = order[p];
                int k = series.intervalSteps(i);
                double t = series.timeS(i);
                tsSum += ts[p];
                step = Math.max(step, series.step(i));
                timeSteps += t * k;
                stepCount += k;
                double d = series.dataTimeS(i);
                if (!Double.isNaN(d)) {
                    dataPart += Math.min(d, t) * k;
                    dataTime += t * k;
                }
                double lm = series.lmTimeS(i);
                double vae = series.vaeTimeS(i);
                if (!Double.isNaN(lm) || !Double.isNaN(vae)) {
                    encodingPart += Math.min((Double.isNaN(lm) ? 0 : lm) + (Double.isNaN(vae) ? 0 : vae), t) * k;
                    encodingTime += t * k;
                }
                double n = series.samples(i);
                if (!Double.isNaN(n)) {
                    samples += n * k;
                    samplesTime += t * k;
                }
                double loss = series.loss(i);
                if (!Double.isNaN(loss)) {
                    lossSum += loss;
                    lossN++;
                }
            }
            double stepSeconds = timeSteps / stepCount;
            Double throughput = samplesTime > 0 ? Double.valueOf(samples / samplesTime)
                    : samplesPerStepFallback > 0 && stepSeconds > 0 ? Double.valueOf(samplesPerStepFallback / stepSeconds)
                    : null;
            return new RunSeries.StepPoint(tsSum / (hi - lo), step, stepSeconds,
                    dataTime > 0 ? dataPart / dataTime : null, throughput, lossN > 0 ? lossSum / lossN : null,
                    hi - lo, encodingTime > 0 ? encodingPart / encodingTime : null);
        }
    }

    /** Merges window entries of one GPU the way the window merges polls: max memory, means, min of minimum. */
    private static final class GpuAccumulator {
        final Mean util = new Mean();
        final Mean idle = new Mean();
        final Mean sm = new Mean();
        final Mean power = new Mean();
        int entries;
        double tsSum;
        double memory;
        double utilMin;
        double smMax;
        double temperature;

        void reset() {
            util.reset();
            idle.reset();
            sm.reset();
            power.reset();
            entries = 0;
            tsSum = 0;
            memory = Double.NaN;
            utilMin = Double.NaN;
            smMax = Double.NaN;
            temperature = Double.NaN;
        }

        void add(GpuSeries g, int i) {
            entries++;
            tsSum += g.ts(i);
            memory = maxNan(memory, g.memoryUsedBytes(i));
            util.add(g.reading(Reading.UTILIZATION, i));
            utilMin = minNan(utilMin, g.reading(Reading.UTILIZATION_MIN, i));
            idle.add(g.reading(Reading.IDLE_FRACTION, i));
            sm.add(g.reading(Reading.SM_CLOCK_HZ, i));
            smMax = maxNan(smMax, g.reading(Reading.SM_CLOCK_MAX_HZ, i));
            power.add(g.reading(Reading.POWER_WATTS, i));
            temperature = maxNan(temperature, g.reading(Reading.TEMPERATURE_C, i));
        }

        RunSeries.GpuPoint point() {
            return new RunSeries.GpuPoint(tsSum / entries, toLong(memory), ratio(util.value()), ratio(utilMin),
                    ratio(idle.value()), toLong(sm.value()), toLong(smMax), rounded(power.value(), 100),
                    rounded(temperature, 10));
        }
    }

    /** The mean of the readings that are not NaN (NaN when none is). */
    private static final class Mean {
        double sum;
        int n;

        void reset() {
            sum = 0;
            n = 0;
        }

        void add(double x) {
            if (!Double.isNaN(x)) {
                sum += x;
                n++;
            }
        }

        double value() {
            return n > 0 ? sum / n : Double.NaN;
        }
    }

    /** To 4 decimals: float readings widened to double would put 0.8999999761581421 on the wire. */
    private static Double ratio(double v) {
        return rounded(v, 10_000);
    }

    private static Double rounded(double v, double scale) {
        return Double.isFinite(v) ? Math.round(v * scale) / scale : null;
    }

    private static Long toLong(double v) {
        return Double.isFinite(v) ? Math.round(v) : null;
    }
}
