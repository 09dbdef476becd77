package dev.trainwatch.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An attached agent at the end of a real process it did not start: what its run_ended event says. */
class AttachedRunEndingIT {

    @TempDir
    Path dir;

    private Path log(List<String> lines) throws IOException {
        Path f = dir.resolve("log.txt");
        Files.write(f, lines);
        return f;
    }

    /**
     * DiT logs to its log.txt while its tracebacks go to stderr: a run whose processes vanish with nothing in the log
     * is reported as ended without a cause in the log, with the file its stderr went to.
     */
    @Test
    void aRunThatVanishesWithoutACauseInItsLogSaysSoAndWhereItsOutputWent() throws Exception {
        Path log = log(List.of("[2024-03-19 18:00:54] (step=0000100) Train Loss: 0.7197, Train Steps/Sec: 2.14"));
        Path stderr = dir.resolve("job.err");
        Process rank = new ProcessBuilder("sleep", "60").redirectOutput(stderr.toFile())
                .redirectError(stderr.toFile()).start();
        try (dev.trainwatch.protocol.testing.TestCollector collector = new dev.trainwatch.protocol.testing.TestCollector()) {
            AgentConfig config = new AgentConfig(collector.uri(), "node1", rank.pid(), "dit-1", null,
                    java.time.Duration.ofHours(1), null, dir.resolve("spool"), AgentConfig.DEFAULT_SPOOL_MAX_BYTES,
                    java.time.Duration.ofSeconds(5));
            try (Agent agent = new Agent(config, new dev.trainwatch.agent.testing.FakeGpuReader(1, rank.pid()),
                    dev.trainwatch.agent.log.LogTailer.open(log, "dit", java.time.Clock.systemUTC(), Long.MAX_VALUE,
                            dev.trainwatch.agent.log.LogTailer.LineTime.READ),
                    dev.trainwatch.agent.attribution.LinuxProcSource.system(),
                    List.of(new dev.trainwatch.agent.ship.HttpTransport(collector.uri(), null,
                            java.time.Duration.ofSeconds(5))),
                    new dev.trainwatch.agent.ship.Backoff(java.time.Duration.ofMillis(50), java.time.Duration.ofMillis(400),
                            Math::random), dev.trainwatch.agent.ship.Sleeper.system(), java.time.Clock.systemUTC())) {
                agent.start();
                agent.pollOnce();
                rank.destroyForcibly().waitFor();
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> {
                    agent.pollOnce();
                    return agent.attachedRunEnded();
                });
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> agent.pending() == 0);
            }
            List<dev.trainwatch.protocol.AgentEvent> events = collector.accepted().stream()
                    .flatMap(b -> b.events() == null ? java.util.stream.Stream.empty() : b.events().stream()).toList();
            assertThat(events).extracting(dev.trainwatch.protocol.AgentEvent::kind).contains("run_ended")
                    .doesNotContain("run_failed");
            dev.trainwatch.protocol.RunEnding ending = events.stream().filter(e -> e.kind().equals("run_ended"))
                    .findFirst().orElseThrow().ending();
            assertThat(ending.causeInLog()).isFalse();
            assertThat(ending.log()).isEqualTo(log.toAbsolutePath().normalize().toString());
            assertThat(ending.lastLine()).contains("(step=0000100)");
            assertThat(ending.outputs()).containsExactly(stderr.toAbsolutePath().normalize().toString());
        } finally {
            rank.destroyForcibly();
        }
    }

}
