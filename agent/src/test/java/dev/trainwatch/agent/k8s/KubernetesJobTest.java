package dev.trainwatch.agent.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Job names as the Kubeflow operators and JobSet put them into pods. */
class KubernetesJobTest {

    static PodIdentity pod(String name) {
        return new PodIdentity("ml-team", name, "0f2b5a1e-8c3d-4e5f-9a0b-1c2d3e4f5a6b", "pytorch");
    }

    @Test
    void pyTorchJobReplicasNameTheirJobOnEveryNode() {
        // training-operator v1: MASTER_ADDR and PET_MASTER_ADDR are the master replica's name on every pod
        Map<String, String> env = Map.of("MASTER_ADDR", "pixart-sigma-master-0", "PET_MASTER_ADDR",
                "pixart-sigma-master-0", "RANK", "3");
        assertThat(KubernetesJob.jobName(env, pod("pixart-sigma-worker-2"))).isEqualTo("pixart-sigma");
        assertThat(KubernetesJob.runId(env, pod("pixart-sigma-worker-2"))).isEqualTo("pixart-sigma.ml-team");
        assertThat(KubernetesJob.runId(env, pod("pixart-sigma-master-0"))).isEqualTo("pixart-sigma.ml-team");
    }

    @Test
    void anOlderOperatorsMasterToldLocalhostIsNamedByItsPod() {
        assertThat(KubernetesJob.jobName(Map.of("MASTER_ADDR", "localhost"), pod("dit-xl-master-0")))
                .isEqualTo("dit-xl");
    }

    @Test
    void aTrainJobOnAJobSetIsNamedByItsFirstNodesHostName() {
        Map<String, String> env = Map.of("PET_MASTER_ADDR", "sana-1600m-node-0-0.sana-1600m", "PET_NNODES", "4");
        assertThat(KubernetesJob.jobName(env, pod("sana-1600m-node-0-2-x7k2q"))).isEqualTo("sana-1600m");
        Map<String, String> qualified = Map.of("MASTER_ADDR", "opensora-trainer-1-0.opensora.ml-team.svc");
        assertThat(KubernetesJob.jobName(qualified, pod("opensora-trainer-1-0-abcde"))).isEqualTo("opensora");
    }

    @Test
    void jobsetNameFromTheDownwardApiWins() {
        assertThat(KubernetesJob.jobName(Map.of("JOBSET_NAME", "xpk-run-7", "MASTER_ADDR", "10.0.0.4"),
                pod("xpk-run-7-slice-job-0-1-abcde"))).isEqualTo("xpk-run-7");
    }

    @Test
    void nothingOutsideAPodIsAJob() {
        // a Slurm node named like a replica, outside Kubernetes
        assertThat(KubernetesJob.jobName(Map.of("MASTER_ADDR", "gpu-worker-3"), null)).isNull();
        assertThat(KubernetesJob.runId(Map.of("MASTER_ADDR", "gpu-worker-3"), null)).isNull();
    }

    @Test
    void aPlainPodIsNotAJob() {
        assertThat(KubernetesJob.jobName(Map.of("MASTER_ADDR", "127.0.0.1"), pod("notebook-7d9f8c6b5-q2x4z")))
                .isNull();
        assertThat(KubernetesJob.jobName(Map.of("JOBSET_NAME", "Not A Name!"), pod("train"))).isNull();
    }
}
