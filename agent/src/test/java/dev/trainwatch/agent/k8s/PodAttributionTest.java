package dev.trainwatch.agent.k8s;

import static dev.trainwatch.protocol.testing.Samples.gpu;
import static dev.trainwatch.protocol.testing.Samples.uuid;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.agent.attribution.Attributor;
import dev.trainwatch.agent.attribution.ProcSource;
import dev.trainwatch.agent.attribution.ProcStat;
import dev.trainwatch.protocol.RunAttribution;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A two-node Kubeflow PyTorchJob: each node's agent attributes its pod's ranks, and both name the same run after
 * the job and its namespace, with the pod and container of each node. Node A runs CRI-O on cgroup v1, node B
 * containerd on cgroup v2 (the layouts of the real captures in PodCgroupTest).
 */
class PodAttributionTest {

    static final String UID_A = "8ca306fa-3c03-47fa-97dd-19979c345572";
    static final String UID_B = "dd1bf9d1-241d-47f5-8e25-12de83135812";
    static final String CID_A = "d6d725b909f37c3e232aadfbafa950a58bfe7baa579ba8c47a12be88bb921607";
    static final String CID_B = "f45298cd514d1930c4fe3afc4412e59547f7e3148fddd22ca33cefce046eb830";
    static final String RDZV = "9b1f0c6e-5c4d-4a8e-9a51-0d6c2f1e7b3a";

    @TempDir
    Path nodeA;
    @TempDir
    Path nodeB;

    /** A process table: torchrun (pid 100) and two ranks in a pod, plus a process outside Kubernetes. */
    static final class Node implements ProcSource {
        final Map<Long, ProcStat> stats = new HashMap<>();
        final Map<Long, Map<String, String>> envs = new HashMap<>();
        final Map<Long, String> cgroups = new HashMap<>();
        final Map<Long, List<String>> cmdlines = new HashMap<>();

        Node(String podCgroup, String pod, int firstRank) {
            stats.put(100L, new ProcStat(100, "torchrun", 1, 5000, 0, 0, 1000, 'S'));
            cmdlines.put(100L, List.of("/usr/bin/python3", "/usr/local/bin/torchrun", "--nnodes=2", "train.py"));
            for (int i = 0; i < 2; i++) {
                long pid = 101 + i;
                stats.put(pid, new ProcStat(pid, "python3", 100, 5100, 100, 10, 1000, 'R'));
                cmdlines.put(pid, List.of("/usr/bin/python3", "-u", "train.py"));
                envs.put(pid, Map.of("RANK", Integer.toString(firstRank + i), "LOCAL_RANK", Integer.toString(i),
                        "WORLD_SIZE", "4", "MASTER_ADDR", "pixart-sigma-master-0", "TORCHELASTIC_RUN_ID", RDZV));
            }
            for (long pid = 100; pid <= 102; pid++) {
                cgroups.put(pid, podCgroup);
            }
            // a process outside Kubernetes on the same node (an operator's benchmark)
            stats.put(900L, new ProcStat(900, "python3", 1, 6000, 0, 0, 1000, 'R'));
            cgroups.put(900L, "0::/user.slice/user-1000.slice/session-2.scope\n");
            envs.put(900L, Map.of("MASTER_ADDR", "pixart-sigma-master-0"));
            cmdlines.put(900L, List.of("python3", "bench.py"));
        }

        @Override
        public List<Long> pids() {
            return List.copyOf(stats.keySet());
        }

        @Override
        public Optional<ProcStat> stat(long pid) {
            return Optional.ofNullable(stats.get(pid));
        }

        @Override
        public Map<String, String> environment(long pid) {
            return envs.getOrDefault(pid, Map.of());
        }

        @Override
        public List<String> commandLine(long pid) {
            return cmdlines.getOrDefault(pid, List.of());
        }

        @Override
        public String cgroup(long pid) {
            return cgroups.getOrDefault(pid, "");
        }
    }

    static Map<String, RunAttribution> attribute(Node node, Path root, String host) {
        Attributor attributor = new Attributor(node, host, null, null, 10.0, 5.0,
                new KubernetesPods(node::cgroup, new KubeletLogs(root, () -> 0)));
        Map<String, RunAttribution> runs = new HashMap<>();
        for (RunAttribution r : attributor.update(List.of(gpu(10, 0, 101), gpu(10, 1, 102), gpu(10, 2, 900)), 10)
                .runs()) {
            runs.put(r.runId(), r);
        }
        return runs;
    }

    @Test
    void aMultiNodeJobIsOneRunWithItsNamespaceAndJob() throws IOException {
        KubeletLogsTest.pod(nodeA, "ml-team", "pixart-sigma-master-0", UID_A, "pytorch", CID_A);
        KubeletLogsTest.pod(nodeB, "ml-team", "pixart-sigma-worker-0", UID_B, "pytorch", CID_B);
        Node a = new Node(String.join("\n", List.of(
                "12:devices:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                        + UID_A.replace('-', '_') + ".slice/crio-" + CID_A + ".scope",
                "6:rdma:/",
                "3:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                        + UID_A.replace('-', '_') + ".slice/crio-" + CID_A + ".scope")), "pixart-sigma-master-0", 0);
        Node b = new Node("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                + UID_B.replace('-', '_') + ".slice/cri-containerd-" + CID_B + ".scope\n", "pixart-sigma-worker-0", 2);

        Map<String, RunAttribution> onA = attribute(a, nodeA, "gpu-node-a");
        Map<String, RunAttribution> onB = attribute(b, nodeB, "gpu-node-b");

        RunAttribution runA = onA.get("pixart-sigma.ml-team");
        RunAttribution runB = onB.get("pixart-sigma.ml-team");
        assertThat(runA).as("node A's run: %s", onA.keySet()).isNotNull();
        assertThat(runB).as("node B's run: %s", onB.keySet()).isNotNull();
        assertThat(List.of(runA.namespace(), runA.job(), runA.pod(), runA.container()))
                .containsExactly("ml-team", "pixart-sigma", "pixart-sigma-master-0", "pytorch");
        assertThat(List.of(runB.namespace(), runB.job(), runB.pod(), runB.container()))
                .containsExactly("ml-team", "pixart-sigma", "pixart-sigma-worker-0", "pytorch");
        assertThat(runA.pids()).containsExactly(100L, 101L, 102L);
        assertThat(runA.gpuUuids()).containsExactly(uuid(0), uuid(1));
        assertThat(runB.ranks()).extracting(r -> r.rank()).containsExactly(2, 3);
        // the rendezvous id still finds the run
        assertThat(runA.aliases()).contains(RDZV);

        // the process outside Kubernetes keeps its own run, with no pod
        RunAttribution outside = onA.values().stream().filter(r -> r.pids().contains(900L)).findFirst().orElseThrow();
        assertThat(outside.runId()).isEqualTo("gpu-node-a-900-6000");
        assertThat(outside.namespace()).isNull();
        assertThat(outside.job()).isNull();
    }

    @Test
    void aPodTheKubeletDoesNotListKeepsTheUsualName() {
        Node a = new Node("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                + UID_B.replace('-', '_') + ".slice/cri-containerd-" + CID_B + ".scope\n", "x", 0);
        Map<String, RunAttribution> runs = attribute(a, nodeA, "gpu-node-a");
        assertThat(runs).containsKey(RDZV);
        assertThat(runs.get(RDZV).namespace()).isNull();
    }
}
