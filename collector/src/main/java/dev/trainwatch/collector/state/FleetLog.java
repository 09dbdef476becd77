package dev.trainwatch.collector.state;

import java.util.Map;

/** The one logger name the fleet's parts write under, so users configure (or silence) the fleet in one place. */
final class FleetLog {
    static final String NAME = "dev.trainwatch.collector.state.Fleet";

    private FleetLog() {
    }

    /** Whether a line about {@code key} is due, then recorded: one a minute per key, so a flood floods no log. */
    static <K> boolean due(Map<K, Double> loggedAt, K key, double now) {
        Double last = loggedAt.get(key);
        if (last == null || now - last >= 60 || now < last) {
            loggedAt.put(key, now);
            return true;
        }
        return false;
    }
}
