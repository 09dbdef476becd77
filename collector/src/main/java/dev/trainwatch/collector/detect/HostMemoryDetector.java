package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code host_memory}: a node of the run is running out of RAM or of {@code /dev/shm}, and the kernel's OOM killer
 * (or a DataLoader bus error) will end the run. Over the node's readings of the last {@value #TREND_MINUTES}
 * minutes: warning when {@code MemAvailable} is under {@value #LOW_PERCENT} % of {@code MemTotal} and still falling,
 * or falls at a rate that empties it within {@value #WARN_MINUTES} minutes while under {@value #TREND_PERCENT} %;
 * critical under {@value #CRITICAL_PERCENT} % or within {@value #CRITICAL_MINUTES} minutes. {@code /dev/shm} more than
 * {@value #SHM_PERCENT} % full is a warning. A node that filled its memory once at start-up and holds steady is
 * quiet. The evidence names the ranks and DataLoader workers that hold the most.
 */
public final class HostMemoryDetector implements Detector {

    static final int TREND_MINUTES = 5;
    static final int LOW_PERCENT = 10;
    static final int TREND_PERCENT = 30;
    static final int CRITICAL_PERCENT = 4;
    static final int WARN_MINUTES = 15;
    static final int CRITICAL_MINUTES = 4;
    static final int SHM_PERCENT = 90;

    @Override
    public AnomalyKind kind() {
        return AnomalyKind.HOST_MEMORY;
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
            double from = run.now() - TREND_MINUTES * 60;
            double slope = slope(h, from); // bytes per second, negative when shrinking
            int severity = 0; // 0 none, 1 warning, 2 critical
            // Falling means more than noise: 64 MiB or 0.1 % of the node's memory a minute (page cache and
            // allocator churn move MemAvailable by a few MiB either way).
            boolean falling = slope * 60 < -Math.max(64.0 * (1 << 20), 0.001 * total);
            double secondsLeft = falling ? available / -slope : Double.POSITIVE_INFINITY;
            double share = total > 0 ? available / total : Double.NaN;
            double low = (active ? LOW_PERCENT + 3 : LOW_PERCENT) / 100.0;
            if (!Double.isNaN(share)) {
                if (share < CRITICAL_PERCENT / 100.0 || secondsLeft < CRITICAL_MINUTES * 60 && share < low) {
                    severity = 2;
                } else if (share < low && falling
                        || secondsLeft < WARN_MINUTES * 60 && share < TREND_PERCENT / 100.0) {
                    severity = 1;
                }
            }
            double shmTotal = h.shmTotalBytes(n - 1);
            double shmUsed = h.shmUsedBytes(n - 1);
            boolean shmFull = shmTotal > 0 && shmUsed / shmTotal > (active ? SHM_PERCENT - 5 : SHM_PERCENT) / 100.0;
            if (severity == 0 && !shmFull) {
                continue;
            }
            Map<String, Object> evidence = new LinkedHashMap<>();
            evidence.put("host", h.host());
            evidence.put("mem_available_bytes", Math.round(available));
            evidence.put("mem_total_bytes", Math.round(total));
            if (!Double.isNaN(slope)) {
                evidence.put("mem_available_change_bytes_per_minute", Math.round(slope * 60));
            }
            if (Double.isFinite(secondsLeft)) {
                evidence.put("seconds_to_exhaustion", Math.round(secondsLeft));
            }
            if (shmTotal > 0) {
                evidence.put("shm_used_bytes", Math.round(shmUsed));
                evidence.put("shm_total_bytes", Math.round(shmTotal));
            }
            List<String> holders = holders(run, h.host());
            if (!holders.isEmpty()) {
                evidence.put("largest", holders);
            }
            StringBuilder message = new StringBuilder(h.host());
            if (severity > 0) {
                message.append(String.format(Locale.ROOT, " has %s of %s RAM available", Texts.gib(available),
                        Texts.gib(total)));
                if (falling) {
                    message.append(String.format(Locale.ROOT, ", falling %s/min", Texts.gib(-slope * 60)));
                    if (Double.isFinite(secondsLeft)) {
                        message.append(", gone in about ").append(Texts.secs(secondsLeft));
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
            message.append(": the kernel's OOM killer (or a DataLoader bus error) will end the run");
            String fix = "lower the DataLoader's num_workers or prefetch_factor, stop caching decoded samples in "
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

    /** Least-squares slope of MemAvailable over the readings since {@code from}, bytes per second; NaN if < 3. */
    private static double slope(HostMemorySeries h, double from) {
        Stats.LeastSquares fit = new Stats.LeastSquares();
        for (int i = h.firstIndexAtOrAfter(from); i < h.size(); i++) {
            fit.add(h.ts(i), h.memAvailableBytes(i));
        }
        return fit.slope();
    }

    /** The run's ranks on {@code host} by memory held (the process and its DataLoader workers), largest first. */
    private static List<String> holders(RunContext run, String host) {
        List<RankProcess> ranks = new ArrayList<>();
        for (RankProcess p : run.rankProcesses()) {
            if (host.equals(p.host()) && !Double.isNaN(p.rssBytes())) {
                ranks.add(p);
            }
        }
        ranks.sort(Comparator.comparingDouble((RankProcess p) -> -(p.rssBytes() + nz(p.workersRssBytes()))));
        List<String> out = new ArrayList<>();
        for (RankProcess p : ranks.subList(0, Math.min(3, ranks.size()))) {
            out.add(String.format(Locale.ROOT, "rank %d (pid %d): %s%s", p.rank(), p.pid(), Texts.gib(p.rssBytes()),
                    p.workers() > 0 ? String.format(Locale.ROOT, " + %d DataLoader workers %s", p.workers(),
                            Texts.gib(nz(p.workersRssBytes()))) : ""));
        }
        return out;
    }

    private static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }
}
