package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Limits protect live data: a full fleet forgets only ended, silent or expired spec-only entries, and refuses a new
 * one when every slot is live (issue: a burst of new run ids used to evict runs that were still training), and
 * refuses it before anything of its request is applied (issue #45: batches were answered 200 and their readings of
 * GPUs beyond the cap dropped; specs were answered 200 and forgotten to make room).
 */
class LiveRunLimitsTest {
    private static final long GIB = FakePredictor.GIB;

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, new FleetSettings(4, 4, 3,
            Duration.ofMinutes(10), 60, 16, Duration.ofSeconds(1), 5, Duration.ofHours(24)), DetectorSettings.defaults());

    private void step(String runId, long step) {
        fleet.ingestSteps(runId, List.of(StepEvent.of(step, 1.0, clock.seconds())));
    }

    private void fourLiveRuns() {
        for (int r = 0; r < 4; r++) {
            step("live-" + r, 1);
        }
    }

    private long refused(Slots.Kind kind) {
        return fleet.limits().stream().filter(u -> u.kind() == kind).findFirst().orElseThrow().refused();
    }

    private long forgotten(Slots.Kind kind) {
        return fleet.limits().stream().filter(u -> u.kind() == kind).findFirst().orElseThrow().forgotten();
    }

    @Test
    void aBurstOfNewRunIdsIsRefusedAndEveryLiveRunKeepsItsData() {
        fourLiveRuns();
        for (int i = 0; i < 200; i++) {
            clock.advance(Duration.ofMillis(500));
            String id = "burst-" + i;
            assertThatThrownBy(() -> step(id, 1)).isInstanceOfSatisfying(LimitReachedException.class, e -> {
                assertThat(e.kind()).isEqualTo(Slots.Kind.RUNS);
                assertThat(e.limit()).isEqualTo(4);
                assertThat(e.retryAfterSeconds()).isBetween(1L, 600L);
                assertThat(e.getMessage()).startsWith("run limit 4 reached: every slot holds a run that reported");
            });
            if (i % 10 == 0) {
                for (int r = 0; r < 4; r++) {
                    step("live-" + r, 2 + i);
                }
            }
        }
        assertThat(fleet.runs()).extracting(RunView::runId)
                .containsExactlyInAnyOrder("live-0", "live-1", "live-2", "live-3");
        assertThat(fleet.run("live-0").orElseThrow().observed().lastStep()).isEqualTo(192);
        assertThat(refused(Slots.Kind.RUNS)).isEqualTo(200);
        assertThat(forgotten(Slots.Kind.RUNS)).isZero();
        assertThat(fleet.limits().get(0).used()).isEqualTo(fleet.limits().get(0).limit());
    }

    @Test
    void theRetryAfterIsWhenTheLongestQuietLiveRunWouldCountAsSilent() {
        fourLiveRuns();
        clock.advance(Duration.ofSeconds(100));
        for (int r = 1; r < 4; r++) {
            step("live-" + r, 2);
        }
        assertThatThrownBy(() -> step("new", 1)).isInstanceOfSatisfying(LimitReachedException.class,
                e -> assertThat(e.retryAfterSeconds()).isEqualTo(500));
    }

    @Test
    void anEndedRunGivesItsSlotFirst() {
        fourLiveRuns();
        fleet.endRun("live-2");
        clock.advance(Duration.ofSeconds(1));
        step("new", 1);
        assertThat(fleet.runs()).extracting(RunView::runId)
                .containsExactlyInAnyOrder("live-0", "live-1", "live-3", "new");
        assertThat(forgotten(Slots.Kind.RUNS)).isEqualTo(1);
    }

    @Test
    void aRunSilentForTenMinutesGivesItsSlotButOneQuietForLessDoesNot() {
        fourLiveRuns();
        clock.advance(Duration.ofSeconds(599));
        for (int r = 1; r < 4; r++) {
            step("live-" + r, 2);
        }
        assertThatThrownBy(() -> step("new", 1)).isInstanceOf(LimitReachedException.class);
        clock.advance(Duration.ofSeconds(1));
        step("new", 1);
        assertThat(fleet.run("live-0")).isEmpty();
        assertThat(fleet.run("live-1")).isPresent();
    }

    private static RunSpec spec() {
        return new RunSpec("dit-xl-2", null, null, 8, 256, null, null, null, "bf16", "adamw", false, false, null, 0,
                null, null, null);
    }

    @Test
    void aSpecOnlyRunKeepsItsSlotUntilItsRetentionPassesAndTheNewRunIsRefusedMeanwhile() {
        for (int r = 0; r < 3; r++) {
            step("live-" + r, 1);
        }
        fleet.putSpec("planned", spec());
        clock.advance(Duration.ofMinutes(30));
        for (int r = 0; r < 3; r++) {
            step("live-" + r, 2);
        }
        assertThatThrownBy(() -> step("new", 1)).isInstanceOfSatisfying(LimitReachedException.class,
                e -> assertThat(e.kind()).isEqualTo(Slots.Kind.RUNS));
        assertThat(fleet.run("planned")).as("answered 200, so kept").isPresent();

        clock.advance(FleetSettings.DEFAULT_SPEC_RETENTION);
        for (int r = 0; r < 3; r++) {
            step("live-" + r, 3);
        }
        step("new", 1);
        assertThat(fleet.run("planned")).isEmpty();
        assertThat(forgotten(Slots.Kind.RUNS)).isEqualTo(1);
    }

    @Test
    void aSpecBeyondTheSpecLimitIsRefusedNotAcceptedAndForgotten() {
        // maxRuns 4 gives a spec limit of 1: one run may wait as a spec.
        fleet.putSpec("planned-1", spec());
        assertThatThrownBy(() -> fleet.putSpec("planned-2", spec())).isInstanceOfSatisfying(
                LimitReachedException.class, e -> {
                    assertThat(e.kind()).isEqualTo(Slots.Kind.SPECS);
                    assertThat(e.retryAfterSeconds()).isBetween(1L, 600L);
                    assertThat(e.getMessage()).startsWith("spec limit 1 reached");
                });
        assertThat(fleet.run("planned-2")).isEmpty();
        assertThat(fleet.run("planned-1")).isPresent();
        assertThat(refused(Slots.Kind.SPECS)).isEqualTo(1);
        assertThat(fleet.refusing()).containsExactly("specs");

        step("planned-1", 1); // its run reports: no longer only a spec
        fleet.putSpec("planned-2", spec());
        assertThat(fleet.run("planned-2")).isPresent();
    }

    @Test
    void aSpecPastItsRetentionGivesItsSpecSlotAndTheRetryIsWhenItWill() {
        // maxRuns 4 gives a spec limit of 1.
        fleet.putSpec("planned-1", spec());
        clock.advance(FleetSettings.DEFAULT_SPEC_RETENTION.minusSeconds(100));
        assertThatThrownBy(() -> fleet.putSpec("planned-2", spec())).isInstanceOfSatisfying(
                LimitReachedException.class, e -> assertThat(e.retryAfterSeconds()).isEqualTo(100));
        clock.advance(Duration.ofSeconds(99));
        assertThatThrownBy(() -> fleet.putSpec("planned-2", spec())).isInstanceOfSatisfying(
                LimitReachedException.class, e -> assertThat(e.retryAfterSeconds()).isEqualTo(1));
        assertThat(fleet.run("planned-1")).isPresent();

        clock.advance(Duration.ofSeconds(1));
        fleet.putSpec("planned-2", spec());
        assertThat(fleet.run("planned-1")).as("past its retention").isEmpty();
        assertThat(fleet.run("planned-2")).isPresent();
        assertThat(forgotten(Slots.Kind.SPECS)).isEqualTo(1);
        assertThat(refused(Slots.Kind.SPECS)).isEqualTo(2);
    }

    @Test
    void anAgentBatchForANewRunIsRefusedWholeWhileEveryRunIsLiveAndTakenWhenRetried() {
        fourLiveRuns();
        double t = clock.seconds();
        var refusedBatch = batch("node1", "agent-a", 1, List.of(gpu(t, 0, "GPU-0", 30 * GIB, 0.9)),
                List.of(attribution("fifth", List.of("GPU-0"))), List.of());
        assertThatThrownBy(() -> fleet.ingestBatch(refusedBatch)).isInstanceOfSatisfying(LimitReachedException.class,
                e -> assertThat(e.kind()).isEqualTo(Slots.Kind.RUNS));
        assertThat(fleet.run("fifth")).isEmpty();
        assertThat(fleet.gpus()).as("nothing of the refused batch applied").isEmpty();
        assertThat(fleet.agents()).isEmpty();
        assertThat(refused(Slots.Kind.RUNS)).isEqualTo(1);

        fleet.endRun("live-1");
        IngestResult retried = fleet.ingestBatch(refusedBatch); // the agent's spool sends the same seq again
        assertThat(retried.duplicate()).isFalse();
        assertThat(fleet.run("fifth")).isPresent();
        assertThat(fleet.gpus()).singleElement().satisfies(g -> assertThat(g.uuid()).isEqualTo("GPU-0"));
    }

    @Test
    void aBatchBringingNewGpusIsRefusedWholeWhileEveryGpuSlotIsLiveAndTakesASilentOnesSlotLater() {
        double t = clock.seconds();
        fleet.ingestBatch(batch("node1", "agent-a", 1, List.of(gpu(t, 0, "GPU-0", GIB, 0.9),
                gpu(t, 1, "GPU-1", GIB, 0.9), gpu(t, 2, "GPU-2", GIB, 0.9), gpu(t, 3, "GPU-3", GIB, 0.9)),
                List.of(), List.of()));
        var fifthGpu = batch("node2", "agent-b", 1, List.of(gpu(t, 0, "GPU-4", GIB, 0.9)), List.of(), List.of());
        assertThatThrownBy(() -> fleet.ingestBatch(fifthGpu)).isInstanceOfSatisfying(LimitReachedException.class,
                e -> {
                    assertThat(e.kind()).isEqualTo(Slots.Kind.GPUS);
                    assertThat(e.retryAfterSeconds()).isEqualTo(600);
                });
        assertThat(fleet.gpus()).extracting(GpuView::uuid).containsExactlyInAnyOrder("GPU-0", "GPU-1", "GPU-2", "GPU-3");
        assertThat(fleet.agents()).as("the refused agent is not tracked either").hasSize(1);
        assertThat(refused(Slots.Kind.GPUS)).isEqualTo(1);
        assertThat(fleet.refusing()).containsExactly("gpus");

        clock.advance(Duration.ofSeconds(600));
        assertThat(fleet.refusing()).as("refusals older than two minutes").isEmpty();
        double later = clock.seconds();
        fleet.ingestBatch(batch("node1", "agent-a", 2, List.of(gpu(later, 1, "GPU-1", GIB, 0.9),
                gpu(later, 2, "GPU-2", GIB, 0.9), gpu(later, 3, "GPU-3", GIB, 0.9)), List.of(), List.of()));
        fleet.ingestBatch(fifthGpu);
        assertThat(fleet.gpus()).extracting(GpuView::uuid).containsExactlyInAnyOrder("GPU-1", "GPU-2", "GPU-3", "GPU-4");
        assertThat(forgotten(Slots.Kind.GPUS)).isEqualTo(1);
    }

    @Test
    void aNewAgentIsRefusedWhileEveryAgentIsLive() {
        for (int a = 0; a < 3; a++) {
            fleet.ingestBatch(batch("node" + a, "agent-" + a, 1, List.of(), List.of(), List.of()));
        }
        assertThatThrownBy(() -> fleet.ingestBatch(batch("node9", "agent-9", 1, List.of(), List.of(), List.of())))
                .isInstanceOfSatisfying(LimitReachedException.class,
                        e -> assertThat(e.kind()).isEqualTo(Slots.Kind.AGENTS));
        assertThat(fleet.agents()).extracting(AgentView::agentId)
                .containsExactlyInAnyOrder("agent-0", "agent-1", "agent-2");
        clock.advance(Duration.ofMinutes(10));
        fleet.ingestBatch(batch("node9", "agent-9", 1, List.of(), List.of(), List.of()));
        assertThat(fleet.agents()).hasSize(3).extracting(AgentView::agentId).contains("agent-9");
    }

    @Test
    void rankWindowsOfAllRunsTogetherAreBoundedByTheGpuLimitAndFreedWhenTheirRunIsForgotten() {
        // The fleet tracks 4 GPUs, so 4 rank windows in all: run "wide" takes them; "other"'s ranks are refused.
        for (int r = 0; r < 6; r++) {
            fleet.ingestSteps("wide", List.of(new StepEvent(1L, 1.0, null, null, null, null, null, null, null, null,
                    null, null, null, r, clock.seconds(), null)));
        }
        fleet.ingestSteps("other", List.of(new StepEvent(1L, 1.0, null, null, null, null, null, null, null, null,
                null, null, null, 0, clock.seconds(), null)));
        assertThat(fleet.limits()).filteredOn(u -> u.kind() == Slots.Kind.RANKS).singleElement().satisfies(u -> {
            assertThat(u.used()).isEqualTo(4);
            assertThat(u.limit()).isEqualTo(4);
            assertThat(u.refused()).isEqualTo(3);
        });
        assertThat(fleet.run("other").orElseThrow().observed().lastStep()).as("its step still counts").isEqualTo(1);

        fleet.endRun("wide");
        step("a", 1);
        step("b", 1);
        step("c", 1); // the ended run gives its slot, and its rank windows go with it
        assertThat(fleet.run("wide")).isEmpty();
        fleet.ingestSteps("other", List.of(new StepEvent(2L, 1.0, null, null, null, null, null, null, null, null,
                null, null, null, 0, clock.seconds(), null)));
        assertThat(fleet.limits()).filteredOn(u -> u.kind() == Slots.Kind.RANKS).singleElement()
                .satisfies(u -> assertThat(u.used()).isEqualTo(1));
    }
}
