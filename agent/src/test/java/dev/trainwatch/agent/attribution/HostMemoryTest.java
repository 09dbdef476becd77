package dev.trainwatch.agent.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.HostMemory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The node's RAM and /dev/shm as the agent reads them. */
class HostMemoryTest {

    @TempDir
    Path dir;

    @Test
    void meminfoIsReadInBytes() throws IOException {
        Files.writeString(dir.resolve("meminfo"), """
                MemTotal:       1056587428 kB
                MemFree:         3466712 kB
                MemAvailable:    8912344 kB
                Buffers:          120000 kB
                SwapTotal:       8388604 kB
                SwapFree:        8388000 kB
                """);
        HostMemory m = new LinuxProcSource(dir, dir).hostMemory(42.0).orElseThrow();
        assertThat(m.ts()).isEqualTo(42.0);
        assertThat(m.memTotalBytes()).isEqualTo(1056587428L * 1024);
        assertThat(m.memAvailableBytes()).isEqualTo(8912344L * 1024);
        assertThat(m.swapUsedBytes()).isEqualTo(604L * 1024);
        assertThat(m.shmTotalBytes()).isPositive();
        assertThat(m.shmUsedBytes()).isBetween(0L, m.shmTotalBytes());
    }

    @Test
    void noMeminfoIsNoReading() {
        assertThat(new LinuxProcSource(dir.resolve("missing")).hostMemory(1.0)).isEmpty();
    }

    @Test
    void thisMachinesMemoryIsReadFromTheRealProc() {
        HostMemory m = LinuxProcSource.system().hostMemory(1.0).orElseThrow();
        assertThat(m.memTotalBytes()).isPositive();
        assertThat(m.memAvailableBytes()).isBetween(1L, m.memTotalBytes());
    }
}
