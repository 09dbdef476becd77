package dev.trainwatch.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.agent.ship.Backoff;
import dev.trainwatch.agent.ship.HttpTransport;
import dev.trainwatch.agent.ship.Sleeper;
import dev.trainwatch.agent.ship.TokenFile;
import dev.trainwatch.agent.testing.FakeGpuReader;
import dev.trainwatch.protocol.testing.TestCollector;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's loop against a real HTTP collector stand-in that goes away and comes back. */
@org.junit.jupiter.api.parallel.Execution(org.junit.jupiter.api.parallel.ExecutionMode.CONCURRENT) // waits for batches; no NVML, no shared state
class AgentTest {

    @TempDir
    Path dir;

    final TestCollector collector = new TestCollector();
    final List<Agent> agents = new ArrayList<>();

    @AfterEach
    void tearDown() {
        agents.forEach(Agent::close);
        collector.close();
    }

    AgentConfig config(Duration interval, String runId, RunSpec spec) {
        return new AgentConfig(collector.uri(), "node1", null, runId, spec, interval, null, dir.resolve("spool"),
                AgentConfig.DEFAULT_SPOOL_MAX_BYTES, Duration.ofSeconds(5));
    }

    Agent agent(AgentConfig config, FakeGpuReader gpus, StepSource steps) throws Exception {
        Backoff quick = new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), Math::random);
        Agent agent = new Agent(config, gpus, steps, LinuxProcSource.system(),
                List.of(new HttpTransport(config.collector(), null, Duration.ofSeconds(5))), quick, Sleeper.system(),
                Clock.systemUTC());
        agents.add(agent);
        return agent;
    }

    /** Poll numbers (the fake reader's sample ts) in the order the collector applied them. */
    static List<Long> polls(List<AgentBatch> batches) {
        List<Long> polls = new ArrayList<>();
        for (AgentBatch batch : batches) {
            assertThat(batch.gpus()).hasSize(8);
            polls.add((long) batch.gpus().get(0).ts());
        }
        return polls;
    }

    static List<Long> oneTo(long n) {
        return LongStream.rangeClosed(1, n).boxed().toList();
    }

    @Test
    void everySampleTakenWhileTheCollectorWasDownArrivesExactlyOnceInOrder() throws Exception {
        FakeGpuReader gpus = new FakeGpuReader(8);
        Agent agent = agent(config(Duration.ofMillis(100), null, null), gpus, null);
        agent.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 5);

        collector.stop();
        long pollsAtStop = gpus.polls();
        await().atMost(20, TimeUnit.SECONDS).until(() -> gpus.polls() >= pollsAtStop + 15 && agent.pending() >= 10);
        collector.restart();
        long pollsAtRestart = gpus.polls();
        await().atMost(30, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= pollsAtRestart + 5);
        agent.close();

        List<AgentBatch> accepted = collector.accepted();
        assertThat(polls(accepted)).containsExactlyElementsOf(oneTo(gpus.polls()));
        assertThat(accepted).extracting(AgentBatch::seq).isSorted().doesNotHaveDuplicates();
        assertThat(accepted).extracting(AgentBatch::agentId).containsOnly(agent.agentId());
        assertThat(accepted.stream().mapToLong(b -> b.health().spoolDepth()).max().orElse(0)).isGreaterThan(5);
        assertThat(accepted.get(accepted.size() - 1).health().intervalSeconds()).isEqualTo(0.1);
        assertThat(accepted.stream().flatMap(b -> b.events().stream()).filter(e -> e.kind().equals("xid")).count())
                .isEqualTo(gpus.polls() / 10 + (gpus.polls() % 10 >= 5 ? 1 : 0));
        assertThat(agent.dropped()).isZero();
        assertThat(gpus.closed()).isTrue();
    }

    @Test
    void withTwoCollectorsEachGetsEveryBatchAndOneAwayGetsItsOwnBacklogWhileTheOtherIsServed() throws Exception {
        TestCollector second = new TestCollector();
        try {
            AgentConfig base = config(Duration.ofMillis(100), null, null);
            AgentConfig both = new AgentConfig(base.collector(), base.host(), null, null, null, base.interval(), null,
                    base.spoolDir(), base.spoolMaxBytes(), base.flushTimeout(), base.shipEvery(), null,
                    List.of(second.uri()));
            Backoff quick = new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), Math::random);
            FakeGpuReader gpus = new FakeGpuReader(8);
            Agent agent = new Agent(both, gpus, null, LinuxProcSource.system(),
                    List.of(new HttpTransport(collector.uri(), null, Duration.ofSeconds(5)),
                            new HttpTransport(second.uri(), null, Duration.ofSeconds(5))),
                    quick, Sleeper.system(), Clock.systemUTC());
            agents.add(agent);
            agent.start();
            await().atMost(20, TimeUnit.SECONDS).until(() -> second.accepted().size() >= 3);

            second.stop(); // one collector of the pair dies: the other is served on, the dead one's batches spool
            long pollsAtStop = gpus.polls();
            await().atMost(20, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= pollsAtStop + 10);
            assertThat(Files.list(both.spoolDir().resolve("collector-2")).count()).isPositive();
            second.restart();
            long pollsAtRestart = gpus.polls();
            await().atMost(30, TimeUnit.SECONDS).until(() -> second.accepted().size() >= pollsAtRestart + 3);
            agent.close();

            assertThat(polls(collector.accepted())).containsExactlyElementsOf(oneTo(gpus.polls()));
            assertThat(polls(second.accepted())).as("replayed in order once it was back")
                    .containsExactlyElementsOf(oneTo(gpus.polls()));
            assertThat(second.accepted()).extracting(AgentBatch::seq)
                    .containsExactlyElementsOf(collector.accepted().stream().map(AgentBatch::seq).toList());
            assertThat(agent.dropped()).isZero();
        } finally {
            second.close();
        }
    }

    @Test
    void anAgentWhoseReadingsAreServedKeepsItsNewestPollForItsExporter() throws Exception {
        FakeGpuReader gpus = new FakeGpuReader(8);
        Agent agent = agent(config(Duration.ofSeconds(1), null, null), gpus, null);
        agent.pollOnce();
        assertThat(agent.readings().gpus()).as("without --listen nothing is kept twice").isEmpty();
        agent.readings().serve();
        agent.pollOnce();
        assertThat(agent.readings().gpus()).hasSize(8)
                .allSatisfy(g -> assertThat(g.host()).isEqualTo("node1"));
    }

    @Test
    void aRestartedAgentKeepsItsIdContinuesItsSeqAndReplaysItsSpool() throws Exception {
        collector.stop();
        FakeGpuReader first = new FakeGpuReader(8);
        Agent agent = agent(config(Duration.ofSeconds(1), null, null), first, null);
        for (int i = 0; i < 6; i++) {
            agent.pollOnce();
        }
        String id = agent.agentId();
        agent.close();
        assertThat(Files.list(dir.resolve("spool")).filter(p -> p.toString().endsWith(".json.gz"))).hasSize(6);

        collector.restart();
        FakeGpuReader second = new FakeGpuReader(8);
        Agent restarted = agent(config(Duration.ofSeconds(1), null, null), second, null);
        assertThat(restarted.agentId()).isEqualTo(id);
        restarted.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 8);
        restarted.close();

        List<AgentBatch> accepted = collector.accepted();
        assertThat(accepted).extracting(AgentBatch::agentId).containsOnly(id);
        assertThat(accepted).extracting(AgentBatch::seq).isSorted().doesNotHaveDuplicates();
        // The first six are the first agent's polls 1..6, then the restarted agent's polls from 1.
        List<Long> polls = polls(accepted);
        assertThat(polls.subList(0, 6)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        assertThat(polls.subList(6, polls.size())).containsExactlyElementsOf(oneTo(second.polls()));
        assertThat(accepted.get(6).seq()).isGreaterThan(accepted.get(5).seq());
    }

    @Test
    void stepsAndTheSpecGoToTheNamedRun() throws Exception {
        dev.trainwatch.agent.testing.QueueLog logged = new dev.trainwatch.agent.testing.QueueLog();
        RunSpec spec = new RunSpec("pixart-sigma-xl-2", "a100-80gb", 8, 12, 1024, null, null, null, "bf16", "came",
                true, true, "precomputed", 0, null, null, 100_000L);
        Agent agent = agent(config(Duration.ofSeconds(1), "sigma-1024 run", spec), new FakeGpuReader(8), logged);
        logged.add(StepEvent.of(10, 2.5, 1000));
        logged.add(StepEvent.of(20, 2.4, 1025));
        agent.pollOnce();
        logged.add(StepEvent.of(30, 2.6, 1050));
        agent.pollOnce();
        agent.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.steps("sigma-1024 run").size() == 3);
        assertThat(collector.steps("sigma-1024 run")).extracting(StepEvent::step).containsExactly(10L, 20L, 30L);
        assertThat(collector.specs()).containsEntry("sigma-1024 run", spec);
    }

    @Test
    void theBearerTokenFromTheFileIsSent() throws Exception {
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, "s3cret-token\n");
        AgentConfig config = config(Duration.ofSeconds(1), null, null);
        Agent agent = new Agent(config, new FakeGpuReader(1), null, LinuxProcSource.system(),
                List.of(new HttpTransport(config.collector(), TokenFile.read(tokenFile), Duration.ofSeconds(5))),
                new Backoff(Duration.ofMillis(50), Duration.ofMillis(100), Math::random), Sleeper.system(),
                Clock.systemUTC());
        agents.add(agent);
        agent.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> !collector.accepted().isEmpty());
        assertThat(collector.authorizations()).first().isEqualTo("Bearer s3cret-token");
    }

    @Test
    void aBatchTheCollectorCallsBadIsDroppedAndCountedTheRestFlows() throws Exception {
        collector.answer(batch -> batch.gpus().get(0).ts() == 2.0 ? 422 : 200);
        FakeGpuReader gpus = new FakeGpuReader(2);
        Agent agent = agent(config(Duration.ofSeconds(1), null, null), gpus, null);
        for (int i = 0; i < 4; i++) {
            agent.pollOnce();
        }
        agent.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 4);
        List<Long> polls = new ArrayList<>();
        for (AgentBatch b : collector.accepted()) {
            GpuSample first = b.gpus().get(0);
            polls.add((long) first.ts());
        }
        assertThat(polls.subList(0, 3)).containsExactly(1L, 3L, 4L);
        assertThat(agent.dropped()).isEqualTo(1);
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.accepted().stream()
                .anyMatch(b -> b.health().droppedBatches() == 1));
    }

    @Test
    void stepsFromARealLogReachTheRunTheyBelongTo() throws Exception {
        Path log = dir.resolve("train_log.log");
        Files.writeString(log, "2024-05-14 09:14:03,180 - PixArt - INFO - Step/Epoch [1/1][1/70]:total_eta: 0:20:56, "
                + "epoch_eta:0:02:04, time_all:0.088, time_data:0.030, lr:2.000e-08, s:(96, 160), loss:0.1579, "
                + "grad_norm:0.5048\n");
        Agent agent = agent(config(Duration.ofSeconds(1), "pixart-run", null), new FakeGpuReader(8),
                dev.trainwatch.agent.log.LogTailer.open(log, "auto", Clock.systemUTC()));
        agent.pollOnce();
        Files.writeString(log, "2024-05-14 09:14:36,868 - PixArt - INFO - Step/Epoch [20/1][20/70]:total_eta: 0:20:22, "
                + "epoch_eta:0:01:30, time_all:1.696, time_data:0.580, lr:4.000e-07, s:(96, 160), loss:0.1554, "
                + "grad_norm:0.5144\n", java.nio.file.StandardOpenOption.APPEND);
        agent.pollOnce();
        Files.writeString(log, "2024-05-14 09:15:12,307 - PixArt - INFO - Step/Epoch [40/1][40/70]:total_eta: 0:19:46, "
                + "epoch_eta:0:00:54, time_all:1.754, time_data:0.610, lr:8.000e-07, s:(128, 128), loss:0.1552, "
                + "grad_norm:0.5495\n", java.nio.file.StandardOpenOption.APPEND);
        agent.start();
        // The tailer reports a step once it knows the interval it covers: steps 20 and 40.
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.steps("pixart-run").size() == 2);
        assertThat(collector.steps("pixart-run")).extracting(StepEvent::step).containsExactly(20L, 40L);
        assertThat(collector.steps("pixart-run").get(0).timeS()).isEqualTo(1.696);
        assertThat(collector.steps("pixart-run").get(0).dataTimeS()).isEqualTo(0.58);
    }
}
