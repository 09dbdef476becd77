package dev.trainwatch.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.ship.Backoff;
import dev.trainwatch.agent.ship.HttpTransport;
import dev.trainwatch.agent.ship.Sleeper;
import dev.trainwatch.agent.testing.FakeGpuReader;
import dev.trainwatch.protocol.testing.TestCollector;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.LogCapture;
import dev.trainwatch.protocol.testing.Python;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attached run without a spec: the agent reads the real process's command line and working directory from /proc,
 * and ships the spec they name with its notes; a program no reader knows gives no spec and no warning.
 */
@EnabledOnOs(OS.LINUX)
class CommandLineSpecTest {

    @TempDir
    Path dir;

    private final List<List<String>> argvSeen = new ArrayList<>();
    private final List<Path> cwdSeen = new ArrayList<>();

    /** Recognises kohya's Flux script by name, as the estimator's reader does, and records what it was given. */
    private Optional<CommandLineSpecs.Found> read(List<String> argv, Path cwd, Map<String, String> env) {
        argvSeen.add(argv);
        cwdSeen.add(cwd);
        if (argv.stream().noneMatch(a -> a.endsWith("flux_train_network.py"))) {
            return Optional.empty();
        }
        List<String> notes = List.of("dataset TOML dataset.toml not found; resolution, batch and frames from the flags only",
                "config_file /" + "deep/".repeat(120) + "flux.toml not readable: permission denied");
        return Optional.of(new CommandLineSpecs.Found(RunSpec.empty().overriddenBy(flux()).withTrainer("fp8", null).withNotes(notes), notes));
    }

    private static RunSpec flux() {
        return new RunSpec("flux.1-dev", null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null);
    }

    private Map<String, RunSpec> watch(Process process) throws Exception {
        try (TestCollector collector = new TestCollector(); LogCapture log = LogCapture.of(Agent.class.getName())) {
            AgentConfig config = new AgentConfig(collector.uri(), "node1", process.pid(), null, null, Duration.ofHours(1),
                    null, dir.resolve("spool"), AgentConfig.DEFAULT_SPOOL_MAX_BYTES, Duration.ofSeconds(5));
            try (Agent agent = new Agent(config, new FakeGpuReader(1, process.pid()), null, LinuxProcSource.system(),
                    List.of(new HttpTransport(collector.uri(), null, Duration.ofSeconds(5))),
                    new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), Math::random), Sleeper.system(),
                    Clock.systemUTC())) {
                agent.readSpecsFrom(this::read);
                agent.start();
                agent.pollOnce();
                agent.pollOnce();
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> agent.pending() == 0);
            }
            assertThat(log.messages()).noneMatch(m -> m.contains("no prediction"));
            return collector.specs();
        }
    }


    @Test
    void theSpecOfAnAttachedTrainerComesFromItsProcEntry() throws Exception {
        String python = Python.executable();
        Process trainer = new ProcessBuilder(python, "-c", "import time; time.sleep(60)", "flux_train_network.py",
                "--config_file", "flux.toml").directory(dir.toFile()).start();
        try {
            Map<String, RunSpec> specs = watch(trainer);
            assertThat(argvSeen).first().isEqualTo(List.of(python, "-c", "import time; time.sleep(60)",
                    "flux_train_network.py", "--config_file", "flux.toml"));
            assertThat(cwdSeen).first().isEqualTo(dir.toRealPath());
            assertThat(argvSeen).hasSize(1); // once per run, not every poll
            assertThat(specs.entrySet()).singleElement().satisfies(e -> {
                assertThat(e.getKey()).startsWith("node1-" + trainer.pid());
                assertThat(e.getValue().model()).isEqualTo("flux.1-dev");
                assertThat(e.getValue().baseWeights()).isEqualTo("fp8");
                assertThat(e.getValue().notes()).hasSize(2).first().asString().startsWith("dataset TOML");
                assertThat(e.getValue().notes().get(1)).hasSize(500).endsWith("…"); // what the collector takes
            });
        } finally {
            trainer.destroyForcibly();
        }
    }

    @Test
    void anUnknownProgramGivesNoSpecAndNoWarning() throws Exception {
        Process other = new ProcessBuilder("sleep", "60").directory(dir.toFile()).start();
        try {
            assertThat(watch(other)).isEmpty();
            assertThat(argvSeen).containsExactly(List.of("sleep", "60"));
        } finally {
            other.destroyForcibly();
        }
    }
}
