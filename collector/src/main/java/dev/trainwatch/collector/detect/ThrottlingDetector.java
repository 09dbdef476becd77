package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code throttling}: while busy, a GPU's SM clock sits below its maximum with a thermal or power clock-event
 * reason active for most of the recent window. Hardware slowdowns (HW thermal, power brake) are critical, and are
 * decided on the newest 20 s with a shorter sustain: a healthy GPU never holds one for seconds on end, while a
 * software power cap during a burst is normal and keeps the minute.
 */
public final class ThrottlingDetector extends BaseDetector {

    private final DetectorSettings.Throttling s;

    public ThrottlingDetector(DetectorSettings settings) {
        super(AnomalyKind.THROTTLING);
        this.s = settings.throttling();
    }

    /** One GPU's throttled busy samples over a stretch. */
    private static final class Tally {
        private final int reasonMask;
        private int busy;
        private int throttled;
        private double clockSum;
        private int clocks;
        private int seenMask;
        private double maxTemp = Double.NaN;
        private double maxPower = Double.NaN;

        Tally(int reasonMask) {
            this.reasonMask = reasonMask;
        }

        /** Adds busy sample {@code i}, whose clock ratio is {@code clock} and slowness {@code slow}. */
        void addBusy(GpuSeries g, int i, double clock, boolean slow) {
            busy++;
            int activeReasons = g.clockEventMask(i) & reasonMask;
            if (activeReasons != 0 && slow) {
                throttled++;
                seenMask |= activeReasons;
                if (!Double.isNaN(clock)) {
                    clockSum += clock;
                    clocks++;
                }
                maxTemp = max(maxTemp, g.reading(Reading.TEMPERATURE_C, i));
                maxPower = max(maxPower, g.reading(Reading.POWER_WATTS, i));
            }
        }

        double share() {
            return busy > 0 ? (double) throttled / busy : 0;
        }

        double meanClock() {
            return clocks > 0 ? clockSum / clocks : Double.NaN;
        }
    }

    /**
     * The busy samples whose clock is below the ratio, in one pass: {@code [0]} at or after {@code from} with
     * {@code reasonMask}'s reasons, {@code [1]} and {@code [2]} at or after {@code hardwareFrom} with
     * {@code hardwareMask}'s and with {@code reasonMask}'s.
     */
    private Tally[] count(GpuSeries g, double from, double hardwareFrom, int reasonMask, int hardwareMask) {
        int first = g.firstIndexAtOrAfter(from);
        int hardwareFirst = g.firstIndexAtOrAfter(hardwareFrom);
        Tally[] tallies = {new Tally(reasonMask), new Tally(hardwareMask), new Tally(reasonMask)};
        for (int i = Math.min(first, hardwareFirst); i < g.size(); i++) {
            if (!(g.reading(Reading.UTILIZATION, i) >= s.busyRatio())) {
                continue;
            }
            double clock = g.reading(Reading.SM_CLOCK_HZ, i) / g.reading(Reading.SM_CLOCK_MAX_HZ, i);
            boolean slow = !(clock >= s.clockRatio()); // unknown clocks: the reason alone decides
            for (int k = 0; k < 3; k++) {
                if (i >= (k == 0 ? first : hardwareFirst)) {
                    tallies[k].addBusy(g, i, clock, slow);
                }
            }
        }
        return tallies;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        double from = run.now() - seconds(s.window());
        // A hardware slowdown is decided on the newest stretch: no healthy GPU holds one for seconds on end.
        double hardwareFrom = run.now() - seconds(s.hardwareWindow());
        double needed = active ? s.sampleShare() / 2 : s.sampleShare();
        int reasonMask = GpuSeries.reasonMask(s.reasons());
        int hardwareMask = GpuSeries.reasonMask(s.criticalReasons());
        List<GpuSeries> throttledGpus = new ArrayList<>();
        Set<String> reasonsSeen = new LinkedHashSet<>();
        double worstShare = 0;
        double worstClock = Double.NaN;
        double maxTemp = Double.NaN;
        double maxPower = Double.NaN;
        boolean byHardware = false;
        long quotedSeconds = 0;
        for (GpuSeries g : fresh(run)) {
            Tally[] counts = count(g, from, hardwareFrom, reasonMask, hardwareMask);
            Tally c = counts[0];
            Tally hw = counts[1];
            boolean usual = c.busy >= 5 && c.share() >= needed;
            boolean hardware = hw.busy >= 5 && hw.share() >= s.sampleShare();
            if (!usual && !hardware) {
                continue;
            }
            byHardware |= hardware;
            // The numbers quoted are the window's, or the newest stretch's (every reason in it) when only that decides.
            Tally quoted = usual ? c : counts[2];
            quotedSeconds = usual ? s.window().toSeconds() : Math.max(quotedSeconds, s.hardwareWindow().toSeconds());
            throttledGpus.add(g);
            reasonsSeen.addAll(GpuSeries.reasonNames(quoted.seenMask));
            maxTemp = max(maxTemp, quoted.maxTemp);
            maxPower = max(maxPower, quoted.maxPower);
            if (quoted.share() > worstShare) {
                worstShare = quoted.share();
                worstClock = quoted.meanClock();
            }
        }
        if (throttledGpus.isEmpty()) {
            return Optional.empty();
        }
        boolean critical = reasonsSeen.stream().anyMatch(s.criticalReasons()::contains);
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("throttled_gpus", throttledGpus.size());
        evidence.put("gpu_uuids", throttledGpus.stream().map(GpuSeries::uuid).toList());
        evidence.put("reasons", List.copyOf(reasonsSeen));
        evidence.put("throttled_busy_sample_ratio", Texts.round(worstShare, 3));
        evidence.put("window_seconds", quotedSeconds);
        if (!Double.isNaN(worstClock)) {
            evidence.put("sm_clock_ratio", Texts.round(worstClock, 3));
        }
        if (!Double.isNaN(maxTemp)) {
            evidence.put("max_temperature_celsius", Texts.round(maxTemp, 1));
        }
        if (!Double.isNaN(maxPower)) {
            evidence.put("max_power_watts", Texts.round(maxPower, 1));
        }
        String which = throttledGpus.size() == 1 ? Texts.gpuName(throttledGpus.get(0))
                : throttledGpus.size() + " GPUs";
        String message = String.format(Locale.ROOT, "%s throttled in %s of busy samples of the last %d s (%s)%s",
                which, Texts.pct(worstShare), quotedSeconds, String.join(", ", reasonsSeen),
                Double.isNaN(worstClock) ? "" : ", SM clock at " + Texts.pct(worstClock) + " of maximum");
        Finding finding = new Finding(critical ? Severity.CRITICAL : Severity.WARNING, message, evidence,
                fixes(reasonsSeen, maxTemp, maxPower));
        return Optional.of(byHardware ? finding.withSustain(s.hardwareSustain()) : finding);
    }

    /** What to check for each reason seen, with the temperature and power that were read. */
    private static String fixes(Set<String> reasonsSeen, double maxTemp, double maxPower) {
        List<String> fixes = new ArrayList<>();
        if (reasonsSeen.stream().anyMatch(r -> r.contains("thermal"))) {
            fixes.add("the GPU is too hot" + (Double.isNaN(maxTemp) ? "" : String.format(Locale.ROOT,
                    " (%.0f °C)", maxTemp)) + ": check fans, airflow and inlet temperature of the node");
        }
        if (reasonsSeen.contains("sw_power_cap")) {
            fixes.add("the power limit is reached" + (Double.isNaN(maxPower) ? "" : String.format(Locale.ROOT,
                    " (%.0f W)", maxPower)) + ": check the enforced limit (nvidia-smi -q -d POWER) against the "
                    + "card's default");
        }
        if (reasonsSeen.contains("hw_slowdown") || reasonsSeen.contains("hw_power_brake_slowdown")) {
            fixes.add("hardware slowdown or power brake: check the node's power supply and cooling and tell "
                    + "the operators");
        }
        return String.join("; ", fixes);
    }

    private static double max(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }
}
