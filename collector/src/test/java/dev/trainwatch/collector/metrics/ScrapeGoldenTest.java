package dev.trainwatch.collector.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.testing.SettableClock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Pins the whole trainwatch part of the exposition for a fixed fleet and clock: names, units, types, labels,
 * absent readings and help texts as Prometheus sees them. To accept an intended change, run with
 * {@code -Dtrainwatch.updateGolden=true} and review the diff of {@code golden/scrape.txt}.
 */
class ScrapeGoldenTest {

    static final String GOLDEN = "golden/scrape.txt";

    @Test
    void scrapeOfFixedFleetMatchesGoldenFile() throws IOException {
        String actual = trainwatchPart(scenarioScrape());
        if (Boolean.getBoolean("trainwatch.updateGolden")) {
            Path file = Path.of("src/test/resources", GOLDEN);
            Files.createDirectories(file.getParent());
            Files.writeString(file, actual);
        }
        String expected;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(GOLDEN)) {
            assertThat(in).as("golden file " + GOLDEN).isNotNull();
            expected = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(actual).isEqualTo(expected);
    }

    /** The exposition of {@link ScrapeScenario} with its steps recorded, at the scenario's fixed time. */
    static String scenarioScrape() {
        return scenarioExporter().scrape();
    }

    /** An exporter of {@link ScrapeScenario}'s fleet with its steps and some ingest outcomes recorded. */
    static MetricsExporter scenarioExporter() {
        ScrapeScenario scenario = new ScrapeScenario();
        SettableClock clock = new SettableClock(Instant.ofEpochSecond((long) ScrapeScenario.NOW));
        MetricsExporter exporter = new MetricsExporter(() -> scenario.gpus, () -> scenario.runs,
                () -> scenario.agents, clock, false);
        exporter.runs().onStepsApplied(ScrapeScenario.RUN, ScrapeScenario.steps());
        exporter.self().ingestOutcome("ok");
        exporter.self().ingestOutcome("ok");
        exporter.self().ingestOutcome("duplicate");
        exporter.self().ingestOutcome("unprocessable");
        return exporter;
    }

    /** The lines of trainwatch's own families (samples and their HELP/TYPE lines). */
    static String trainwatchPart(String exposition) {
        return exposition.lines()
                .filter(line -> line.startsWith("trainwatch_") || line.startsWith("# HELP trainwatch_")
                        || line.startsWith("# TYPE trainwatch_"))
                .collect(Collectors.joining("\n", "", "\n"));
    }
}
