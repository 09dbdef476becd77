package dev.trainwatch.collector.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One gauge name over a changing set of things (GPUs, runs, agents), kept in step with them by a
 * {@link MultiGauge}. Each row holds only its key; its value is looked up in the newest snapshot when the registry
 * is scraped, so a row registered once keeps reporting current values, and rows whose thing vanished or whose
 * reading became absent are removed at the next {@link #update}. Not thread-safe: the owning binder serialises
 * updates.
 *
 * @param <K> key of a thing (GPU UUID, run id, …)
 * @param <V> its snapshot
 */
final class GaugeFamily<K, V> {

    /** How to read one value from a snapshot; null means absent (no series). */
    @FunctionalInterface
    interface Reading<V> {
        Number read(V view);
    }

    private final MultiGauge gauge;
    private final Reading<V> reading;
    private final Function<V, Tags> tags;
    private volatile Map<K, V> current = Map.of();
    /** The rows registered last time, to skip re-registering an unchanged set (the common case per scrape). */
    private Map<K, Tags> registered = Map.of();

    GaugeFamily(MeterRegistry registry, String name, String baseUnit, String description, Function<V, Tags> tags,
                Reading<V> reading) {
        this.gauge = MultiGauge.builder(name).baseUnit(baseUnit).description(description).register(registry);
        this.tags = tags;
        this.reading = reading;
    }

    /** Makes the rows match {@code snapshot}: one per thing whose reading is present. */
    void update(Map<K, V> snapshot) {
        current = snapshot;
        Map<K, Tags> wanted = new HashMap<>(snapshot.size() * 2);
        for (Map.Entry<K, V> entry : snapshot.entrySet()) {
            if (reading.read(entry.getValue()) != null) {
                wanted.put(entry.getKey(), tags.apply(entry.getValue()));
            }
        }
        if (wanted.equals(registered)) {
            return; // same series as before; their values are read from the new snapshot at render time
        }
        List<MultiGauge.Row<?>> rows = new ArrayList<>(wanted.size());
        for (Map.Entry<K, Tags> row : wanted.entrySet()) {
            rows.add(MultiGauge.Row.of(row.getValue(), row.getKey(), this::valueOf));
        }
        gauge.register(rows, false);
        registered = wanted;
    }

    private double valueOf(K key) {
        V view = current.get(key);
        Number value = view == null ? null : reading.read(view);
        return value == null ? Double.NaN : value.doubleValue();
    }
}
