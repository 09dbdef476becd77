package dev.trainwatch.collector.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.prometheus.metrics.config.PrometheusPropertiesLoader;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.Exemplar;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.StateSetSnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.Unit;
import io.prometheus.metrics.model.snapshots.UnknownSnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ExpositionText} writes exactly what client_java's writers (as Micrometer's registry makes them) write, for
 * every family shape, in both text formats: the scrape's contract is the library's output, only cheaper.
 */
class ExpositionTextTest {

    private static final ExpositionFormats FORMATS = ExpositionFormats.init(
            PrometheusPropertiesLoader.load(PrometheusConfig.DEFAULT.prometheusProperties()));

    /** Label values that need every kind of care: escapes, non-ASCII (two, three and four bytes), empty. */
    private static final String[] ODD_VALUES = {"", "plain", "a\"quote", "back\\slash", "new\nline", "ümlaut",
        "日本語", "emoji 😀 end", "mix \\\"\n😀\"", "trailing\\", "GPU-0f1e2d3c-aaaa-bbbb-cccc-dddddddddddd"};

    /** Values whose text is easy to get wrong: signs, zeros, the ten-million boundary, non-finite. */
    private static final double[] ODD_NUMBERS = {0.0, -0.0, 1.0, -1.0, 0.1, 9_999_999.0, 10_000_000.0, -9_999_999.0,
        1e-7, 123.456, 1.5e300, -4.9e-324, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
        80.0 * (1L << 30), Long.MAX_VALUE, 42.0};

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyFamilyShapeIsWrittenAsTheLibraryWritesIt(boolean openMetrics) {
        MetricSnapshots snapshots = MetricSnapshots.of(allShapes().toArray(MetricSnapshot[]::new));
        assertThat(ours(snapshots, openMetrics)).isEqualTo(library(snapshots, openMetrics));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void randomGaugeAndCounterFamiliesAreWrittenAsTheLibraryWritesThem(boolean openMetrics) {
        Random random = new Random(20261128L);
        for (int round = 0; round < 200; round++) {
            List<MetricSnapshot> families = new ArrayList<>();
            int count = 1 + random.nextInt(5);
            for (int f = 0; f < count; f++) {
                families.add(randomFamily(random, "family_" + round + "_" + f));
            }
            MetricSnapshots snapshots = MetricSnapshots.of(families.toArray(MetricSnapshot[]::new));
            assertThat(ours(snapshots, openMetrics)).as("round %d", round).isEqualTo(library(snapshots, openMetrics));
        }
    }

    @Test
    void twoFamiliesOfOneNameAreMergedAsTheLibraryMergesThem() {
        GaugeSnapshot first = GaugeSnapshot.builder().name("split_gauge").help("h")
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("a", "1")).value(1).build())
                .build();
        GaugeSnapshot second = GaugeSnapshot.builder().name("split_gauge").help("h")
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("a", "2")).value(2).build())
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("a", "3")).value(3).build())
                .build();
        MetricSnapshots snapshots = MetricSnapshots.of(first, second);
        for (boolean openMetrics : new boolean[] {false, true}) {
            assertThat(ours(snapshots, openMetrics)).isEqualTo(library(snapshots, openMetrics))
                    .contains("split_gauge{a=\"3\"} 3.0\n");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain", "application/openmetrics-text; version=1.0.0"})
    void theCollectorsWholeScrapeIsTheLibrarysScrape(String accept) {
        MetricsExporter exporter = ScrapeGoldenTest.scenarioExporter();
        String ours = exporter.scrape(accept);
        assertThat(ours).isEqualTo(exporter.scrapeByLibrary(accept)).contains("trainwatch_gpu_utilization_ratio{");
        assertThat(new String(exporter.scrapeBytes(accept), StandardCharsets.UTF_8)).isEqualTo(ours);
    }

    // ---- the shapes ---------------------------------------------------------------------------------------

    private static List<MetricSnapshot> allShapes() {
        List<MetricSnapshot> shapes = new ArrayList<>();
        GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name("odd_gauge_bytes").help("Help with \\ and \n and \"")
                .unit(Unit.BYTES);
        for (int i = 0; i < ODD_VALUES.length; i++) {
            gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("gpu", Integer.toString(i), "uuid", ODD_VALUES[i]))
                    .value(ODD_NUMBERS[i % ODD_NUMBERS.length]).build());
        }
        for (int i = 0; i < ODD_NUMBERS.length; i++) {
            gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("gpu", "n" + i, "uuid", "x")).value(ODD_NUMBERS[i]).build());
        }
        shapes.add(gauge.build());
        shapes.add(GaugeSnapshot.builder().name("no_labels").dataPoint(
                GaugeSnapshot.GaugeDataPointSnapshot.builder().value(3).build()).build());
        shapes.add(GaugeSnapshot.builder().name("empty_family").help("nothing in it").build());
        // Label names with dots: written under their Prometheus names.
        shapes.add(GaugeSnapshot.builder().name("dotted.name").help("dots")
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("k8s.pod", "a")).value(1)
                        .build())
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("k8s.pod", "b")).value(2)
                        .build())
                .build());
        shapes.add(CounterSnapshot.builder().name("requests").help("counted").dataPoint(
                        CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("code", "200")).value(5)
                                .build())
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("code", "500"))
                        .value(0.5).build())
                .build());
        shapes.add(CounterSnapshot.builder().name("energy_joules").unit(Unit.JOULES).help("with unit")
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("g", "0")).value(1e9)
                        .build())
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("g", "1")).value(7)
                        .build())
                .build());
        // Counters with exemplars, created and scrape timestamps: the library writes those whole.
        shapes.add(CounterSnapshot.builder().name("with_exemplar")
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("a", "1")).value(1)
                        .build())
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("a", "2")).value(2)
                        .exemplar(Exemplar.builder().value(2).labels(Labels.of("trace_id", "abc"))
                                .timestampMillis(1_700_000_000_123L).build())
                        .build())
                .build());
        shapes.add(CounterSnapshot.builder().name("with_created")
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("a", "1")).value(1)
                        .createdTimestampMillis(1_700_000_000_000L).build())
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("a", "2")).value(2)
                        .createdTimestampMillis(1_700_000_000_001L).build())
                .build());
        shapes.add(GaugeSnapshot.builder().name("with_timestamp")
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("a", "1")).value(1)
                        .build())
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("a", "2")).value(2)
                        .scrapeTimestampMillis(1_700_000_000_456L).build())
                .build());
        shapes.add(InfoSnapshot.builder().name("build").help("what runs")
                .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(Labels.of("version", "1.2"))
                        .build())
                .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(Labels.of("version", "1.\"3\""))
                        .build())
                .build());
        shapes.add(SummarySnapshot.builder().name("step_seconds").unit(Unit.SECONDS).help("steps")
                .dataPoint(SummarySnapshot.SummaryDataPointSnapshot.builder().labels(Labels.of("run", "r"))
                        .quantiles(Quantiles.of(new Quantile(0.5, 1.25), new Quantile(0.99, 2.5))).count(10)
                        .sum(13.5).build())
                .build());
        shapes.add(HistogramSnapshot.builder().name("latency_seconds").help("latency")
                .dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder().labels(Labels.of("path", "/x"))
                        .classicHistogramBuckets(ClassicHistogramBuckets.of(new double[] {0.1, 1,
                            Double.POSITIVE_INFINITY}, new long[] {1, 2, 3}))
                        .sum(4.2).build())
                .build());
        shapes.add(StateSetSnapshot.builder().name("state").help("states")
                .dataPoint(StateSetSnapshot.StateSetDataPointSnapshot.builder().labels(Labels.of("g", "0"))
                        .state("a", true).state("b", false).build())
                .build());
        shapes.add(UnknownSnapshot.builder().name("mystery").help("?")
                .dataPoint(UnknownSnapshot.UnknownDataPointSnapshot.builder().labels(Labels.of("g", "0")).value(1)
                        .build())
                .dataPoint(UnknownSnapshot.UnknownDataPointSnapshot.builder().labels(Labels.of("g", "1")).value(2)
                        .build())
                .build());
        return shapes;
    }

    private static MetricSnapshot randomFamily(Random random, String name) {
        int points = random.nextInt(6);
        int labelCount = random.nextInt(4);
        switch (random.nextInt(3)) {
            case 0 -> {
                GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(random.nextBoolean() ? "g" : null);
                for (int i = 0; i < points; i++) {
                    b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels(random, labelCount, i))
                            .value(number(random)).build());
                }
                return b.build();
            }
            case 1 -> {
                CounterSnapshot.Builder b = CounterSnapshot.builder().name(random.nextBoolean() ? name : name + "_total")
                        .help("c");
                for (int i = 0; i < points; i++) {
                    b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                            .labels(labels(random, labelCount, i)).value(Math.abs(number(random))).build());
                }
                return b.build();
            }
            default -> {
                InfoSnapshot.Builder b = InfoSnapshot.builder().name(name).help("i");
                for (int i = 0; i < points; i++) {
                    b.dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(labels(random, labelCount, i))
                            .build());
                }
                return b.build();
            }
        }
    }

    /** Distinct label sets (the last label carries the point's index, so no two points collide). */
    private static Labels labels(Random random, int count, int index) {
        Labels.Builder b = Labels.builder();
        for (int l = 0; l < count; l++) {
            b.label("l" + l, ODD_VALUES[random.nextInt(ODD_VALUES.length)]);
        }
        b.label("idx", Integer.toString(index));
        return b.build();
    }

    private static double number(Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> ODD_NUMBERS[random.nextInt(ODD_NUMBERS.length)];
            case 1 -> random.nextInt(20_000_000) - 10_000_000;
            case 2 -> random.nextDouble() * Math.pow(10, random.nextInt(30) - 10);
            default -> Double.longBitsToDouble(random.nextLong());
        };
    }

    // ---- the two writers --------------------------------------------------------------------------------------

    private static ExpositionFormatWriter writer(boolean openMetrics) {
        return openMetrics ? FORMATS.getOpenMetricsTextFormatWriter() : FORMATS.getPrometheusTextFormatWriter();
    }

    private static String ours(MetricSnapshots snapshots, boolean openMetrics) {
        return new String(new ExpositionText(writer(openMetrics), openMetrics).write(snapshots),
                StandardCharsets.UTF_8);
    }

    private static String library(MetricSnapshots snapshots, boolean openMetrics) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writer(openMetrics).write(out, snapshots);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
