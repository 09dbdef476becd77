package dev.trainwatch.agent.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Real {@code /proc/PID/cgroup} captures of containerd and CRI-O nodes, cgroup v1 and v2 (see the fixtures' README). */
class PodCgroupTest {

    static String fixture(String name) throws IOException {
        return Files.readString(Path.of("src/test/resources/k8s/cgroup", name), StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "containerd-1.2-v1-cgroupfs.cgroup, a36d0c1d-0b26-4451-8d80-9c195e004afa, 5dd96d5394ca930a854a390ea46f7515a8bc930123eb3251ba20f2708a38fc61",
        "containerd-1.4-v1-systemd.cgroup, 2105e389-7471-476e-a50f-6074cef29bbd, d3d8ccf5cca91931c6285c1d7472c413dd5a7700fddc0aa9f89a9ac7008b003e",
        "containerd-bottlerocket-v1-systemd.cgroup, dd1bf9d1-241d-47f5-8e25-12de83135812, f45298cd514d1930c4fe3afc4412e59547f7e3148fddd22ca33cefce046eb830",
        "containerd-v2-systemd.cgroup, dd1bf9d1-241d-47f5-8e25-12de83135812, f45298cd514d1930c4fe3afc4412e59547f7e3148fddd22ca33cefce046eb830",
        "crio-1.19-v1-systemd.cgroup, 8ca306fa-3c03-47fa-97dd-19979c345572, d6d725b909f37c3e232aadfbafa950a58bfe7baa579ba8c47a12be88bb921607",
        "crio-1.17-v1-static-pod.cgroup, 487a0dc6dccaeefbcfedba7a7ce1ca18, 7a1fd6fe8cdfbd44dc78c4cc85dad7031eaab4365801684cad0aabdeaf863f9e",
        "crio-1.22-v2-systemd.cgroup, 042efd86-1f3b-4f2f-8736-f31c58e95bbc, f33f47b0db740bb647cb3e7ac62d96c74966dbb99cbfaf4563bfd42d387e8b44",
    })
    void podAndContainerOfRealNodes(String file, String podUid, String containerId) throws IOException {
        assertThat(PodCgroup.parse(fixture(file))).contains(new PodCgroup(podUid, containerId));
    }

    @ParameterizedTest
    @ValueSource(strings = {"host-v1.cgroup", "docker-not-kubernetes.cgroup", "sandbox-process-api.cgroup"})
    void processesOutsideKubernetesHaveNoPod(String file) throws IOException {
        assertThat(PodCgroup.parse(fixture(file))).isEmpty();
    }

    @Test
    void aCgroupNamingOnlyThePodStillGivesThePod() {
        assertThat(PodCgroup.parse("0::/kubepods.slice/kubepods-pod0f2b5a1e_8c3d_4e5f_9a0b_1c2d3e4f5a6b.slice\n"))
                .contains(new PodCgroup("0f2b5a1e-8c3d-4e5f-9a0b-1c2d3e4f5a6b", null));
    }

    @Test
    void garbageIsNoPod() {
        assertThat(PodCgroup.parse("")).isEmpty();
        assertThat(PodCgroup.parse(null)).isEmpty();
        assertThat(PodCgroup.parse("not a cgroup file\n\n::\n")).isEmpty();
        assertThat(PodCgroup.parse("0::/podcast/pod12345\n")).isEmpty();
    }
}
