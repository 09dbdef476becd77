package dev.trainwatch.collector.metrics;

import dev.trainwatch.protocol.testing.RequiredFixtures;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Lints trainwatch's own series with Prometheus' {@code promtool check metrics} (Debian package {@code prometheus},
 * installed by .ci/install-deps). Skipped, saying why, only when promtool is not on this machine.
 */
class PromtoolCheckMetricsIT {

    @Test
    void promtoolFindsNothingToComplainAboutInTrainwatchSeries() throws Exception {
        Path promtool = Stream.of(System.getenv("PATH").split(":")).map(dir -> Path.of(dir, "promtool"))
                .filter(Files::isExecutable).findFirst().orElse(null);
        RequiredFixtures.require(promtool != null, "promtool (Debian package 'prometheus'; .ci/install-deps)");

        String trainwatchPart = ScrapeGoldenTest.trainwatchPart(ScrapeGoldenTest.scenarioScrape());
        assertThat(trainwatchPart).contains("trainwatch_run_step_seconds_count");
        Process process = new ProcessBuilder(promtool.toString(), "check", "metrics").redirectErrorStream(true)
                .start();
        try (OutputStream in = process.getOutputStream()) {
            in.write(trainwatchPart.getBytes(StandardCharsets.UTF_8));
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(output).as("promtool output").isBlank();
        assertThat(process.exitValue()).as("promtool exit status; output: " + output).isZero();
    }

    @Test
    void theJvmSeriesDoNotHideTrainwatchProblems() throws IOException {
        // The full scrape (with JVM metrics) must at least parse; promtool's lint of Micrometer's JVM names is
        // not trainwatch's to fix, so only trainwatch's part is linted strictly above.
        MetricsExporter exporter = new MetricsExporter(java.util.List::of, java.util.List::of, java.util.List::of,
                java.time.Clock.systemUTC(), true);
        String scrape = exporter.scrape();
        assertThat(scrape).contains("jvm_memory_used_bytes").contains("trainwatch_ingest_requests_total");
        scrape.lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                .forEach(l -> assertThat(l).matches("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{.*\\})? \\S+( \\S+)?"));
    }
}
