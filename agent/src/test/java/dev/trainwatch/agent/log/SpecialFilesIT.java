package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A FIFO (made with the system's {@code mkfifo}) or a device at the log's path: refused without opening it, read again
 * once a regular file is back; and a read stuck in opening a FIFO never holds up whoever polls the source.
 */
class SpecialFilesIT {

    private static final String FORMAT = "step (?<step>\\d+) time (?<time>[0-9.]+)";

    @TempDir
    Path dir;

    static void mkfifo(Path path) throws Exception {
        Process p = new ProcessBuilder("mkfifo", path.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }

    private LogTailer tailer(Path log) {
        return LogTailer.open(log, FORMAT, Clock.systemUTC());
    }

    @Test
    void aFifoIsRefusedWithoutBlockingAndARegularFileIsReadOnceItIsBack() throws Exception {
        Path log = dir.resolve("train.log");
        mkfifo(log);
        try (LogTailer t = tailer(log)) {
            long started = System.nanoTime();
            assertThat(t.poll()).isEmpty(); // before: blocked in open() until a writer came
            assertThat(System.nanoTime() - started).isLessThan(Duration.ofSeconds(5).toNanos());
            assertThat(t.problem()).isEqualTo("log file " + log + " is a FIFO, not a regular file; waiting for a "
                    + "regular file");
            Files.delete(log);
            Files.writeString(log, "step 1 time 1.0\nstep 2 time 1.0\n");
            assertThat(t.poll()).extracting(StepEvent::step).containsExactly(1L, 2L);
            assertThat(t.problem()).isNull();
        }
    }

    @Test
    void aFifoSwappedInForTheFileBeingReadIsRefusedAndTheFileResumedWhenItReturns() throws Exception {
        Path log = dir.resolve("train.log");
        Path kept = dir.resolve("kept.log");
        Files.writeString(log, "step 1 time 1.0\n");
        try (LogTailer t = tailer(log)) {
            assertThat(t.poll()).hasSize(1);
            Files.move(log, kept);
            mkfifo(log);
            t.poll();
            assertThat(t.problem()).contains("is a FIFO");
            Files.writeString(kept, "step 2 time 1.0\n", StandardOpenOption.APPEND);
            Files.delete(log);
            Files.move(kept, log);
            List<StepEvent> after = new ArrayList<>(t.poll());
            after.addAll(t.poll());
            assertThat(after).extracting(StepEvent::step).containsExactly(2L);
        }
    }

    @Test
    void aCharacterDeviceIsRefused() {
        Path devNull = Path.of("/dev/null");
        try (LogTailer t = tailer(devNull)) {
            assertThat(t.poll()).isEmpty();
            assertThat(t.problem()).contains("is a character device, not a regular file");
        }
    }

    /** A source whose read opens a FIFO for reading, as a tailer that lost the race between stat and open would. */
    private static StepSource blockingOn(Path fifo) {
        return new StepSource() {
            @Override
            public List<StepEvent> poll() {
                try (FileChannel ignored = FileChannel.open(fifo, StandardOpenOption.READ)) {
                    return List.of();
                } catch (IOException e) {
                    return List.of();
                }
            }

            @Override
            public Path file() {
                return fifo;
            }

            @Override
            public String problem() {
                return null;
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void aReadStuckInOpeningAFifoNeverHoldsUpThePollerAndIsReleased() throws Exception {
        Path fifo = dir.resolve("train.log");
        mkfifo(fifo);
        int[] reads = new int[1];
        StepSource inner = blockingOn(fifo);
        StepSource counting = new StepSource() {
            @Override
            public List<StepEvent> poll() {
                synchronized (reads) {
                    reads[0]++;
                }
                return inner.poll();
            }

            @Override
            public Path file() {
                return fifo;
            }

            @Override
            public String problem() {
                return null;
            }

            @Override
            public void close() {
            }
        };
        BackgroundStepSource background = new BackgroundStepSource(counting, Duration.ofMillis(50),
                Duration.ofMillis(300));
        background.start();
        try {
            long started = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                assertThat(background.poll()).isEmpty();
            }
            assertThat(System.nanoTime() - started).isLessThan(Duration.ofSeconds(2).toNanos());
            await().atMost(10, TimeUnit.SECONDS).until(() -> background.problem() != null);
            assertThat(background.problem()).contains("has not returned");
            // Polling goes on; the stuck open is released and reading continues (it blocks again, is released again).
            await().atMost(20, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(() -> {
                background.poll();
                synchronized (reads) {
                    return reads[0] >= 3;
                }
            });
        } finally {
            background.close();
        }
    }
}
