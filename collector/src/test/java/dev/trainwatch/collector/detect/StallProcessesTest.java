package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The ranks' processes (hung-rank: rank 5 asleep without CPU while the other seven spin). */
class StallProcessesTest {

    private final StallProcesses processes = new StallProcesses(DetectorSettings.defaults().stalled().processes());

    private static List<RankProcess> eight(String state5, double cpu5, double othersCpu) {
        List<RankProcess> out = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            out.add(r == 5 ? StallEvidenceFixtures.proc(5, state5, cpu5) : StallEvidenceFixtures.proc(r, "R", othersCpu));
        }
        return out;
    }

    private Map<Integer, StallCulprit> culprits(List<RankProcess> procs) {
        Map<Integer, StallCulprit> out = new LinkedHashMap<>();
        processes.culprits(procs, out);
        return out;
    }

    @Test
    void aProcessAsleepWhileTheOthersSpinIsNamed() {
        Map<Integer, StallCulprit> out = culprits(eight("S", 0.0, 1.0));
        assertThat(out).containsOnlyKeys(5);
        assertThat(out.get(5).why()).isEqualTo("its process (pid 105) is asleep and used 0% of a core in the last 30 s "
                + "while 7 of 8 ranks spin");
    }

    @Test
    void allAsleepNamesNobodyButAZombieIsNamedAnyway() {
        // gloo waits asleep in the all-reduce: when every rank sleeps, none stands out.
        assertThat(culprits(eight("S", 0.0, 0.0))).isEmpty();
        assertThat(culprits(eight("Z", 0.0, 0.0)).get(5).why()).contains("a zombie");
        // In uninterruptible I/O (a checkpoint write) is not asleep.
        assertThat(culprits(eight("D", 0.0, 1.0))).isEmpty();
    }

    @Test
    void readingsOlderThanAMinuteSayNothingAndWorkIsRunningIoOrCpu() {
        FakeRun run = new FakeRun(StallEvidenceFixtures.NOW);
        RankProcess old = new RankProcess(0, "node-1", 100, "GPU-0", "S", 0, 6e9, 4, 8e9, run.now() - 61);
        run.procs = List.of(old, StallEvidenceFixtures.proc(1, "S", 0));
        assertThat(processes.fresh(run)).extracting(RankProcess::rank).containsExactly(1);
        assertThat(processes.works(StallEvidenceFixtures.proc(0, "S", 0.1))).isTrue();
        assertThat(processes.works(StallEvidenceFixtures.proc(0, "D", 0))).isTrue();
        assertThat(processes.works(StallEvidenceFixtures.proc(0, "S", 0.01))).isFalse();
    }
}
