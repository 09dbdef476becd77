package dev.trainwatch.agent.attribution;

import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resident memory is pages × the kernel's page size, which /proc/PID/stat does not say: 64 KiB on Grace (GH200,
 * GB200), where counting 4 KiB pages made every rank's memory 16 times too small.
 */
class PageSizeTest {

    static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    @Test
    void aGraceNodeCountsSixtyFourKibPages() {
        LinuxProcSource proc = new LinuxProcSource(ProcFixture.copy("grace-node", dir));
        assertThat(proc.pageBytes()).isEqualTo(65_536);

        Attributor attributor = new Attributor(proc, "gh200-1", null, null, 0.0, 0.0);
        RunAttribution run = attributor.update(List.of(gpu(10, 0, 4300)), 10).runs().get(0);
        RankInfo rank = run.ranks().get(0);
        assertThat(rank.rssBytes()).as("262,144 pages of 64 KiB").isEqualTo(16 * GIB);
        assertThat(rank.workers()).isEqualTo(1);
        assertThat(rank.workersRssBytes()).as("16,384 pages of 64 KiB").isEqualTo(GIB);
    }

    @Test
    void thisMachinesOwnAuxvSaysFourKib() {
        // /proc/self/auxv of the x86-64 build machine, as captured
        assertThat(LinuxProcSource.readPageBytes(Path.of("src/test/resources/proc/x86-64-auxv/auxv"))).isEqualTo(4096);
        assertThat(LinuxProcSource.system().pageBytes()).as("the running kernel").isPositive();
    }

    @Test
    void aTableWithoutAuxvAndGarbageFallBackToFourKib() throws Exception {
        assertThat(new LinuxProcSource(dir).pageBytes()).isEqualTo(4096);
        java.nio.file.Files.write(dir.resolve("auxv"), new byte[] {6, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0});
        assertThat(LinuxProcSource.readPageBytes(dir.resolve("auxv"))).as("3 is no page size").isEqualTo(4096);
        java.nio.file.Files.write(dir.resolve("auxv"), new byte[] {6, 0, 0});
        assertThat(LinuxProcSource.readPageBytes(dir.resolve("auxv"))).isEqualTo(4096);
    }
}
