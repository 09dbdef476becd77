package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ranks' GPUs: spinning-collective's counters and hung-rank's power. */
class StallGpusTest {

    private final StallGpus gpus = new StallGpus(DetectorSettings.defaults().stalled().gpus());
    private final StallProcesses processes = new StallProcesses(DetectorSettings.defaults().stalled().processes());
    private static final double NOW = StallEvidenceFixtures.NOW;

    /** Eight GPUs: each second before {@code last} as while training, after it as {@code after} says. */
    private static FakeRun eight(double last, FakeRun.Poll training, Map<Integer, FakeRun.Poll> after,
            FakeRun.Poll others) {
        FakeRun run = StallEvidenceFixtures.hungRank(StallEvidenceFixtures.LAST);
        for (int r = 0; r < 8; r++) {
            FakeRun.Poll then = after.getOrDefault(r, others);
            run.gpus.add(FakeRun.gpu("GPU-" + r, "node-1", NOW - 200, NOW, t -> (t < last ? training : then).at(t)));
        }
        return run;
    }

    @Test
    void theGpuThatStillComputesWhileTheOthersSpinIsNamedByItsCounters() {
        // spinning-collective: the others at 100% with tensor 0, DRAM 0.004, no NVLink; rank 3 tensor 60%.
        FakeRun run = eight(NOW - 150, FakeRun.Poll.counted(0, 0.97, 0.6, 0.42, 120e9),
                Map.of(3, FakeRun.Poll.counted(0, 0.98, 0.6, 0.45, 0)), FakeRun.Poll.counted(0, 1.0, 0.0, 0.004, 0));
        Map<String, StallGpus.State> states = gpus.states(run, NOW - 150);
        Map<Integer, StallCulprit> out = new LinkedHashMap<>();
        gpus.culprits(run, states, List.of(), processes, out);
        assertThat(out).containsOnlyKeys(3);
        assertThat(out.get(3).why()).startsWith("its GPU still computes (tensor pipes 60% busy) while the others spin in "
                + "a collective waiting for it (7 GPUs at 100% \"utilisation\"");
        assertThat(StallGpus.spinningByCounters(states)).startsWith("7 of 8 GPUs read 100% busy while their tensor pipes "
                + "are idle");
        assertThat(gpus.othersWait(states, Set.of(3), run)).contains("with idle tensor pipes and no NVLink traffic");
    }

    @Test
    void anIdleGpuWhileTheOthersSpinAtAThirdOfTheirPowerIsNamedUnlessItsProcessWorks() {
        // hung-rank: 350 W while training; then the others at 100% and 115 W, rank 5 idle at 60 W.
        FakeRun run = eight(StallEvidenceFixtures.LAST, FakeRun.Poll.busy(0, 0.96, 350),
                Map.of(5, FakeRun.Poll.busy(0, 0.0, 60)), FakeRun.Poll.busy(0, 1.0, 115));
        Map<String, StallGpus.State> states = gpus.states(run, StallEvidenceFixtures.LAST);
        assertThat(states.get("GPU-0").spins()).isTrue();
        Map<Integer, StallCulprit> out = new LinkedHashMap<>();
        gpus.culprits(run, states, List.of(StallEvidenceFixtures.proc(5, "S", 0)), processes, out);
        assertThat(out.get(5).why()).startsWith("its GPU is idle while the others are busy at a fraction of their "
                + "training power");
        assertThat(gpus.othersWait(states, Set.of(5), run)).isEqualTo("the other ranks' GPUs are 100% busy at 33% of "
                + "their training power (spinning in a collective, waiting)");
        // Its process runs on the CPU: a save the log did not announce, not a hang.
        out.clear();
        gpus.culprits(run, states, List.of(StallEvidenceFixtures.proc(5, "R", 1.0)), processes, out);
        assertThat(out.get(5).busyOnCpu()).isTrue();
    }
}
