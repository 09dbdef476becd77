package dev.trainwatch.agent.attribution;

import static dev.trainwatch.protocol.testing.Samples.gpu;
import static dev.trainwatch.protocol.testing.Samples.gpuWithUnknownProcesses;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.GpuSample;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A poll whose GPUs list the same processes while every cached reading is still trusted gets the previous poll's
 * attribution without reading /proc; every poll's result is what an attributor that computes every poll gives.
 */
class AttributorReuseTest {

    @TempDir
    Path dir;
    Path root;

    /** Counts the reads that go to the file system. */
    static final class Counting implements ProcSource {
        final ProcSource proc;
        final AtomicInteger reads = new AtomicInteger();

        Counting(ProcSource proc) {
            this.proc = proc;
        }

        @Override
        public List<Long> pids() {
            reads.incrementAndGet();
            return proc.pids();
        }

        @Override
        public Optional<ProcStat> stat(long pid) {
            reads.incrementAndGet();
            return proc.stat(pid);
        }

        @Override
        public Map<String, String> environment(long pid) {
            reads.incrementAndGet();
            return proc.environment(pid);
        }

        @Override
        public List<String> commandLine(long pid) {
            reads.incrementAndGet();
            return proc.commandLine(pid);
        }

        @Override
        public Optional<String> descriptorTarget(long pid, int fd) {
            reads.incrementAndGet();
            return proc.descriptorTarget(pid, fd);
        }
    }

    @BeforeEach
    void setUp() {
        root = ProcFixture.copy("torchrun-node", dir);
    }

    static List<GpuSample> node(double ts, long rankOnGpu0) {
        return List.of(gpu(ts, 0, rankOnGpu0), gpu(ts, 1, 4102), gpu(ts, 2, 4103), gpu(ts, 3, 4104), gpu(ts, 4, 5000),
                gpu(ts, 5, 7000), gpuWithUnknownProcesses(ts, 7));
    }

    private void setUtime(long pid, long utime) throws IOException {
        Path stat = root.resolve(Long.toString(pid)).resolve("stat");
        String[] f = Files.readString(stat).strip().split(" ");
        f[13] = Long.toString(utime);
        Files.writeString(stat, String.join(" ", f) + "\n");
    }

    @Test
    void samePollsReuseTheAttributionAndMatchAFreshOne() throws IOException {
        Counting counting = new Counting(new LinuxProcSource(root));
        Attributor reusing = new Attributor(counting, "node1", null, null, 10.0, 5.0);
        Attributor computing = new Attributor(new LinuxProcSource(root), "node1", null, null, 10.0, 5.0);
        computing.reuse = false;

        Attributor.Update first = reusing.update(node(100, 4101), 100);
        assertThat(first).isEqualTo(computing.update(node(100, 4101), 100));
        int reads = counting.reads.get();
        for (int t = 101; t <= 104; t++) {
            Attributor.Update u = reusing.update(node(t, 4101), t);
            assertThat(u).isSameAs(first).isEqualTo(computing.update(node(t, 4101), t));
        }
        assertThat(counting.reads.get()).as("no /proc reads while nothing changed").isEqualTo(reads);

        // A rank used CPU: its stat is read again once it is 5 s old, by both.
        setUtime(4101, 99_999);
        for (int t = 105; t <= 130; t++) {
            long rank = t >= 112 && t < 117 ? 4150 : 4101; // the GPU lists another process for a while
            if (t == 120) {
                setUtime(4102, 77_777);
            }
            Attributor.Update u = reusing.update(node(t, rank), t);
            assertThat(u).as("t=" + t).isEqualTo(computing.update(node(t, rank), t));
        }
        assertThat(reusing.update(node(131, 4101), 131).runs().toString()).contains("cpuSeconds=1081.22", "cpuSeconds=859.0"); // (99,999 + 8,123) and (77,777 + stime) ticks
    }

    @Test
    void aRunThatEndsIsReportedOnceAsWithoutReuse() throws IOException {
        Attributor reusing = new Attributor(new LinuxProcSource(root), "node1", null, null, 10.0, 5.0);
        Attributor computing = new Attributor(new LinuxProcSource(root), "node1", null, null, 10.0, 5.0);
        computing.reuse = false;
        for (int t = 100; t <= 103; t++) {
            assertThat(reusing.update(node(t, 4101), t)).isEqualTo(computing.update(node(t, 4101), t));
        }
        // The lone run's process (pid 5000) exits and leaves its GPU.
        Files.walk(root.resolve("5000")).sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        for (int t = 104; t <= 115; t++) {
            List<GpuSample> samples = List.of(gpu(t, 0, 4101), gpu(t, 1, 4102), gpu(t, 2, 4103), gpu(t, 3, 4104),
                    gpu(t, 4), gpu(t, 5, 7000), gpuWithUnknownProcesses(t, 7));
            assertThat(reusing.update(samples, t)).as("t=" + t).isEqualTo(computing.update(samples, t));
        }
    }
}
