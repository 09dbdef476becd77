package dev.trainwatch.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.log.LogTailer;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.agent.ship.Backoff;
import dev.trainwatch.agent.ship.HttpTransport;
import dev.trainwatch.agent.ship.Sleeper;
import dev.trainwatch.agent.testing.FakeGpuReader;
import dev.trainwatch.protocol.testing.TestCollector;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's loop against inputs that used to stop it: a log read that never returns, restarts, a bad spool. */
@org.junit.jupiter.api.parallel.Execution(org.junit.jupiter.api.parallel.ExecutionMode.CONCURRENT) // waits for batches; no NVML, no shared state
class AgentRobustnessTest {

    @TempDir
    Path dir;

    final TestCollector collector = new TestCollector();
    final List<Agent> agents = new ArrayList<>();

    @AfterEach
    void tearDown() {
        agents.forEach(Agent::close);
        collector.close();
    }

    AgentConfig config(Duration interval, String runId, Path spool) {
        return new AgentConfig(collector.uri(), "node1", null, runId, null, interval, null, spool,
                AgentConfig.DEFAULT_SPOOL_MAX_BYTES, Duration.ofSeconds(5));
    }

    Agent agent(AgentConfig config, StepSource steps) throws Exception {
        return agent(config, new FakeGpuReader(2), steps);
    }

    Agent agent(AgentConfig config, dev.trainwatch.agent.gpu.GpuReader gpus, StepSource steps) throws Exception {
        Agent agent = new Agent(config, gpus, steps, LinuxProcSource.system(),
                List.of(new HttpTransport(config.collector(), null, Duration.ofSeconds(5))),
                new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), Math::random), Sleeper.system(),
                Clock.systemUTC());
        agents.add(agent);
        return agent;
    }

    @Test
    void aLogReadThatNeverReturnsDoesNotStopTheGpuBatches() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        StepSource hung = new StepSource() {
            @Override
            public List<StepEvent> poll() {
                try {
                    never.await(); // as open() of a FIFO without a writer, or a hung mount
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return List.of();
            }

            @Override
            public String problem() {
                return null;
            }

            @Override
            public void close() {
            }
        };
        Agent agent = agent(config(Duration.ofMillis(100), "run", dir.resolve("spool")), hung);
        agent.start();
        try {
            await().atMost(30, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 20);
            // The hang is visible in the agent's health.
            await().atMost(30, TimeUnit.SECONDS).until(() -> {
                List<AgentBatch> all = collector.accepted();
                AgentBatch last = all.get(all.size() - 1);
                return Boolean.FALSE.equals(last.health().logReadable())
                        && last.health().lastError() != null && last.health().lastError().contains("has not returned");
            });
        } finally {
            never.countDown();
        }
    }

    /** The fake's GPUs, with {@code hook} run on the poll thread before each read (it may throw). */
    static dev.trainwatch.agent.gpu.GpuReader beforeEachRead(FakeGpuReader gpus, Runnable hook) {
        return new dev.trainwatch.agent.gpu.GpuReader() {
            @Override
            public List<dev.trainwatch.protocol.GpuSample> readAll() {
                hook.run();
                return gpus.readAll();
            }

            @Override
            public List<dev.trainwatch.protocol.AgentEvent> drainEvents() {
                return gpus.drainEvents();
            }

            @Override
            public long failedReads() {
                return gpus.failedReads();
            }

            @Override
            public String driverVersion() {
                return gpus.driverVersion();
            }

            @Override
            public void close() {
                gpus.close();
            }
        };
    }

    @Test
    void pollsThatThrowDoNotStopPollingAndCloseEndsThePollThread() throws Exception {
        AgentConfig config = config(Duration.ofMillis(100), "run", dir.resolve("spool"));
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<Thread> pollThread = new java.util.concurrent.atomic.AtomicReference<>();
        Agent agent = agent(config, beforeEachRead(new FakeGpuReader(2), () -> {
            pollThread.set(Thread.currentThread());
            int n = reads.incrementAndGet();
            if (n == 2) {
                throw new UnsatisfiedLinkError("nvmlDeviceGetMemoryInfo_v2"); // a symbol gone after an upgrade
            }
            if (n == 3) {
                throw new IllegalStateException("a bug");
            }
        }), null);
        agent.start();
        await().atMost(30, TimeUnit.SECONDS).until(() -> reads.get() >= 8 && collector.accepted().size() >= 4);
        assertThat(collector.accepted().get(collector.accepted().size() - 1).health().failedReads())
                .as("the two polls that threw are counted in the agent's health").isEqualTo(2);
        agent.close();
        // close() returns after the poll thread ended, so no read can come after it.
        assertThat(pollThread.get().isAlive()).as("the poll thread after close()").isFalse();
    }

    @Test
    void aPollThatLeavesItsThreadInterruptedDoesNotMakeThePollsSpin() throws Exception {
        AgentConfig config = config(Duration.ofMillis(100), "run", dir.resolve("spool"));
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<Thread> pollThread = new java.util.concurrent.atomic.AtomicReference<>();
        Agent agent = agent(config, beforeEachRead(new FakeGpuReader(1), () -> {
            reads.incrementAndGet();
            pollThread.set(Thread.currentThread());
            Thread.currentThread().interrupt(); // as code that caught an InterruptedException and restored it
        }), null);
        agent.start();
        await().atMost(30, TimeUnit.SECONDS).until(() -> reads.get() >= 2);
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        long thread = pollThread.get().getId();
        long cpuBefore = cpu.getThreadCpuTime(thread);
        long wallBefore = System.nanoTime();
        await().atMost(30, TimeUnit.SECONDS).until(() -> reads.get() >= 12);
        long cpuUsed = cpu.getThreadCpuTime(thread) - cpuBefore;
        long wall = System.nanoTime() - wallBefore;
        // Between polls the thread sleeps; with every park returning at once it would burn its whole wait.
        assertThat((double) cpuUsed / wall).as("the poll thread's share of a core between polls").isLessThan(0.5);
    }

    @Test
    void everyBatchCarriesTheAgentsHealthAndSendTime() throws Exception {
        Path log = dir.resolve("missing.log");
        Agent agent = agent(config(Duration.ofMillis(100), "run", dir.resolve("spool")),
                LogTailer.open(log, "auto", Clock.systemUTC()));
        double before = System.currentTimeMillis() / 1000.0;
        agent.start();
        await().atMost(30, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 3);
        AgentBatch batch = collector.accepted().get(2);
        assertThat(batch.sentAt()).isBetween(before, System.currentTimeMillis() / 1000.0);
        assertThat(batch.health().deliveryAlive()).isTrue();
        assertThat(batch.health().spoolInMemory()).isFalse();
        assertThat(batch.health().rejectedSpoolEntries()).isZero();
        assertThat(batch.health().logReadable()).isFalse();
        assertThat(batch.health().lastError()).isEqualTo("log file " + log + " does not exist yet; waiting for it");
    }

    /** DiT's logger line for a step. */
    static String dit(long step) {
        return String.format("[2024-03-01 10:%02d:%02d] (step=%07d) Train Loss: 0.1500, Train Steps/Sec: 0.50%n",
                step * 2 / 60 % 60, step * 2 % 60, step);
    }

    static void appendSteps(Path log, long from, long to) throws Exception {
        StringBuilder text = new StringBuilder();
        for (long s = from; s <= to; s++) {
            text.append(dit(s));
        }
        Files.writeString(log, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void aRestartedAgentShipsOnlyTheStepsLoggedSince() throws Exception {
        Path log = dir.resolve("log.txt");
        Path spool = dir.resolve("spool");
        appendSteps(log, 1, 30);
        for (int restart = 0; restart < 4; restart++) {
            Agent agent = agent(config(Duration.ofMillis(100), "dit-run", spool),
                    LogTailer.open(log, "dit", Clock.systemUTC()));
            agent.start();
            int expected = 30 + restart;
            await().atMost(30, TimeUnit.SECONDS).until(() -> collector.steps("dit-run").size() >= expected);
            agent.close(); // commits what was delivered

            appendSteps(log, 31 + restart, 31 + restart);
        }
        // 30 lines, then one per restart: before, every restart read the last 8 MB again (30, 61, 93, ...).
        assertThat(collector.steps("dit-run")).extracting(StepEvent::step)
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, 33).boxed().toList());
    }

    @Test
    void aSpoolDirectoryThatCannotBeWrittenAtStartStillMonitors() throws Exception {
        Path file = dir.resolve("file");
        Files.writeString(file, "x");
        Agent agent = agent(config(Duration.ofMillis(100), null, file.resolve("spool")), null);
        agent.start();
        await().atMost(30, TimeUnit.SECONDS).until(() -> collector.accepted().size() >= 3);
        assertThat(collector.accepted().get(2).health().spoolInMemory()).isTrue();
        assertThat(collector.accepted().get(2).health().lastError())
                .isEqualTo("cannot write the spool directory " + file.resolve("spool") + " (Not a directory)");
    }
}
