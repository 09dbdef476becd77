package dev.trainwatch.agent.attribution;

import static dev.trainwatch.protocol.testing.Samples.gpu;
import static dev.trainwatch.protocol.testing.Samples.gpuWithUnknownProcesses;
import static dev.trainwatch.protocol.testing.Samples.uuid;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AttributorTest {

    static final String TORCHRUN_ID = "9b1f0c6e-5c4d-4a8e-9a51-0d6c2f1e7b3a";

    @TempDir
    Path dir;
    Path root;
    LinuxProcSource proc;

    @BeforeEach
    void setUp() {
        root = ProcFixture.copy("torchrun-node", dir);
        proc = new LinuxProcSource(root);
    }

    /** The node of the fixture: a 4-rank torchrun job on GPUs 0-3, a lone DiT run on 4, a Slurm step on 5. */
    static List<GpuSample> node(double ts) {
        return List.of(gpu(ts, 0, 4101), gpu(ts, 1, 4102), gpu(ts, 2, 4103), gpu(ts, 3, 4104), gpu(ts, 4, 5000),
                gpu(ts, 5, 7000), gpu(ts, 6, 99999), gpuWithUnknownProcesses(ts, 7));
    }

    static Map<String, RunAttribution> byId(List<RunAttribution> runs) {
        return runs.stream().collect(Collectors.toMap(RunAttribution::runId, Function.identity()));
    }

    @Test
    void everyComputeProcessOfTheNodeIsAttributed() {
        Attributor attributor = new Attributor(proc, "node1", null, null, 0.0, 0.0);
        Attributor.Update update = attributor.update(node(100), 100);

        Map<String, RunAttribution> runs = byId(update.runs());
        assertThat(runs).containsOnlyKeys(TORCHRUN_ID, "node1-5000-70001", "884213");
        RunAttribution torchrun = runs.get(TORCHRUN_ID);
        assertThat(torchrun.pids()).containsExactly(4100L, 4101L, 4102L, 4103L, 4104L);
        assertThat(torchrun.gpuUuids()).containsExactly(uuid(0), uuid(1), uuid(2), uuid(3));
        assertThat(torchrun.masterAddr()).isEqualTo("127.0.0.1");
        assertThat(torchrun.ended()).isNull();
        assertThat(torchrun.ranks()).map(r -> new RankInfo(r.pid(), r.rank(), r.localRank(), r.worldSize(),
                r.gpuUuids())).containsExactly(
                new RankInfo(4101, 0, 0, 4, List.of(uuid(0))),
                new RankInfo(4102, 1, 1, 4, List.of(uuid(1))),
                new RankInfo(4103, 2, 2, 4, List.of(uuid(2))),
                new RankInfo(4104, 3, 3, 4, List.of(uuid(3))));
        // Each rank's process readings, and rank 0's DataLoader worker (pid 4150, a child of 4101).
        RankInfo rank0 = torchrun.ranks().get(0);
        assertThat(rank0.state()).isEqualTo("R");
        assertThat(rank0.cpuSeconds()).isEqualTo((51234 + 8123) / 100.0);
        assertThat(rank0.rssBytes()).isEqualTo(2345678L * 4096);
        assertThat(rank0.workers()).isEqualTo(1);
        assertThat(rank0.workersRssBytes()).isEqualTo(1200L * 4096);
        assertThat(rank0.workersCpuSeconds()).isEqualTo(0.04);
        assertThat(torchrun.ranks().get(1).workers()).isZero();
        assertThat(runs.get("node1-5000-70001").pids()).containsExactly(5000L);
        assertThat(runs.get("node1-5000-70001").gpuUuids()).containsExactly(uuid(4));
        assertThat(runs.get("node1-5000-70001").ranks()).isEmpty();
        assertThat(runs.get("884213").gpuUuids()).containsExactly(uuid(5));
        assertThat(update.events()).isEmpty();
    }

    @Test
    void ranksWithoutARunIdAreGroupedByTheirLauncher() throws Exception {
        for (long pid = 4101; pid <= 4104; pid++) {
            Files.write(root.resolve(pid + "/environ"), ("RANK=" + (pid - 4101) + "\0WORLD_SIZE=4\0").getBytes());
        }
        Attributor attributor = new Attributor(proc, "node1", null, null, 0.0, 0.0);
        Map<String, RunAttribution> runs = byId(attributor.update(node(100), 100).runs());
        assertThat(runs).containsKey("node1-4100-61234");
        assertThat(runs.get("node1-4100-61234").pids()).containsExactly(4100L, 4101L, 4102L, 4103L, 4104L);
        assertThat(runs.get("node1-4100-61234").gpuUuids()).hasSize(4);
    }

    @Test
    void runIdOverrideNamesEveryComputeProcess() {
        Attributor attributor = new Attributor(proc, "node1", null, "my-run", 0.0, 0.0);
        List<RunAttribution> runs = attributor.update(node(100), 100).runs();
        assertThat(runs).singleElement().satisfies(run -> {
            assertThat(run.runId()).isEqualTo("my-run");
            assertThat(run.gpuUuids()).containsExactly(uuid(0), uuid(1), uuid(2), uuid(3), uuid(4), uuid(5));
        });
    }

    @Test
    void eachRunCarriesTheOtherNamesAUserMayRegisterItsSpecUnder() {
        Map<String, RunAttribution> runs = byId(new Attributor(proc, "node1", null, null, 0.0, 0.0)
                .update(node(100), 100).runs());
        // torchrun names the run by TORCHELASTIC_RUN_ID; its root process is the launcher.
        assertThat(runs.get(TORCHRUN_ID).aliases()).containsExactly("node1:4100");
        // A Slurm step is named by SLURM_JOB_ID; its root is the step's process.
        assertThat(runs.get("884213").aliases()).containsExactly("node1:7000");
    }

    @Test
    void attachTakesTheWholeTreeButOnlyRealRanks() {
        Attributor attributor = new Attributor(proc, "node1", 4100L, null, 0.0, 0.0);
        List<RunAttribution> runs = attributor.update(node(100), 100).runs();
        assertThat(runs).singleElement().satisfies(run -> {
            assertThat(run.runId()).isEqualTo(TORCHRUN_ID);
            assertThat(run.pids()).containsExactly(4100L, 4101L, 4102L, 4103L, 4104L, 4150L);
            assertThat(run.gpuUuids()).containsExactly(uuid(0), uuid(1), uuid(2), uuid(3));
            // The DataLoader worker 4150 inherits RANK=0 but is not a rank.
            assertThat(run.ranks()).extracting(RankInfo::pid).containsExactly(4101L, 4102L, 4103L, 4104L);
        });
    }

    @Test
    void attachWithoutRunIdInTheEnvironmentIsNamedAfterTheRoot() {
        Attributor attributor = new Attributor(proc, "node1", 5000L, null, 0.0, 0.0);
        assertThat(attributor.update(node(100), 100).runs()).extracting(RunAttribution::runId)
                .containsExactly("node1-5000-70001");
    }

    /**
     * {@code agent --attach <torchrun pid>} started before torchrun's ranks exist: the launcher alone is not reported
     * as a run (it stayed behind at the collector as a second, never-ended run), and the agent does not take the
     * empty report for the run's end.
     */
    @Test
    void anAttachedLauncherIsNotReportedBeforeItsRanksNameTheRun() {
        for (long pid = 4101; pid <= 4104; pid++) {
            ProcFixture.exit(root, pid);
        }
        ProcFixture.exit(root, 4150);
        Attributor attributor = new Attributor(proc, "node1", 4100L, null, 0.0, 0.0);
        Attributor.Update first = attributor.update(List.of(gpu(1, 0)), 1);
        assertThat(first.runs()).isEmpty();
        assertThat(first.events()).isEmpty();
        assertThat(attributor.attachedRunEnded()).isFalse();
        root = ProcFixture.copy("torchrun-node", dir);
        Attributor.Update update = attributor.update(node(2), 2);
        assertThat(update.runs()).extracting(RunAttribution::runId).containsExactly(TORCHRUN_ID);
        assertThat(update.events()).isEmpty();
    }

    /**
     * The ranks have exited and torchrun, attached to, is still finishing (a second or two on a loaded node): it is
     * the same run, not a second one named after the launcher (RealTrainingIT saw that second run at load 10).
     */
    @Test
    void anAttachedLauncherThatOutlivesItsRanksKeepsTheRunsName() {
        Attributor attributor = new Attributor(proc, "node1", 4100L, null, 0.0, 0.0);
        assertThat(attributor.update(node(1), 1).runs()).extracting(RunAttribution::runId)
                .containsExactly(TORCHRUN_ID);
        for (long pid = 4101; pid <= 4104; pid++) {
            ProcFixture.exit(root, pid);
        }
        ProcFixture.exit(root, 4150);
        Attributor.Update update = attributor.update(List.of(gpu(2, 0)), 2);
        assertThat(update.runs()).extracting(RunAttribution::runId).containsExactly(TORCHRUN_ID);
        assertThat(update.runs().get(0).ended()).isNull();
        assertThat(attributor.attachedRunEnded()).isFalse();
        ProcFixture.exit(root, 4100);
        Attributor.Update last = attributor.update(List.of(gpu(3, 0)), 3);
        assertThat(last.runs()).extracting(RunAttribution::runId).containsExactly(TORCHRUN_ID);
        assertThat(last.runs().get(0).ended()).isTrue();
        assertThat(attributor.attachedRunEnded()).isTrue();
    }

    @Test
    void aLauncherWhoseRanksNeverComeIsReportedUnderItsOwnNameAndRenamedWhenTheyDo() {
        for (long pid = 4101; pid <= 4104; pid++) {
            ProcFixture.exit(root, pid);
        }
        ProcFixture.exit(root, 4150);
        Attributor attributor = new Attributor(proc, "node1", 4100L, null, 0.0, 0.0);
        assertThat(attributor.update(List.of(gpu(1, 0)), 1).runs()).isEmpty();
        double later = 1 + Attributor.LAUNCHER_WAIT_SECONDS;
        assertThat(attributor.update(List.of(gpu(later, 0)), later).runs()).extracting(RunAttribution::runId)
                .containsExactly("node1-4100-61234");
        root = ProcFixture.copy("torchrun-node", dir);
        Attributor.Update update = attributor.update(node(later + 1), later + 1);
        assertThat(update.runs()).extracting(RunAttribution::runId).containsExactly(TORCHRUN_ID);
        assertThat(update.events()).isEmpty();
    }

    @Test
    void anAttachedLauncherThatExitsBeforeItsRanksEnds() {
        for (long pid = 4101; pid <= 4104; pid++) {
            ProcFixture.exit(root, pid);
        }
        ProcFixture.exit(root, 4150);
        Attributor attributor = new Attributor(proc, "node1", 4100L, null, 0.0, 0.0);
        attributor.update(List.of(gpu(1, 0)), 1);
        ProcFixture.exit(root, 4100);
        assertThat(attributor.update(List.of(gpu(2, 0)), 2).runs()).isEmpty();
        assertThat(attributor.attachedRunEnded()).isTrue();
    }

    @Test
    void aRunWhoseProcessesAllExitedEndsOnce() {
        Attributor attributor = new Attributor(proc, "node1", null, null, 0.0, 0.0);
        attributor.update(node(100), 100);
        for (long pid : new long[] {4100, 4101, 4102, 4103, 4104, 4150}) {
            ProcFixture.exit(root, pid);
        }
        List<GpuSample> after = List.of(gpu(101, 0), gpu(101, 1), gpu(101, 2), gpu(101, 3), gpu(101, 4, 5000),
                gpu(101, 5, 7000));
        Attributor.Update update = attributor.update(after, 101);
        RunAttribution ended = byId(update.runs()).get(TORCHRUN_ID);
        assertThat(ended.ended()).isTrue();
        assertThat(ended.gpuUuids()).containsExactly(uuid(0), uuid(1), uuid(2), uuid(3));
        assertThat(update.events()).singleElement().satisfies(event -> {
            assertThat(event.kind()).isEqualTo("run_ended");
            assertThat(event.runId()).isEqualTo(TORCHRUN_ID);
            assertThat(event.ts()).isEqualTo(101.0);
        });
        assertThat(byId(update.runs()).get("884213").ended()).isNull();

        Attributor.Update later = attributor.update(after, 102);
        assertThat(later.runs()).extracting(RunAttribution::runId).doesNotContain(TORCHRUN_ID);
        assertThat(later.events()).isEmpty();
    }

    @Test
    void aRunIsNotEndedWhileItsProcessesLiveEvenIfNvmlStopsListingThem() {
        Attributor attributor = new Attributor(proc, "node1", null, null, 0.0, 0.0);
        attributor.update(node(100), 100);
        Attributor.Update update = attributor.update(List.of(gpu(101, 4, 5000)), 101);
        assertThat(byId(update.runs()).get(TORCHRUN_ID).ended()).isNull();
        assertThat(update.events()).isEmpty();
    }

    @Test
    void aReusedPidIsAnotherProcess() throws Exception {
        Attributor attributor = new Attributor(proc, "node1", null, null, 0.0, 0.0);
        attributor.update(node(100), 100);
        Path stat = root.resolve("5000/stat");
        Files.writeString(stat, Files.readString(stat).replace(" 70001 ", " 99001 "));
        Map<String, RunAttribution> runs = byId(attributor.update(List.of(gpu(101, 4, 5000)), 101).runs());
        assertThat(runs.get("node1-5000-70001").ended()).isTrue();
        assertThat(runs.get("node1-5000-99001").ended()).isNull();
    }

    @Test
    void aFailedProcessReadKeepsTheGpusOfTheRun() {
        Attributor attributor = new Attributor(proc, "node1", null, null, 0.0, 0.0);
        attributor.update(node(100), 100);
        List<GpuSample> failing = List.of(gpuWithUnknownProcesses(101, 0), gpu(101, 1, 4102), gpu(101, 2, 4103),
                gpu(101, 3, 4104));
        RunAttribution run = byId(attributor.update(failing, 101).runs()).get(TORCHRUN_ID);
        assertThat(run.gpuUuids()).containsExactly(uuid(0), uuid(1), uuid(2), uuid(3));
    }

    @Test
    void ranksInvisibleToNvmlGetTheirGpuFromCudaVisibleDevicesAndLocalRank() {
        Attributor attributor = new Attributor(proc, "node1", 4100L, null, 0.0, 0.0);
        // As in a container without the host PID namespace: NVML lists host pids that mean nothing here.
        List<GpuSample> samples = List.of(gpu(1, 0, 123401), gpu(1, 1, 123402), gpu(1, 2, 123403), gpu(1, 3, 123404),
                gpu(1, 4));
        RunAttribution run = attributor.update(samples, 1).runs().get(0);
        assertThat(run.gpuUuids()).containsExactly(uuid(0), uuid(1), uuid(2), uuid(3));
        assertThat(run.ranks()).extracting(RankInfo::gpuUuids)
                .containsExactly(List.of(uuid(0)), List.of(uuid(1)), List.of(uuid(2)), List.of(uuid(3)));
    }

    @Test
    void visibleDevicesByIndexOrUuid() {
        List<GpuSample> samples = List.of(gpu(1, 0), gpu(1, 1), gpu(1, 2));
        assertThat(VisibleDevices.resolve("2,0", 1, samples)).containsExactly(uuid(0));
        assertThat(VisibleDevices.resolve("2,0", null, samples)).containsExactlyInAnyOrder(uuid(0), uuid(2));
        assertThat(VisibleDevices.resolve(uuid(1).substring(0, 12), 0, samples)).containsExactly(uuid(1));
        assertThat(VisibleDevices.resolve("1,9,2", null, samples)).containsExactly(uuid(1));
        assertThat(VisibleDevices.resolve("", 0, samples)).isEmpty();
        assertThat(VisibleDevices.resolve(null, 0, samples)).isEmpty();
    }

    @Test
    void attachedRunEnds() {
        Attributor attributor = new Attributor(proc, "node1", 5000L, null, 0.0, 0.0);
        attributor.update(node(100), 100);
        assertThat(attributor.attachedRunEnded()).isFalse();
        ProcFixture.exit(root, 5000);
        Attributor.Update update = attributor.update(List.of(gpu(101, 4)), 101);
        assertThat(update.runs()).singleElement().satisfies(run -> assertThat(run.ended()).isTrue());
        assertThat(attributor.attachedRunEnded()).isTrue();
        assertThat(attributor.update(List.of(gpu(102, 4)), 102).runs()).isEmpty();
    }

    /** Regression: a process that exited while the agent started was never seen, so its end never came. */
    @Test
    void anAttachedProcessGoneBeforeTheFirstScanIsAnEndedRun() {
        ProcFixture.exit(root, 5000);
        Attributor attributor = new Attributor(proc, "node1", 5000L, null, 0.0, 0.0);
        Attributor.Update update = attributor.update(node(100), 100);
        assertThat(update.runs()).isEmpty();
        assertThat(attributor.attachedRunEnded()).isTrue();
    }

    @Test
    void aSteadyPollReadsEachProcessAtMostOncePerRevalidationPeriod() {
        java.util.concurrent.atomic.AtomicInteger statReads = new java.util.concurrent.atomic.AtomicInteger();
        ProcSource counting = new ProcSource() {
            @Override
            public List<Long> pids() {
                return proc.pids();
            }

            @Override
            public java.util.Optional<ProcStat> stat(long pid) {
                statReads.incrementAndGet();
                return proc.stat(pid);
            }

            @Override
            public Map<String, String> environment(long pid) {
                return proc.environment(pid);
            }

            @Override
            public List<String> commandLine(long pid) {
                return proc.commandLine(pid);
            }
        };
        Attributor attributor = new Attributor(counting, "node1", null, null);
        attributor.update(node(100), 100);
        int first = statReads.get();
        for (int t = 101; t < 105; t++) {
            attributor.update(node(t), t);
        }
        assertThat(statReads.get()).isEqualTo(first);

        for (long pid : new long[] {4100, 4101, 4102, 4103, 4104, 4150}) {
            ProcFixture.exit(root, pid);
        }
        List<GpuSample> after = List.of(gpu(105, 4, 5000), gpu(105, 5, 7000));
        assertThat(byId(attributor.update(after, 104.5).runs()).get(TORCHRUN_ID).ended()).isNull();
        assertThat(byId(attributor.update(after, 105).runs()).get(TORCHRUN_ID).ended()).isTrue();
    }

    /**
     * The scan for DataLoader workers reads every process's stat only once a minute: in between, only the ranks'
     * children and processes new since the previous scan. A worker started between two full scans is still found.
     */
    @Test
    void theWorkerScanReadsOnlyNewProcessesAndTheRanksChildrenBetweenFullScans() throws Exception {
        List<Long> statted = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        ProcSource counting = new ProcSource() {
            @Override
            public List<Long> pids() {
                return proc.pids();
            }

            @Override
            public java.util.Optional<ProcStat> stat(long pid) {
                statted.add(pid);
                return proc.stat(pid);
            }

            @Override
            public Map<String, String> environment(long pid) {
                return proc.environment(pid);
            }

            @Override
            public List<String> commandLine(long pid) {
                return proc.commandLine(pid);
            }
        };
        Attributor attributor = new Attributor(counting, "node1", null, null);
        attributor.update(node(100), 100);
        assertThat(statted).as("the first scan reads every process").contains(1L, 812L, 900L, 4150L);

        // A second worker of rank 1 appears; an unrelated process is not read again at the next scan.
        Path worker = root.resolve("4160");
        Files.createDirectories(worker);
        Files.writeString(worker.resolve("stat"), Files.readString(root.resolve("4150/stat"))
                .replace("4150 (pt_data_worker) S 4101", "4160 (pt_data_worker) S 4102"));
        statted.clear();
        attributor.update(node(111), 111);
        assertThat(statted).as("between full scans").doesNotContain(1L, 812L, 900L).contains(4150L, 4160L);
        RunAttribution torchrun = byId(attributor.update(node(112), 112).runs()).get(TORCHRUN_ID);
        assertThat(torchrun.ranks().get(0).workers()).isEqualTo(1);
        assertThat(torchrun.ranks().get(1).workers()).isEqualTo(1);

        statted.clear();
        attributor.update(node(161), 161);
        assertThat(statted).as("a full scan a minute after the previous one").contains(1L, 812L, 900L);
    }
}
