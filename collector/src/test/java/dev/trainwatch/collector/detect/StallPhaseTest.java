package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.ScenarioPlayer.Result;
import dev.trainwatch.collector.detect.ScenarioPlayer.Transition;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Before the first step: a long caching or quantizing phase is not a hang, a run that sits at step 0 after its phases
 * ended is (issue 40). Timelines from real start-ups: SimpleTuner's VAE latent cache of 14,080 images whose bar said
 * 5:56:13 remaining at 504/14080 (github.com/bghira/SimpleTuner/issues/653), ai-toolkit quantizing Wan 2.2's two
 * transformers in 03:15 and 02:13 (github.com/ostris/ai-toolkit/issues/872).
 */
class StallPhaseTest {

    private static final DetectorSettings.Stalled S = DetectorSettings.defaults().stalled();
    private final StallPhase phase = new StallPhase(S.phases());
    private final StallProcesses processes = new StallProcesses(S.processes());
    private final StallGpus gpus = new StallGpus(S.gpus());

    /** SimpleTuner's "Creating VAE latent cache." at 2024-08-05 21:25:46, then only its bar. */
    private static final double CACHE_ANNOUNCED = 1_722_893_146;

    private Optional<Finding> atStepZero(FakeRun run) {
        return phase.atStepZero(run, S.minSilence().toMillis() / 1000.0, processes.fresh(run),
                gpus.states(run, run.now()), processes);
    }

    private static FakeRun caching(double sinceAnnounced, String state, double cpuRate, double util) {
        FakeRun run = new FakeRun(CACHE_ANNOUNCED + sinceAnnounced);
        run.phase = "caching";
        run.phaseTs = CACHE_ANNOUNCED;
        run.procs = List.of(new RankProcess(0, "node-0", 4242, "GPU-0", state, cpuRate, 8e9, 4, 4e9, run.now() - 1));
        run.gpus.add(FakeRun.gpu("GPU-0", run.now() - 30, run.now(), t -> FakeRun.Poll.busy(t, util, 250)));
        return run;
    }

    @Test
    void aCachingPhaseThatRunsForHoursWhileItsProcessWorksIsNotAHang() {
        // 20 min, an hour and the 6 h SimpleTuner's bar projected: the bar is announced once, the process works.
        for (double since : new double[] {20 * 60, 3600, 6 * 3600 + 4 * 60}) {
            assertThat(atStepZero(caching(since, "R", 1.0, 0.95))).as("%s s into caching", since).isEmpty();
        }
        // Played through the fleet: 10 min quantizing, 25 min caching, no step.
        assertThat(new ScenarioPlayer().play(Scenario.load("caching-at-step-zero")).kindsRaised()).isEmpty();
    }

    @Test
    void theGpuDetectorsHoldBeforeTheFirstStepWhileAPhaseIsAnnounced() {
        FakeRun run = caching(20 * 60, "R", 1.0, 0.0);
        run.gpus.clear();
        run.gpus.add(FakeRun.gpu("GPU-0", run.now() - 20 * 60, run.now(), t -> FakeRun.Poll.busy(t, 0.0, 60)));
        List<Detector> judges = List.of(new GpuIdleDetector(DetectorSettings.defaults()),
                new GpuUnderutilizedDetector(DetectorSettings.defaults()));
        for (Detector d : judges) {
            assertThat(d.evaluate(run, false)).as(d.kind().wireName()).isEmpty();
        }
        run.phase = null;
        run.phaseTs = Double.NaN;
        for (Detector d : judges) {
            assertThat(d.evaluate(run, false)).as(d.kind().wireName() + " without a phase").isPresent();
        }
        // Rank 0 quantizing on its GPU while rank 1 waits: not a straggler before the first step.
        FakeRun uneven = caching(20 * 60, "R", 1.0, 0.9);
        uneven.gpus.add(FakeRun.gpu("GPU-1", uneven.now() - 30, uneven.now(), t -> FakeRun.Poll.busy(t, 0.3, 150)));
        StragglerDetector straggler = new StragglerDetector(DetectorSettings.defaults());
        assertThat(straggler.evaluate(uneven, false)).isEmpty();
        uneven.phase = null;
        uneven.phaseTs = Double.NaN;
        assertThat(straggler.evaluate(uneven, false)).isPresent();
        for (String name : List.of("caching-cpu-bound-gpus-idle", "quantizing-gpu-light")) {
            assertThat(new ScenarioPlayer().play(Scenario.load(name)).kindsRaised()).as(name).isEmpty();
        }
    }

    @Test
    void quantizingWithoutProcessReadingsCountsAsRunningWhileTheGpusWork() {
        FakeRun run = caching(25 * 60, "R", 1.0, 0.7);
        run.phase = "quantizing";
        run.procs = List.of();
        assertThat(atStepZero(run)).isEmpty();
    }

    @Test
    void aRunWhosePhasesEndedIsStuckAtStepZeroAfterTheStallWindow() {
        // The caching phase's last line 100 s ago, its process asleep: not yet a stall window.
        assertThat(atStepZero(caching(100, "S", 0.0, 0.0))).isEmpty();
        Finding f = atStepZero(caching(121, "S", 0.0, 0.0)).orElseThrow();
        assertThat(f.severity()).isEqualTo(Severity.WARNING);
        assertThat(f.message()).startsWith("stuck at step 0 after its caching phase ended: no step and no phase line "
                + "for 2.0 min, and its processes are idle; the GPUs are idle");
        assertThat(f.evidence()).containsEntry("announced_phase", "caching").containsEntry("last_step", 0L)
                .containsEntry("processes_working", false).containsEntry("threshold_seconds", 120L);
        assertThat(f.suggestion()).contains("py-spy dump --pid 4242").contains("never reached its first step");
        // The GPU busy (a kernel that never returns) with the process asleep: stuck all the same.
        assertThat(atStepZero(caching(300, "S", 0.0, 0.97)).orElseThrow().message())
                .contains("after its caching phase ended").contains("the GPUs are 97% busy");
        assertThat(atStepZero(caching(300, "S", 0.0, 0.0)).orElseThrow().severity()).isEqualTo(Severity.CRITICAL);
    }

    @Test
    void aPhaseThatOutlastsItsLimitWhileTheRunWorksIsCalledStuckToo() {
        assertThat(atStepZero(caching(12 * 3600 - 1, "R", 1.0, 0.95))).isEmpty();
        Finding f = atStepZero(caching(12 * 3600, "R", 1.0, 0.95)).orElseThrow();
        assertThat(f.message()).startsWith("stuck at step 0: no step and no phase line for 720.0 min since its caching "
                + "phase was announced, longer than that phase is given (720 minutes)");
    }

    @Test
    void nothingIsSaidBeforeAnyPhaseOrWhileStepsComeLate() {
        FakeRun run = caching(600, "S", 0.0, 0.0);
        run.phase = null;
        run.phaseTs = Double.NaN;
        assertThat(atStepZero(run)).isEmpty();
        assertThat(new StalledDetector(DetectorSettings.defaults()).evaluate(run, false)).isEmpty();
    }

    @Test
    void playedThroughTheFleetTheStuckRunIsNamedOnceItsProcessesSleepAndProgressLinesKeepItQuiet() {
        for (String name : List.of("stuck-at-step-zero", "stuck-at-step-zero-gpus-busy")) {
            Result r = new ScenarioPlayer().play(Scenario.load(name));
            Transition t = r.raised(AnomalyKind.STALLED).get(0);
            assertThat(t.message()).as(name).startsWith("stuck at step 0 after its caching phase ended");
            // The processes' CPU use is read over 30 s: named within a minute of the fault, 10 min after the last line.
            assertThat(r.latency(AnomalyKind.STALLED)).as(name).isLessThanOrEqualTo(60);
        }
        assertThat(new ScenarioPlayer().play(Scenario.load("phase-lines-at-step-zero")).kindsRaised()).isEmpty();
    }

    @Test
    void withStepsACachingPhaseGetsItsOwnLimitAndName() {
        assertThat(phase.limitSeconds("caching")).isEqualTo(12 * 3600);
        assertThat(phase.limitSeconds("checkpoint_saved")).isEqualTo(15 * 60);
        assertThat(phase.limitSeconds("evaluation")).isEqualTo(30 * 60);
        assertThat(phase.overrun("quantizing")[0]).isEqualTo("; the log announced a quantizing phase that has lasted "
                + "longer than 720 minutes");
        assertThat(Map.of("a", phase.overrun("checkpoint")[0])).containsValue("; the log announced a checkpoint save "
                + "that has lasted longer than 15 minutes");
    }
}
