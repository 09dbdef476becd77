package dev.trainwatch.exposition;

import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Things to export with their labels, in the order a snapshot keeps its samples (by labels): made once per scrape, so
 * each family's own sort of its samples only confirms the order instead of sorting thousands of them again.
 *
 * @param labels the labels, sorted
 * @param items  the things, in the same order
 */
public record Labelled<V>(List<Labels> labels, List<V> items) {

    /** {@code items} with their labels, sorted by them; an item whose labels are {@code null} is left out. */
    public static <V> Labelled<V> sorted(Iterable<? extends V> items, Function<? super V, Labels> labelsOf) {
        List<Map.Entry<Labels, V>> pairs = new ArrayList<>();
        for (V item : items) {
            Labels labels = labelsOf.apply(item);
            if (labels != null) {
                pairs.add(Map.entry(labels, item));
            }
        }
        pairs.sort(Map.Entry.comparingByKey());
        return new Labelled<>(pairs.stream().map(Map.Entry::getKey).toList(),
                pairs.stream().map(Map.Entry::getValue).toList());
    }

    /** A gauge of {@code reading} over the items; an item read as {@code null} has no sample. */
    public GaugeSnapshot gauge(String name, String help, Function<? super V, ? extends Number> reading) {
        GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(name).help(help);
        for (int i = 0; i < items.size(); i++) {
            Number value = reading.apply(items.get(i));
            if (value != null) {
                gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                        .labels(labels.get(i)).value(value.doubleValue()).build());
            }
        }
        return gauge.build();
    }
}
