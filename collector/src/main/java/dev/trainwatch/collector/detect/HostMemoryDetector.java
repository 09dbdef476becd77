package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.Stats.nz;

import dev.trainwatch.estimator.Estimate;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code host_memory}: a node of the run is running out of RAM or of {@code /dev/shm} (routes and thresholds:
 * docs/DETECTORS.md); the steady-climb route is {@link HostMemoryClimb}.
 */
public final class HostMemoryDetector extends BaseDetector {

    static final int TREND_MINUTES = 5;
    static final int LOW_PERCENT = 10;
    static final int TREND_PERCENT = 30;
    static final int CRITICAL_PERCENT = 4;
    static final int WARN_MINUTES = 15;
    static final int CRITICAL_MINUTES = 4;
    static final int SHM_PERCENT = 90;

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm 'UTC'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private final DetectorSettings.HostMemory s;

    public HostMemoryDetector(DetectorSettings settings) {
        super(AnomalyKind.HOST_MEMORY);
        this.s = settings.hostMemory();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        Finding worst = null;
        int worstRank = -1;
        for (HostMemorySeries h : run.hostMemory()) {
            int n = h.size();
            if (n < 3 || run.now() - h.ts(n - 1) > 60) {
                continue; // too few readings, or stale: agent_lost's business
            }
            double total = h.memTotalBytes(n - 1);
            double available = h.memAvailableBytes(n - 1);
            // bytes per second, negative when shrinking; NaN with fewer than 3 readings
            double slope = HostMemoryClimb.fit(h, run.now() - TREND_MINUTES * 60, Double.POSITIVE_INFINITY).slope();
            // Falling means more than noise: 64 MiB or 0.1 % of the node's memory a minute (page cache and
            // allocator churn move MemAvailable by a few MiB either way).
            double minFall = Math.max(64.0 * (1 << 20), 0.001 * total) / 60;
            boolean falling = slope < -minFall;
            double secondsLeft = falling ? available / -slope : Double.POSITIVE_INFINITY;
            int severity = severity(total > 0 ? available / total : Double.NaN, falling, secondsLeft, active);
            HostMemoryClimb climb = severity > 0 ? null : HostMemoryClimb.of(h, run.now(), s, minFall);
            if (climb != null && climb.secondsLeft() <= seconds(s.climbHorizon())) {
                severity = 1;
                falling = true;
                slope = -climb.bytesPerSecond();
                secondsLeft = climb.secondsLeft();
            }
            double shmTotal = h.shmTotalBytes(n - 1);
            double shmUsed = h.shmUsedBytes(n - 1);
            boolean shmFull = shmTotal > 0 && shmUsed / shmTotal > (active ? SHM_PERCENT - 5 : SHM_PERCENT) / 100.0;
            if (severity == 0 && !shmFull) {
                continue;
            }
            Map<String, Object> evidence = evidence(h, slope, secondsLeft, severity > 0 ? climb : null, run.now());
            List<String> holders = holders(run, h.host());
            if (!holders.isEmpty()) {
                evidence.put("largest", holders);
            }
            StringBuilder message = new StringBuilder(h.host());
            if (severity > 0) {
                message.append(String.format(Locale.ROOT, " has %s of %s RAM available", Texts.gib(available),
                        Texts.gib(total)));
                if (falling) {
                    message.append(String.format(Locale.ROOT, ", falling %s%s/min", climb != null ? "steadily " : "",
                            Texts.gib(-slope * 60)));
                    if (Double.isFinite(secondsLeft)) {
                        message.append(", gone in about ").append(Texts.secs(secondsLeft));
                        if (climb != null) {
                            message.append(" (at ").append(CLOCK.format(Instant.ofEpochSecond(
                                    Math.round(run.now() + secondsLeft)))).append(')');
                        }
                    }
                }
            }
            if (shmFull) {
                message.append(severity > 0 ? "; " : " has ").append(String.format(Locale.ROOT,
                        "/dev/shm %s of %s full", Texts.pct(shmUsed / shmTotal), Texts.gib(shmTotal)));
            }
            if (!holders.isEmpty()) {
                message.append("; most is held by ").append(holders.get(0));
            }
            String swap = blockSwap(run, h.host(), evidence);
            if (swap != null) {
                message.append("; ").append(swap);
            }
            message.append(": the kernel's OOM killer (or a DataLoader bus error) will end the run");
            String fix = (swap != null ? BLOCK_SWAP_FIX : "")
                    + "lower the DataLoader's num_workers or prefetch_factor, stop caching decoded samples in "
                    + "memory (each worker holds its own copy), and look for a leak in the dataset's __getitem__"
                    + (shmFull ? "; give /dev/shm more room (docker --shm-size, a larger tmpfs)" : "");
            int rank = severity * 2 + (shmFull ? 1 : 0);
            if (rank > worstRank) {
                worstRank = rank;
                worst = new Finding(severity == 2 ? Severity.CRITICAL : Severity.WARNING, message.toString(),
                        evidence, fix);
            }
        }
        return Optional.ofNullable(worst);
    }

    private static Map<String, Object> evidence(HostMemorySeries h, double slope, double secondsLeft,
                                                HostMemoryClimb climb, double now) {
        int n = h.size();
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("host", h.host());
        evidence.put("mem_available_bytes", Math.round(h.memAvailableBytes(n - 1)));
        evidence.put("mem_total_bytes", Math.round(h.memTotalBytes(n - 1)));
        if (!Double.isNaN(slope)) {
            evidence.put("mem_available_change_bytes_per_minute", Math.round(slope * 60));
        }
        if (Double.isFinite(secondsLeft)) {
            evidence.put("seconds_to_exhaustion", Math.round(secondsLeft));
        }
        if (climb != null) {
            evidence.put("exhausted_at", Math.round(now + secondsLeft));
            evidence.put("trend_r2", Texts.round(climb.r2(), 3));
            evidence.put("trend_span_seconds", Math.round(climb.spanSeconds()));
        }
        if (h.shmTotalBytes(n - 1) > 0) {
            evidence.put("shm_used_bytes", Math.round(h.shmUsedBytes(n - 1)));
            evidence.put("shm_total_bytes", Math.round(h.shmTotalBytes(n - 1)));
        }
        return evidence;
    }

    private static final String BLOCK_SWAP_FIX = "save a checkpoint now; the swapped blocks are pinned once, so "
            + "host memory that keeps growing is the trainer keeping more in RAM each step (cache latents and text "
            + "outputs to disk, not RAM); fewer swapped blocks or an fp8 base leave more RAM; ";

    /** 0 none, 1 warning, 2 critical, from the short-term routes. */
    private static int severity(double share, boolean falling, double secondsLeft, boolean active) {
        double low = (active ? LOW_PERCENT + 3 : LOW_PERCENT) / 100.0;
        if (Double.isNaN(share)) {
            return 0;
        }
        if (share < CRITICAL_PERCENT / 100.0 || secondsLeft < CRITICAL_MINUTES * 60 && share < low) {
            return 2;
        }
        return share < low && falling || secondsLeft < WARN_MINUTES * 60 && share < TREND_PERCENT / 100.0 ? 1 : 0;
    }

    /**
     * With block swap: "the run swaps 20 blocks to pinned host memory (the estimate: 11.2 GiB per process, 2
     * processes here)", its figures put in {@code evidence}; null without block swap.
     */
    private static String blockSwap(RunContext run, String host, Map<String, Object> evidence) {
        Integer blocks = run.spec() == null ? null : run.spec().blocksToSwap();
        if (blocks == null || blocks <= 0) {
            return null;
        }
        evidence.put("blocks_to_swap", blocks);
        Estimate e = run.estimate();
        if (e == null || e.hostMemoryBytes() <= 0) {
            return String.format(Locale.ROOT, "the run swaps %d blocks to pinned host memory", blocks);
        }
        long processes = Math.max(1, run.rankProcesses().stream().filter(p -> host.equals(p.host())).count());
        evidence.put("predicted_host_memory_bytes", e.hostMemoryBytes());
        Long pinned = e.hostBreakdown() == null ? null : e.hostBreakdown().get("pinned_swap_blocks");
        if (pinned != null) {
            evidence.put("predicted_pinned_swap_bytes", pinned);
        }
        return String.format(Locale.ROOT, "the run swaps %d blocks to pinned host memory (the estimate: %s per "
                + "process%s, %s of it the swapped blocks)", blocks, Texts.gib(e.hostMemoryBytes()),
                processes > 1 ? ", " + processes + " processes here" : "", Texts.gib(pinned == null ? 0 : pinned));
    }

    /** The run's ranks on {@code host} by memory held (the process and its DataLoader workers), largest first. */
    private static List<String> holders(RunContext run, String host) {
        return run.rankProcesses().stream().filter(p -> host.equals(p.host()) && !Double.isNaN(p.rssBytes()))
                .sorted(Comparator.comparingDouble((RankProcess p) -> -(p.rssBytes() + nz(p.workersRssBytes()))))
                .limit(3)
                .map(p -> String.format(Locale.ROOT, "rank %d (pid %d): %s%s", p.rank(), p.pid(),
                        Texts.gib(p.rssBytes()), p.workers() > 0 ? String.format(Locale.ROOT,
                                " + %d DataLoader workers %s", p.workers(), Texts.gib(nz(p.workersRssBytes()))) : ""))
                .toList();
    }
}
