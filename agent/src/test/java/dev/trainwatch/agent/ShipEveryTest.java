package dev.trainwatch.agent;

import dev.trainwatch.protocol.testing.RequiredFixtures;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.agent.ship.Backoff;
import dev.trainwatch.agent.ship.HttpTransport;
import dev.trainwatch.agent.ship.Sleeper;
import dev.trainwatch.agent.testing.FakeGpuReader;
import dev.trainwatch.agent.testing.QueueLog;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.testing.TestCollector;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --ship-every}: the readings of several polls travel in one batch, every reading exactly once and in order,
 * and what must not wait (events, a run that appears or ends, a non-finite loss, the agent stopping) does not.
 *
 * <p>Most cases poll by hand with the agent not started, so nothing is delivered: what the agent sent is then read
 * back, in order, from the spool it leaves on close — the exact sequence of requests, with no timing in the test.
 */
@org.junit.jupiter.api.parallel.Execution(org.junit.jupiter.api.parallel.ExecutionMode.CONCURRENT)
class ShipEveryTest {

    @TempDir
    Path dir;

    final TestCollector collector = new TestCollector();
    final List<Agent> agents = new ArrayList<>();
    final List<Process> processes = new ArrayList<>();

    @AfterEach
    void tearDown() {
        agents.forEach(Agent::close);
        collector.close();
        processes.forEach(Process::destroyForcibly);
    }

    AgentConfig config(Duration interval, Duration shipEvery, String runId) {
        return new AgentConfig(collector.uri(), "node1", null, runId, null, interval, null, dir.resolve("spool"),
                AgentConfig.DEFAULT_SPOOL_MAX_BYTES, Duration.ofSeconds(5), shipEvery, null, List.of());
    }

    Agent agent(AgentConfig config, GpuReader gpus, StepSource steps) throws Exception {
        return agent(config, gpus, steps, Clock.systemUTC());
    }

    Agent agent(AgentConfig config, GpuReader gpus, StepSource steps, Clock clock) throws Exception {
        Backoff quick = new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), Math::random);
        Agent agent = new Agent(config, gpus, steps, LinuxProcSource.system(),
                List.of(new HttpTransport(config.collector(), null, Duration.ofSeconds(5))), quick, Sleeper.system(),
                clock);
        agents.add(agent);
        return agent;
    }

    /** One request the agent made, as read back from its spool. */
    record Sent(String path, AgentBatch batch, List<StepEvent> steps) {
        /** The poll numbers whose readings the batch carries (each poll's 8 samples have ts = poll number). */
        List<Long> polls() {
            return batch.gpus().stream().filter(s -> s.index() == 0).map(s -> (long) s.ts()).toList();
        }
    }

    /** Every request left in the spool, oldest first. */
    List<Sent> spooled() throws IOException {
        List<Sent> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir.resolve("spool"))) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".json.gz")).sorted().toList()) {
                String file = f.getFileName().toString();
                String name = java.net.URLDecoder.decode(file.substring(0, file.length() - ".json.gz".length()),
                        java.nio.charset.StandardCharsets.UTF_8);
                try (InputStream in = new GZIPInputStream(Files.newInputStream(f))) {
                    byte[] body = in.readAllBytes();
                    if (name.contains("/v1/samples")) {
                        out.add(new Sent("/v1/samples", Json.MAPPER.readValue(body, AgentBatch.class), null));
                    } else if (name.contains("/steps")) {
                        out.add(new Sent(name.substring(name.indexOf("/v1/")), null,
                                Json.MAPPER.readValue(body, new TypeReference<List<StepEvent>>() { })));
                    } else {
                        out.add(new Sent(name.substring(name.indexOf("/v1/")), null, null));
                    }
                }
            }
        }
        return out;
    }

    static List<Long> range(long from, long to) {
        return java.util.stream.LongStream.rangeClosed(from, to).boxed().toList();
    }

    @Test
    void fivePollsTravelInOneBatchAfterTheFirstWhichGoesAtOnce() throws Exception {
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), null), gpus, null);
        for (int i = 0; i < 21; i++) {
            agent.pollOnce();
        }
        agent.close();

        List<Sent> sent = spooled();
        assertThat(sent).extracting(Sent::polls)
                .containsExactly(List.of(1L), range(2, 6), range(7, 11), range(12, 16), range(17, 21));
        assertThat(sent).extracting(s -> s.batch().seq()).isSorted().doesNotHaveDuplicates();
        // Each batch: all 8 GPUs of each of its polls, the polling interval in its health.
        assertThat(sent.get(1).batch().gpus()).hasSize(40);
        assertThat(sent.get(1).batch().health().intervalSeconds()).isEqualTo(1.0);
    }

    @Test
    void anEventGoesAtOnceWithTheReadingsHeldBeforeIt() throws Exception {
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), null), gpus, null);
        for (int i = 1; i <= 9; i++) {
            if (i == 4) {
                gpus.queueEvents(List.of(AgentEvent.xid(4, Samples.uuid(0), 79)));
            }
            agent.pollOnce();
        }
        agent.close();

        List<Sent> sent = spooled();
        assertThat(sent).extracting(Sent::polls).containsExactly(List.of(1L), range(2, 4), range(5, 9));
        assertThat(sent.get(1).batch().events()).extracting(AgentEvent::kind).containsExactly("xid");
    }

    @Test
    void aPollWithAHardwareSlowdownGoesAtOnceAndThePowerCapWaits() throws Exception {
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), null), gpus, null);
        gpus.reasons(java.util.Map.of(1, List.of("sw_power_cap"))); // a busy healthy GPU at its power limit
        for (int i = 1; i <= 12; i++) {
            if (i == 4) {
                gpus.reasons(java.util.Map.of(1, List.of("sw_power_cap"), 3, List.of("hw_thermal_slowdown")));
            } else if (i == 7) {
                gpus.reasons(java.util.Map.of(1, List.of("sw_power_cap")));
            }
            agent.pollOnce();
        }
        agent.close();

        assertThat(spooled()).extracting(Sent::polls).containsExactly(List.of(1L), range(2, 4), List.of(5L),
                List.of(6L), range(7, 11), List.of(12L));
    }

    /**
     * Some chassis assert a power brake also on idle GPUs (a failing supply keeps it asserted): an idle GPU's hardware
     * slowdown costs no run time and throttling does not count it, so it does not hurry the batch; once the GPU is
     * busy under it, it does.
     */
    @Test
    void anIdleGpusHardwareSlowdownWaitsForItsBatch() throws Exception {
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), null), gpus, null);
        gpus.reasons(java.util.Map.of(5, List.of("hw_slowdown", "hw_power_brake_slowdown")));
        gpus.utilization(java.util.Map.of(5, 0.0));
        for (int i = 1; i <= 12; i++) {
            if (i == 9) {
                gpus.utilization(java.util.Map.of(5, 0.49)); // below throttling's busy ratio: still not counted
            } else if (i == 11) {
                gpus.utilization(java.util.Map.of());
            }
            agent.pollOnce();
        }
        agent.close();

        assertThat(spooled()).extracting(Sent::polls).containsExactly(List.of(1L), range(2, 6), range(7, 11),
                List.of(12L));
    }

    @Test
    void stepsWaitForTheirBatchAndANonFiniteLossDoesNot() throws Exception {
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        QueueLog log = new QueueLog();
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), "run-a"), gpus, log);
        for (int i = 1; i <= 12; i++) {
            log.add(StepEvent.of(i * 10, 1.0, 1000 + i));
            if (i == 8) {
                log.add(new StepEvent(81L, 1.0, null, null, null, null, null, null, Double.NaN, null, null,
                        null, null, null, 1008.5, null));
            }
            agent.pollOnce();
        }
        agent.close();

        List<Sent> sent = spooled();
        // Batch, then the steps read over the same polls; the NaN at poll 8 sends polls 7-8 at once.
        assertThat(sent).extracting(Sent::path).containsExactly("/v1/samples", "/v1/runs/run-a/steps?agent_id="
                + agent.agentId(), "/v1/samples", "/v1/runs/run-a/steps?agent_id=" + agent.agentId(),
                "/v1/samples", "/v1/runs/run-a/steps?agent_id=" + agent.agentId(), "/v1/samples",
                "/v1/runs/run-a/steps?agent_id=" + agent.agentId());
        assertThat(sent.stream().filter(s -> s.batch() != null).map(Sent::polls))
                .containsExactly(List.of(1L), range(2, 6), range(7, 8), range(9, 12));
        assertThat(sent.stream().filter(s -> s.steps() != null).map(s -> s.steps().stream()
                .map(StepEvent::step).toList())).containsExactly(List.of(10L), List.of(20L, 30L, 40L, 50L, 60L),
                List.of(70L, 80L, 81L), List.of(90L, 100L, 110L, 120L));
    }

    /**
     * A real Sana log (issue 206's multi-scale run, shared corpus) whose steps turn to waiting on the online VAE and
     * text encoder, 22 % then 38 % of each step: the first report above the collector's 30 % goes at once and the
     * next ten polls follow one by one (the collector confirms a starved report by the GPUs' idle gaps in the 8 s
     * after it); the second goes at once; from the third on the run costs no more than a healthy one. The first
     * report goes at once too: it shows the run's first multi-scale bucket.
     */
    @Test
    void aRealSanaLogTurningToItsEncodersSendsItsFirstTwoStarvedReportsAtOnceAndHurriesAfterTheFirst()
            throws Exception {
        Path corpus = RequiredFixtures.corpusLog("sana_issue206_multiscale.txt");
        List<String> lines = Files.readAllLines(corpus).stream().filter(l -> l.contains("Global Step")).toList();
        assertThat(lines).hasSize(5);
        Path log = dir.resolve("train_log.log");
        Files.writeString(log, "");
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        dev.trainwatch.agent.log.LogTailer tailer = new dev.trainwatch.agent.log.LogTailer(log,
                dev.trainwatch.agent.log.StepLineParsers.forFormat("auto"), Clock.systemUTC(), Long.MAX_VALUE,
                dev.trainwatch.agent.log.LogTailer.DEFAULT_MAX_LINE_BYTES);
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), "sana"), gpus, tailer);
        java.util.Map<Integer, String> appendBefore = java.util.Map.of(4, lines.get(0), 10, lines.get(1),
                22, lines.get(2), 28, lines.get(3), 33, lines.get(4));
        List<Double> shares = new ArrayList<>();
        for (int i = 1; i <= 37; i++) {
            if (appendBefore.containsKey(i)) {
                Files.writeString(log, appendBefore.get(i) + "\n", java.nio.file.StandardOpenOption.APPEND);
            }
            agent.pollOnce();
        }
        agent.close();

        List<Sent> sent = spooled();
        sent.stream().filter(s -> s.batch() != null && s.batch().runSteps() != null)
                .forEach(s -> s.batch().runSteps().forEach(r -> r.steps().forEach(e -> shares.add(e.waitShare()))));
        sent.stream().filter(s -> s.steps() != null).forEach(s -> s.steps().forEach(e -> shares.add(e.waitShare())));
        assertThat(shares).hasSize(5);
        assertThat(shares.get(0)).isCloseTo(0.224, org.assertj.core.api.Assertions.within(0.001));
        assertThat(shares.subList(1, 5)).allSatisfy(share -> assertThat(share).isCloseTo(0.385,
                org.assertj.core.api.Assertions.within(0.001)));
        // Poll 4's report shows the run's first bucket, s:(20, 50): news for oom_risk, sent at once; the later
        // s:(26, 36) is smaller and is not.
        List<List<Long>> expected = new ArrayList<>(List.of(List.of(1L), range(2, 4), range(5, 9), List.of(10L)));
        for (long poll = 11; poll <= 20; poll++) {
            expected.add(List.of(poll)); // hurried after the first starved report
        }
        expected.addAll(List.of(range(21, 22), range(23, 27), range(28, 32), range(33, 37)));
        assertThat(sent.stream().filter(s -> s.batch() != null).map(Sent::polls)).containsExactlyElementsOf(expected);
    }

    /**
     * A collector that says it takes steps in batches gets them there from the next batch on (one request per batch,
     * not two); when it is replaced by an older one, the agent goes back to steps requests, and the steps of the
     * batches the older one took are sent again on their own: every step arrives exactly once, in order.
     */
    @Test
    void stepsTravelInTheBatchOnceTheCollectorTakesThemAndAloneAgainAfterADowngrade() throws Exception {
        collector.takesSteps(true);
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        QueueLog log = new QueueLog();
        Agent agent = agent(config(Duration.ofMillis(100), Duration.ofMillis(300), "run-a"), gpus, log);
        agent.start();
        long step = 0;
        while (step < 30) {
            log.add(Samples.withSource(StepEvent.of(++step, 1.0, 1000 + step), "log-a"));
            long sent = step;
            await().atMost(10, TimeUnit.SECONDS).until(() -> collector.steps("run-a").size() == sent);
        }
        // Only what went before the collector's first answer went alone; the rest came in batches.
        int alone = collector.stepRequests();
        assertThat(alone).isLessThanOrEqualTo(2);
        assertThat(collector.accepted().stream().filter(b -> b.runSteps() != null)
                .mapToLong(b -> b.runSteps().get(0).steps().size()).sum()).isEqualTo(30 - alone);

        collector.takesSteps(false); // an older collector now: it ignores run_steps
        int batchesBefore = collector.accepted().size();
        while (step < 60) {
            log.add(Samples.withSource(StepEvent.of(++step, 1.0, 1000 + step), "log-a"));
            long sent = step;
            await().atMost(10, TimeUnit.SECONDS).until(() -> collector.steps("run-a").size() == sent);
        }
        agent.close();
        assertThat(collector.steps("run-a")).extracting(StepEvent::step).containsExactlyElementsOf(range(1, 60));
        // After the first answer without steps_accepted no batch carries steps.
        List<AgentBatch> after = collector.accepted().subList(batchesBefore, collector.accepted().size());
        assertThat(after.stream().dropWhile(b -> b.runSteps() != null).filter(b -> b.runSteps() != null)).isEmpty();
        assertThat(agent.dropped()).isZero();
    }

    @Test
    void aRunThatAppearsOrEndsIsSentAtOnceAndNoReadingCrossesTheChange() throws Exception {
        Process training = new ProcessBuilder("sleep", "600").start();
        processes.add(training);
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        // The agent's clock moves a second a poll, as polls do: the process table is re-read on its schedule.
        java.util.concurrent.atomic.AtomicLong millis = new java.util.concurrent.atomic.AtomicLong(
                System.currentTimeMillis());
        Clock clock = new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return java.time.ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public java.time.Instant instant() {
                return java.time.Instant.ofEpochMilli(millis.get());
            }
        };
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), null), gpus, null, clock);
        for (int i = 1; i <= 14; i++) {
            millis.addAndGet(1000);
            if (i == 4) {
                gpus.pids(training.pid());
            }
            if (i == 10) {
                training.destroyForcibly();
                training.waitFor(10, TimeUnit.SECONDS);
                gpus.pids();
            }
            agent.pollOnce();
        }
        agent.close();

        List<Sent> sent = spooled();
        assertThat(sent.stream().flatMap(x -> x.polls().stream())).containsExactlyElementsOf(range(1, 14));
        // Polls 2-3 had no run: sent with their own (empty) attribution before poll 4, which names the run at once;
        // poll 10, where the GPU is free again, goes at once too.
        assertThat(sent.subList(0, 5)).extracting(Sent::polls).containsExactly(List.of(1L), range(2, 3), List.of(4L),
                range(5, 9), List.of(10L));
        assertThat(sent.get(1).batch().runs()).isEmpty();
        assertThat(sent.get(2).batch().runs()).singleElement()
                .satisfies(r -> assertThat(r.pids()).contains(training.pid()));
        assertThat(sent.get(4).batch().runs()).singleElement()
                .satisfies(r -> assertThat(r.gpuUuids()).isEmpty());
        // When the process table shows the run ended, that poll goes alone with its run_ended event.
        Sent ending = sent.stream().filter(x -> x.batch().events().stream()
                .anyMatch(e -> e.kind().equals("run_ended"))).findFirst().orElseThrow();
        assertThat(ending.polls()).hasSize(1);
        assertThat(ending.batch().runs()).singleElement().satisfies(r -> assertThat(r.ended()).isTrue());
        assertThat(sent).allSatisfy(x -> assertThat(x.polls()).hasSizeLessThanOrEqualTo(5));
    }

    @Test
    void stoppingSendsTheReadingsStillHeld() throws Exception {
        FakeGpuReader gpus = FakeGpuReader.withoutXids(8);
        Agent agent = agent(config(Duration.ofSeconds(1), Duration.ofSeconds(5), null), gpus, null);
        for (int i = 0; i < 3; i++) {
            agent.pollOnce();
        }
        agent.close();
        assertThat(spooled()).extracting(Sent::polls).containsExactly(List.of(1L), range(2, 3));
    }

    @Test
    void everyReadingArrivesExactlyOnceInOrderThroughACollectorOutage() throws Exception {
        FakeGpuReader gpus = new FakeGpuReader(8);
        Agent agent = agent(config(Duration.ofMillis(100), Duration.ofMillis(500), null), gpus, null);
        agent.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 4);
        collector.stop();
        long pollsAtStop = gpus.polls();
        await().atMost(20, TimeUnit.SECONDS).until(() -> gpus.polls() >= pollsAtStop + 20 && agent.pending() >= 3);
        collector.restart();
        long pollsAtRestart = gpus.polls();
        await().atMost(30, TimeUnit.SECONDS).until(() -> collector.accepted().stream()
                .mapToLong(b -> b.gpus().size() / 8).sum() >= pollsAtRestart + 10);
        agent.close();

        List<AgentBatch> accepted = collector.accepted();
        List<Long> polls = accepted.stream().flatMap(b -> b.gpus().stream()).filter(s -> s.index() == 0)
                .map(s -> (long) s.ts()).toList();
        assertThat(polls).containsExactlyElementsOf(range(1, gpus.polls()));
        assertThat(accepted).extracting(AgentBatch::seq).isSorted().doesNotHaveDuplicates();
        // Five polls a batch at most; fewer only where an XID (every tenth poll here) or the stop cut one short.
        assertThat(accepted).allSatisfy(b -> assertThat(b.gpus()).hasSizeLessThanOrEqualTo(40));
        assertThat(accepted.size()).isLessThan((int) (gpus.polls() / 2));
        assertThat(accepted.stream().flatMap(b -> b.events().stream()).filter(e -> e.kind().equals("xid")).count())
                .isEqualTo(gpus.polls() / 10 + (gpus.polls() % 10 >= 5 ? 1 : 0));
        assertThat(agent.dropped()).isZero();
    }

    /** 300 GPUs polled every 100 ms, sent every 10 s: a batch never holds more than 2,048 readings. */
    @Test
    void aBatchStaysUnderTheCollectorsLimitWhateverTheNode() throws Exception {
        FakeGpuReader gpus = new FakeGpuReader(300);
        Agent agent = agent(config(Duration.ofMillis(100), Duration.ofSeconds(10), null), gpus, null);
        for (int i = 0; i < 30; i++) {
            agent.pollOnce();
        }
        agent.close();
        List<Sent> sent = spooled();
        assertThat(sent).allSatisfy(x -> assertThat(x.batch().gpus()).hasSizeLessThanOrEqualTo(2048));
        assertThat(sent.stream().flatMap(x -> x.polls().stream())).containsExactlyElementsOf(range(1, 30));
        // Six polls of 300 readings fill a batch (1,800; a seventh would pass 2,048), unless an XID cut it first.
        assertThat(sent).anySatisfy(x -> assertThat(x.polls()).hasSize(6));
    }

    @Test
    void theConfigurationRefusesWhatCannotWork() {
        assertThatThrownBy(() -> config(Duration.ofSeconds(2), Duration.ofSeconds(1), null))
                .hasMessage("1s is shorter than the polling interval (2s); readings cannot be sent more often than "
                        + "they are taken");
        assertThatThrownBy(() -> config(Duration.ofSeconds(1), Duration.ofMillis(10_500), null))
                .hasMessageContaining("10.5s is above the maximum of 10s");
        // Polling slower than 10 s is allowed; sending every poll then is not "holding" anything.
        assertThat(config(Duration.ofSeconds(30), Duration.ofSeconds(30), null).shipEvery())
                .isEqualTo(Duration.ofSeconds(30));
        assertThat(Agent.pollsPerBatch(config(Duration.ofMillis(300), Duration.ofSeconds(1), null))).isEqualTo(3);
        assertThat(Agent.pollsPerBatch(config(Duration.ofSeconds(1), Duration.ofSeconds(1), null))).isEqualTo(1);
    }
}
