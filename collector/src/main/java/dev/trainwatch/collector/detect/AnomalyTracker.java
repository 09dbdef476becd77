package dev.trainwatch.collector.detect;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a run's per-evaluation findings into anomalies with hysteresis: a condition must hold for its
 * {@code sustain} (the kind's, or the finding's own when its evidence already spans time) before it is raised
 * and be absent for its {@code clearAfter} before it is resolved; a warning escalates to critical at once but
 * falls back only after the critical condition has been absent for {@code clearAfter}. Not thread-safe: one per run, guarded by the owner's lock.
 */
public final class AnomalyTracker {

    public record Transition(Anomaly anomaly, boolean raised) {
    }

    private final DetectorSettings settings;
    private final int historyLimit;
    private final Map<AnomalyKind, Double> pendingSince = new EnumMap<>(AnomalyKind.class);
    private final Map<AnomalyKind, Double> lastHeld = new EnumMap<>(AnomalyKind.class);
    private final Map<AnomalyKind, Double> lastCriticalHeld = new EnumMap<>(AnomalyKind.class);
    private final Map<AnomalyKind, Anomaly> active = new EnumMap<>(AnomalyKind.class);
    private final Deque<Anomaly> history = new ArrayDeque<>();

    public AnomalyTracker(DetectorSettings settings, int historyLimit) {
        this.settings = settings;
        this.historyLimit = historyLimit;
    }

    public boolean isActive(AnomalyKind kind) {
        return active.containsKey(kind);
    }

    /** Applies one evaluation of {@code kind} at {@code now}; returns the transition, if any. */
    public Optional<Transition> update(double now, AnomalyKind kind, Optional<Finding> finding) {
        DetectorSettings.Hysteresis h = settings.hysteresis(kind);
        double sustain = h.sustain().toMillis() / 1000.0;
        double clearAfter = h.clearAfter().toMillis() / 1000.0;
        Anomaly current = active.get(kind);
        if (finding.isPresent()) {
            Finding f = finding.get();
            lastHeld.put(kind, now);
            if (f.severity() == Severity.CRITICAL) {
                lastCriticalHeld.put(kind, now);
            }
            if (current == null) {
                double since = pendingSince.computeIfAbsent(kind, k -> now);
                double needed = f.sustain() != null ? f.sustain().toMillis() / 1000.0 : sustain;
                if (now - since >= needed) {
                    pendingSince.remove(kind);
                    Anomaly raised = new Anomaly(kind, f.severity(), true, now, null, f.message(), f.evidence(),
                            f.suggestion());
                    active.put(kind, raised);
                    return Optional.of(new Transition(raised, true));
                }
                return Optional.empty();
            }
            Severity severity = current.severity();
            boolean changed = false;
            if (f.severity() == Severity.CRITICAL && severity == Severity.WARNING) {
                severity = Severity.CRITICAL;
                changed = true;
            } else if (f.severity() == Severity.WARNING && severity == Severity.CRITICAL
                    && now - lastCriticalHeld.getOrDefault(kind, now) >= clearAfter) {
                severity = Severity.WARNING;
                changed = true;
            }
            // Held critical by hysteresis or not, the text and evidence follow what is observed now (an old "grows …
            // reaches full in 3 s" must not outlive the growth).
            Anomaly updated = new Anomaly(kind, severity, true, changed ? now : current.since(), null, f.message(),
                    f.evidence(), f.suggestion());
            active.put(kind, updated);
            return changed ? Optional.of(new Transition(updated, true)) : Optional.empty();
        }
        pendingSince.remove(kind);
        if (current != null && now - lastHeld.getOrDefault(kind, now) >= clearAfter) {
            return Optional.of(new Transition(resolve(kind, now), false));
        }
        return Optional.empty();
    }

    /**
     * The run ended: every active anomaly but {@code keep} ends with it ({@link Anomaly#endedWithRun}), unfixed, not
     * resolved (a run that ended keeps its {@code run_failed} active: it is why it ended).
     */
    public List<Transition> endAllExcept(double now, AnomalyKind keep) {
        List<Transition> out = new ArrayList<>();
        for (AnomalyKind kind : new ArrayList<>(active.keySet())) {
            if (kind == keep) {
                continue;
            }
            Anomaly ended = active.remove(kind).endedWithRun(now);
            lastCriticalHeld.remove(kind);
            addHistory(ended);
            out.add(new Transition(ended, false));
        }
        pendingSince.clear();
        return out;
    }

    private Anomaly resolve(AnomalyKind kind, double now) {
        Anomaly resolved = active.remove(kind).resolved(now);
        lastCriticalHeld.remove(kind);
        addHistory(resolved);
        return resolved;
    }

    private void addHistory(Anomaly resolved) {
        if (historyLimit == 0) {
            return;
        }
        history.addFirst(resolved);
        while (history.size() > historyLimit) {
            history.removeLast();
        }
    }

    /** Puts back anomalies kept by the history after a restart, without telling anyone (they were told). */
    public void restore(Collection<Anomaly> anomalies, double now) {
        for (Anomaly a : anomalies) {
            if (a.active()) {
                active.put(a.kind(), a);
                lastHeld.put(a.kind(), now);
                if (a.severity() == Severity.CRITICAL) {
                    lastCriticalHeld.put(a.kind(), now);
                }
            } else {
                history.addLast(a);
            }
        }
        while (history.size() > historyLimit) {
            history.removeLast();
        }
    }

    /** Active anomalies, critical first, then resolved ones newest first. */
    public List<Anomaly> snapshot() {
        List<Anomaly> out = new ArrayList<>(active.size() + history.size());
        // A stable sort: each severity keeps the kinds' order.
        active.values().stream().sorted(Comparator.comparing(a -> a.severity() != Severity.CRITICAL))
                .forEach(out::add);
        out.addAll(history);
        return out;
    }

    public Collection<Anomaly> active() {
        return List.copyOf(active.values());
    }
}
