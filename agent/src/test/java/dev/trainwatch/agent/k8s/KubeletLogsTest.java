package dev.trainwatch.agent.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pod and container names from a node laid out as the kubelet lays out /var/log. */
class KubeletLogsTest {

    static final String UID = "8ca306fa-3c03-47fa-97dd-19979c345572";
    static final String TRAINER_ID = "d6d725b909f37c3e232aadfbafa950a58bfe7baa579ba8c47a12be88bb921607";
    static final String SIDECAR_ID = "7a1fd6fe8cdfbd44dc78c4cc85dad7031eaab4365801684cad0aabdeaf863f9e";

    @TempDir
    Path node;
    double now = 100;

    /** One pod with the trainer and a sidecar container, as kubelet writes /var/log/pods and /var/log/containers. */
    static void pod(Path node, String namespace, String pod, String uid, String container, String containerId)
            throws IOException {
        Path logs = Files.createDirectories(node.resolve("var/log/pods/" + namespace + "_" + pod + "_" + uid
                + "/" + container));
        Path log = Files.writeString(logs.resolve("0.log"), "");
        Path links = Files.createDirectories(node.resolve("var/log/containers"));
        Files.createSymbolicLink(links.resolve(pod + "_" + namespace + "_" + container + "-" + containerId + ".log"),
                log);
    }

    @Test
    void namesNamespacePodAndContainer() throws IOException {
        pod(node, "ml-team", "pixart-sigma-worker-1", UID, "pytorch", TRAINER_ID);
        pod(node, "ml-team", "pixart-sigma-worker-1", UID, "log-shipper", SIDECAR_ID);
        KubeletLogs kubelet = new KubeletLogs(node, () -> now);
        assertThat(kubelet.identify(new PodCgroup(UID, TRAINER_ID)))
                .contains(new PodIdentity("ml-team", "pixart-sigma-worker-1", UID, "pytorch"));
        assertThat(kubelet.identify(new PodCgroup(UID, SIDECAR_ID)).orElseThrow().container()).isEqualTo("log-shipper");
        // two containers and no id: the pod is known, the container is not guessed
        assertThat(kubelet.identify(new PodCgroup(UID, null)).orElseThrow().container()).isNull();
    }

    @Test
    void aSingleContainerPodNeedsNoId() throws IOException {
        Files.createDirectories(node.resolve("var/log/pods/ml-team_dit-xl-master-0_" + UID + "/pytorch"));
        KubeletLogs kubelet = new KubeletLogs(node, () -> now);
        assertThat(kubelet.identify(new PodCgroup(UID, TRAINER_ID)))
                .contains(new PodIdentity("ml-team", "dit-xl-master-0", UID, "pytorch"));
    }

    @Test
    void aPodStartedLaterIsFoundAtTheNextListingNotOnEveryAsk() throws IOException {
        Files.createDirectories(node.resolve("var/log/pods"));
        KubeletLogs kubelet = new KubeletLogs(node, () -> now);
        assertThat(kubelet.identify(new PodCgroup(UID, TRAINER_ID))).isEmpty();
        pod(node, "ml-team", "pixart-sigma-worker-1", UID, "pytorch", TRAINER_ID);
        now += 1;
        assertThat(kubelet.identify(new PodCgroup(UID, TRAINER_ID))).as("listed again only after 10 s").isEmpty();
        now += KubeletLogs.RELIST_SECONDS;
        assertThat(kubelet.identify(new PodCgroup(UID, TRAINER_ID))).isPresent();
    }

    @Test
    void aNodeWithoutKubeletDirectoriesNamesNothing() {
        assertThat(new KubeletLogs(node, () -> now).identify(new PodCgroup(UID, TRAINER_ID))).isEmpty();
    }

    @Test
    void strangeEntriesAreSkipped() throws IOException {
        Files.createDirectories(node.resolve("var/log/pods/no-underscores"));
        Files.createDirectories(node.resolve("var/log/pods/a_b_c_d"));
        Files.createDirectories(node.resolve("var/log/containers"));
        Files.writeString(node.resolve("var/log/containers/garbage.log"), "");
        pod(node, "ml-team", "train", UID, "pytorch", TRAINER_ID);
        assertThat(new KubeletLogs(node, () -> now).identify(new PodCgroup(UID, TRAINER_ID)))
                .contains(new PodIdentity("ml-team", "train", UID, "pytorch"));
    }
}
