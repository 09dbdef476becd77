package dev.trainwatch.integration;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric-name contract, read from the tables in {@code docs/METRICS.md}: what dashboards and rules may use.
 * A summary or histogram contributes the series Prometheus actually stores ({@code _sum}, {@code _count},
 * {@code _bucket}) as well as its base name (which carries the quantiles).
 */
final class MetricContract {
    // A table row whose first cell is a back-quoted metric name, optionally with its labels: | `name{label}` | type |
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`(trainwatch_[a-z0-9_]+)(?:\\{[^`]*})?`\\s*\\|\\s*([a-z]+)\\s*\\|");

    private final Map<String, String> types;

    private MetricContract(Map<String, String> types) {
        this.types = types;
    }

    static MetricContract load() {
        return parse(ProjectFiles.read(ProjectFiles.docs("METRICS.md")));
    }

    static MetricContract load(Path metricsMd) {
        return parse(ProjectFiles.read(metricsMd));
    }

    static MetricContract parse(String markdown) {
        Map<String, String> types = new LinkedHashMap<>();
        for (String line : markdown.split("\n")) {
            Matcher m = ROW.matcher(line.strip());
            if (m.find()) {
                types.put(m.group(1), m.group(2));
            }
        }
        if (types.isEmpty()) {
            throw new IllegalStateException("docs/METRICS.md has no metric table rows");
        }
        return new MetricContract(types);
    }

    /** Metric name to its type (gauge, counter, summary, histogram), in document order. */
    Map<String, String> types() {
        return types;
    }

    /** Every series name a query may select: the documented names plus the stored parts of summaries/histograms. */
    Set<String> seriesNames() {
        Set<String> names = new LinkedHashSet<>();
        types.forEach((name, type) -> {
            names.add(name);
            if (type.equals("summary") || type.equals("histogram")) {
                names.add(name + "_sum");
                names.add(name + "_count");
            }
            if (type.equals("histogram")) {
                names.add(name + "_bucket");
            }
        });
        return names;
    }
}
