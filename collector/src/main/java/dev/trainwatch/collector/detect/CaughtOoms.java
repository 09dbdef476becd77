package dev.trainwatch.collector.detect;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code oom_risk} route of a trainer that catches a CUDA OOM and skips the batch (ai-toolkit): critical at once,
 * for {@value #ACTIVE_SECONDS} s after the newest; once the trainer gives up, the failure is {@code run_failed}'s.
 */
final class CaughtOoms {

    static final double ACTIVE_SECONDS = 600;

    private CaughtOoms() {
    }

    static Optional<Finding> finding(RunContext run) {
        long count = run.oomSkips();
        double since = run.now() - run.oomSkipTs();
        if (count <= 0 || !(since <= ACTIVE_SECONDS) || run.failure() != null) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("oom_skipped_batches", count);
        evidence.put("last_oom_skipped_ts", run.oomSkipTs());
        evidence.put("seconds_since_last_oom_skipped", Math.round(Math.max(0, since)));
        String message = String.format(Locale.ROOT, "the trainer caught %d CUDA OOM%s and skipped %s (the newest %s "
                + "ago): the run is at the edge of its GPU memory", count, count == 1 ? "" : "s",
                count == 1 ? "that batch" : "those batches", Texts.secs(Math.max(0, since)));
        return Optional.of(new Finding(Severity.CRITICAL, message, evidence, OomRiskDetector.memorySuggestion(run))
                .withSustain(Duration.ZERO));
    }
}
