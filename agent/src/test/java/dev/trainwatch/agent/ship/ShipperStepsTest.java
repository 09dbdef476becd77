package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.Samples;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Steps in batches ({@code run_steps}): the shipper learns from each batch's answer whether its collector takes
 * them; when an older collector took a batch that carried steps (it ignores the field), the steps go again in their
 * own request, and the batch counts as settled only once they do — nothing read from the log is lost to a
 * downgrade, also for batches a previous agent left in the spool.
 */
class ShipperStepsTest {

    @TempDir
    Path dir;

    /** A collector that answers every request by its path; records the requests it took. */
    static final class Collector implements Transport {
        final List<Shipment> taken = new CopyOnWriteArrayList<>();
        volatile Function<Shipment, String> answer = s -> "{}";

        @Override
        public Response send(Shipment shipment) {
            taken.add(shipment);
            return new Response(200, answer.apply(shipment));
        }
    }

    static final String NEW_COLLECTOR = "{\"agent_id\":\"agent-1\",\"seq\":1,\"duplicate\":false,\"gpus\":0,"
            + "\"readings\":0,\"steps_accepted\":2}";
    static final String OLD_COLLECTOR = "{\"agent_id\":\"agent-1\",\"seq\":1,\"duplicate\":false,\"gpus\":0,"
            + "\"readings\":0}";

    static AgentBatch batch(long seq, List<RunSteps> steps) {
        return new AgentBatch("node-1", "agent-1", seq, List.of(), List.of(), List.of(), null, null, 1.0e9, steps);
    }

    static List<RunSteps> steps(String run, long... numbers) {
        List<StepEvent> out = new java.util.ArrayList<>();
        for (long n : numbers) {
            out.add(Samples.withSource(StepEvent.of(n, 1.0, 1.0e9 + n), "log-1"));
        }
        return List.of(new RunSteps(run, out));
    }

    static List<StepEvent> stepsIn(Shipment s) throws IOException {
        try (var in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(s.gzipBody()))) {
            return List.of(Json.MAPPER.readValue(in, StepEvent[].class));
        }
    }

    Shipper shipper(Collector collector) {
        Shipper s = new Shipper(collector, new Spool(dir, 1 << 20),
                new Backoff(Duration.ofMillis(10), Duration.ofMillis(50), () -> 0.0), d -> Thread.sleep(5));
        s.start();
        return s;
    }

    @Test
    void eachBatchsAnswerSaysWhetherTheCollectorTakesSteps() throws Exception {
        Collector collector = new Collector();
        Shipper shipper = shipper(collector);
        assertThat(shipper.collectorTakesSteps()).isFalse();
        collector.answer = s -> NEW_COLLECTOR;
        shipper.submit(Payload.samples(batch(1, null)));
        await().atMost(10, TimeUnit.SECONDS).until(shipper::collectorTakesSteps);
        collector.answer = s -> OLD_COLLECTOR; // downgraded
        shipper.submit(Payload.samples(batch(2, null)));
        await().atMost(10, TimeUnit.SECONDS).until(() -> !shipper.collectorTakesSteps());
        shipper.close();
        assertThat(collector.taken).extracting(Shipment::path).containsOnly(Payload.SAMPLES_PATH);
    }

    @Test
    void stepsAnOlderCollectorIgnoredGoAgainInTheirOwnRequestBeforeTheBatchCountsAsSettled() throws Exception {
        Collector collector = new Collector();
        AtomicBoolean settledBeforeSteps = new AtomicBoolean();
        AtomicBoolean settled = new AtomicBoolean();
        collector.answer = s -> {
            if (!s.path().equals(Payload.SAMPLES_PATH) && settled.get()) {
                settledBeforeSteps.set(true);
            }
            return s.path().equals(Payload.SAMPLES_PATH) ? OLD_COLLECTOR : "{\"accepted\":2}";
        };
        Shipper shipper = shipper(collector);
        shipper.submit(Payload.samples(batch(1, steps("run-a", 7, 8))), () -> settled.set(true));
        await().atMost(10, TimeUnit.SECONDS).until(settled::get);
        shipper.close();
        assertThat(settledBeforeSteps).isFalse();
        assertThat(collector.taken).hasSize(2);
        Shipment resent = collector.taken.get(1);
        assertThat(resent.path()).isEqualTo("/v1/runs/run-a/steps?agent_id=agent-1");
        assertThat(stepsIn(resent)).extracting(StepEvent::step).containsExactly(7L, 8L);
        assertThat(stepsIn(resent)).extracting(StepEvent::source).containsOnly("log-1");
        assertThat(shipper.dropped()).isZero();
    }

    @Test
    void stepsSentAgainGoBeforeAnythingQueuedBehindTheirBatch() throws Exception {
        // The collector counts a log's steps in order: steps 7-8 sent again after step 9's request would be dropped
        // as old. So they go next, ahead of what was queued while their batch was in flight.
        java.util.concurrent.CountDownLatch queued = new java.util.concurrent.CountDownLatch(1);
        Collector collector = new Collector();
        collector.answer = s -> {
            if (s.what().startsWith("samples seq 1")) {
                try {
                    queued.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return s.path().equals(Payload.SAMPLES_PATH) ? OLD_COLLECTOR : "{\"accepted\":1}";
        };
        Shipper shipper = shipper(collector);
        shipper.submit(Payload.samples(batch(1, steps("run-a", 7, 8))));
        shipper.submit(Payload.samples(batch(2, null)));
        shipper.submit(Payload.steps("run-a", steps("run-a", 9).get(0).steps(), "agent-1"));
        queued.countDown();
        await().atMost(10, TimeUnit.SECONDS).until(() -> collector.taken.size() == 4 && shipper.pending() == 0);
        shipper.close();
        assertThat(collector.taken).extracting(Shipment::what).satisfiesExactly(
                w -> assertThat(w).isEqualTo("samples seq 1 with 2 steps"),
                w -> assertThat(w).startsWith("2 steps of run run-a (again"),
                w -> assertThat(w).isEqualTo("samples seq 2"),
                w -> assertThat(w).isEqualTo("1 steps of run run-a"));
    }

    @Test
    void aNewCollectorsAnswerSendsNothingAgainAndItsRefusalIsCounted() throws Exception {
        Collector collector = new Collector();
        collector.answer = s -> s.what().contains("seq 2")
                ? NEW_COLLECTOR.replace("\"steps_accepted\":2", "\"steps_accepted\":0,\"steps_refused\":"
                        + "\"run_steps[0].steps[0].time_s must be > 0\"") : NEW_COLLECTOR;
        Shipper shipper = shipper(collector);
        shipper.submit(Payload.samples(batch(1, steps("run-a", 1, 2))));
        shipper.submit(Payload.samples(batch(2, steps("run-a", 3))));
        await().atMost(10, TimeUnit.SECONDS).until(() -> collector.taken.size() == 2 && shipper.pending() == 0);
        shipper.close();
        assertThat(collector.taken).extracting(Shipment::path).containsOnly(Payload.SAMPLES_PATH);
        assertThat(shipper.refusedBatchSteps()).isEqualTo(1);
    }

    @Test
    void aBatchWithStepsThatAPreviousAgentSpooledIsSplitForAnOlderCollectorToo() throws Exception {
        // A previous agent (a newer collector then) spooled a batch with steps and stopped.
        Spool left = new Spool(dir, 1 << 20);
        Payload p = Payload.samples(batch(5, steps("run-b", 40, 41, 42)));
        left.append(new Shipment(1, p.method(), p.path(), p.gzipBody(), p.what()));

        Collector collector = new Collector();
        collector.answer = s -> s.path().equals(Payload.SAMPLES_PATH) ? OLD_COLLECTOR : "{\"accepted\":3}";
        Shipper shipper = shipper(collector);
        await().atMost(10, TimeUnit.SECONDS).until(() -> collector.taken.size() == 2 && shipper.pending() == 0);
        shipper.close();
        assertThat(collector.taken.get(1).path()).isEqualTo("/v1/runs/run-b/steps?agent_id=agent-1");
        assertThat(stepsIn(collector.taken.get(1))).extracting(StepEvent::step).containsExactly(40L, 41L, 42L);
    }
}
