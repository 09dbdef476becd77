package dev.trainwatch.collector.ingest;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSteps;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A node is never refused for one of its jobs: a batch's runs (attributions, aliases, step groups, events) whose ids
 * {@link InputValidator#requireRunId} refuses are left out and the rest applied. What was left out is in the answer
 * ({@code runs_refused}) and logged at most once a minute per host. Thread-safe.
 */
final class RefusedRuns {

    private static final System.Logger LOG = System.getLogger(RefusedRuns.class.getName());
    static final long LOG_EVERY_NANOS = 60_000_000_000L;
    /** Hosts remembered for the line; beyond them the oldest is forgotten. */
    private static final int MAX_HOSTS = 1024;

    private final LongSupplier nanoTime;
    private final Map<String, Pending> byHost = new LinkedHashMap<>();

    /** What a host had refused since its last line. */
    private static final class Pending {
        long loggedAt;
        long batches;
        final Set<String> ids = new LinkedHashSet<>();
    }

    /** The batch without what it may not carry, and why each run id was left out. */
    record Stripped(AgentBatch batch, List<String> refused) {
    }

    RefusedRuns(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** The batch with its refused run ids left out (the same batch when it has none). */
    Stripped strip(AgentBatch batch) {
        List<String> refused = new ArrayList<>();
        List<RunAttribution> runs = batch.runs() == null ? null : attributions(batch.runs(), refused);
        List<RunSteps> steps = batch.runSteps() == null ? null
                : keep(batch.runSteps(), g -> g == null ? null : g.runId(), refused);
        List<AgentEvent> events = batch.events() == null ? null
                : keep(batch.events(), e -> e == null || e.runId() == null ? "" : e.runId(), refused);
        if (refused.isEmpty()) {
            return new Stripped(batch, List.of());
        }
        note(batch.host(), refused);
        return new Stripped(new AgentBatch(batch.host(), batch.agentId(), batch.seq(), batch.gpus(), runs, events,
                batch.health(), batch.hostMemory(), batch.sentAt(), steps), List.copyOf(refused));
    }

    private static List<RunAttribution> attributions(List<RunAttribution> runs, List<String> refused) {
        List<RunAttribution> kept = new ArrayList<>(runs.size());
        for (RunAttribution run : runs) {
            if (run == null) {
                kept.add(null); // the validator says what is wrong with it
                continue;
            }
            if (why(run.runId(), refused) != null) {
                continue;
            }
            if (run.aliases() != null) {
                List<String> aliases = run.aliases().stream()
                        .filter(alias -> alias == null || why(alias, refused) == null).toList();
                run = aliases.size() == run.aliases().size() ? run : run.withAliases(aliases);
            }
            kept.add(run);
        }
        return kept;
    }

    private static <T> List<T> keep(List<T> items, Function<T, String> runId,
                                    List<String> refused) {
        List<T> kept = new ArrayList<>(items.size());
        for (T item : items) {
            String id = runId.apply(item);
            if (id == null || id.isEmpty() || why(id, refused) == null) {
                kept.add(item);
            }
        }
        return kept;
    }

    /** Why {@code runId} is refused (added to {@code refused}), or null when it is taken. */
    private static String why(String runId, List<String> refused) {
        if (runId == null) {
            return null;
        }
        try {
            InputValidator.requireRunId("run id '" + BodyDecoder.printable(runId, 40) + "'", runId);
            return null;
        } catch (ApiError e) {
            if (!refused.contains(e.getMessage())) {
                refused.add(e.getMessage());
            }
            return e.getMessage();
        }
    }

    private void note(String host, List<String> refused) {
        String line = null;
        synchronized (byHost) {
            Pending pending = byHost.get(host);
            if (pending == null) {
                if (byHost.size() >= MAX_HOSTS) {
                    byHost.remove(byHost.keySet().iterator().next());
                }
                pending = new Pending();
                pending.loggedAt = nanoTime.getAsLong() - LOG_EVERY_NANOS;
                byHost.put(host, pending);
            }
            pending.batches++;
            pending.ids.addAll(refused);
            long now = nanoTime.getAsLong();
            if (now - pending.loggedAt >= LOG_EVERY_NANOS) {
                line = "host " + BodyDecoder.printable(host, 64) + ": " + pending.batches + " batch(es) carried runs"
                        + " whose ids the API cannot take, left out (the node's GPUs and other runs were applied): "
                        + String.join("; ", pending.ids) + " (logged at most once a minute)";
                pending.loggedAt = now;
                pending.batches = 0;
                pending.ids.clear();
            }
        }
        if (line != null) {
            LOG.log(System.Logger.Level.WARNING, line);
        }
    }
}
