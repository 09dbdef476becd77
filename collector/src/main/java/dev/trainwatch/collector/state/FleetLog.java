package dev.trainwatch.collector.state;

/** The one logger name the fleet's parts write under, so users configure (or silence) the fleet in one place. */
final class FleetLog {
    static final String NAME = "dev.trainwatch.collector.state.Fleet";

    private FleetLog() {
    }
}
