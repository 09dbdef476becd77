package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.testing.SettableClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tailer against real files that are appended to, rotated, truncated and mangled the way runs do it. */
class LogTailerTest {

    private static final String FORMAT = "step (?<step>\\d+) time (?<time>[0-9.]+)";

    @TempDir
    Path dir;

    private Path log() {
        return dir.resolve("train_log.log");
    }

    private static void append(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private LogTailer tailer(long history, int maxLine) {
        return new LogTailer(log(), StepLineParsers.forFormat(FORMAT), Fixtures.CLOCK, history, maxLine);
    }

    private static List<Long> steps(List<StepEvent> events) {
        return events.stream().map(StepEvent::step).toList();
    }

    @Test
    void attachReadsOnlyTheRecentPastStartingAtACompleteLine() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 5000; i++) {
            text.append("2024-05-01 12:00:00,000 - INFO - step ").append(i).append(" time 1.").append(i % 10)
                    .append('\n');
        }
        Files.writeString(log(), text);
        long history = 10_000;
        byte[] all = text.toString().getBytes(StandardCharsets.US_ASCII);
        int cut = all.length - (int) history;
        int firstFull = cut;
        while (all[firstFull - 1] != '\n') {
            firstFull++;
        }
        String firstLine = text.substring(firstFull, text.indexOf("\n", firstFull));
        long expectedFirst = Long.parseLong(firstLine.replaceAll(".* step (\\d+) .*", "$1"));

        try (LogTailer t = tailer(history, LogTailer.DEFAULT_MAX_LINE_BYTES)) {
            List<StepEvent> events = t.poll();
            assertThat(events.get(0).step()).isEqualTo(expectedFirst);
            assertThat(events.get(events.size() - 1).step()).isEqualTo(5000);
            assertThat(events).hasSize((int) (5000 - expectedFirst + 1));
            assertThat(t.problem()).isNull();
            assertThat(t.poll()).isEmpty();
            append(log(), "step 5001 time 1.5\n");
            assertThat(steps(t.poll())).containsExactly(5001L);
        }
    }

    @Test
    void historyStartingExactlyAtALineBoundaryKeepsThatLine() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\nstep 2 time 1.0\n");
        try (LogTailer t = tailer("step 2 time 1.0\n".length(), 1024)) {
            assertThat(steps(t.poll())).containsExactly(2L);
        }
    }

    @Test
    void partialLineWaitsForItsNewline() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\nstep 2 ti");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(steps(t.poll())).containsExactly(1L);
            assertThat(t.poll()).isEmpty();
            append(log(), "me 2.5");
            assertThat(t.poll()).isEmpty();
            append(log(), "\r\nstep 3 time 1.0\n");
            List<StepEvent> events = t.poll();
            assertThat(steps(events)).containsExactly(2L, 3L);
            assertThat(events.get(0).timeS()).isEqualTo(2.5);
        }
    }

    @Test
    void progressBarFrameIsCompletedByTheNextCarriageReturn() throws IOException {
        Files.writeString(log(), "Steps:   0%|          | 0/1000 [00:00<?, ?it/s]"
                + "\rSteps:   0%|          | 1/1000 [00:02<40:12,  2.41s/it, lr=1e-05, step_loss=0.0937]");
        SettableClock clock = new SettableClock(Fixtures.NOW);
        try (LogTailer t = new LogTailer(log(), StepLineParsers.forFormat("accelerate"), clock,
                Long.MAX_VALUE, 1024)) {
            assertThat(t.poll()).isEmpty();
            append(log(), "\rSteps:   0%|          | 2/1000 [00:04<40:10,  2.40s/it, lr=1e-05, step_loss=0.0811]");
            // Frame 1 is complete, but a redraw of step 1 (with its loss) may still follow: held for a second.
            assertThat(t.poll()).isEmpty();
            clock.set(Fixtures.NOW.plusSeconds(1));
            List<StepEvent> late = t.poll();
            assertThat(steps(late)).containsExactly(1L);
            assertThat(late.get(0).loss()).isEqualTo(0.0937);
            assertThat(late.get(0).ts()).isEqualTo(Fixtures.NOW.getEpochSecond());
        }
    }

    /**
     * kohya/musubi and diffusers draw each step twice: {@code progress_bar.update(1)} redraws with the previous
     * step's postfix, then {@code set_postfix(avr_loss=…)} with the new one. The step's loss is its last frame's.
     */
    @Test
    void aStepDrawnTwiceCarriesTheLossOfItsLastFrame() throws IOException {
        // The frames of steps 36-38 as musubi-tuner draws them (the bar of its hv_train_network.py loop).
        Files.writeString(log(), "\rsteps:  10%|█         | 36/370 [01:00<09:17,  1.67s/it, avr_loss=0.0751]"
                + "\rsteps:  10%|█         | 37/370 [01:02<09:16,  1.67s/it, avr_loss=0.0751]"
                + "\rsteps:  10%|█         | 37/370 [01:02<09:16,  1.67s/it, avr_loss=0.0796]"
                + "\rsteps:  10%|█         | 38/370 [01:03<09:14,  1.67s/it, avr_loss=0.0796]"
                + "\rsteps:  10%|█         | 38/370 [01:03<09:14,  1.67s/it, avr_loss=0.0853]"
                + "\rsteps:  11%|█         | 39/370 [01:05<09:13,  1.67s/it, avr_loss=0.0853]\r");
        SettableClock clock = new SettableClock(Fixtures.NOW);
        try (LogTailer t = new LogTailer(log(), StepLineParsers.forFormat("auto"), clock, Long.MAX_VALUE, 1024)) {
            List<StepEvent> events = new java.util.ArrayList<>(t.poll());
            clock.set(Fixtures.NOW.plusSeconds(2));
            events.addAll(t.poll());
            assertThat(events).extracting(StepEvent::step).containsExactly(36L, 37L, 38L, 39L);
            assertThat(events).extracting(StepEvent::loss).containsExactly(0.0751, 0.0796, 0.0853, 0.0853);
            assertThat(events.get(2).intervalSteps()).isEqualTo(1);
        }
    }

    @Test
    void rotationByRenameAndRecreateLosesNothing() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\nstep 2 time 1.0\n");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(steps(t.poll())).containsExactly(1L, 2L);
            append(log(), "step 3 time 1.0\n");
            Path rotated = dir.resolve("train_log.log.1");
            Files.move(log(), rotated);
            // Path missing for a moment: the old file keeps being read.
            assertThat(steps(t.poll())).containsExactly(3L);
            assertThat(t.problem()).isNull();
            // The writer still holds the old file and finishes a line there (unterminated), then switches.
            append(rotated, "step 4 time 1.0\nstep 5 time 1.0");
            Files.writeString(log(), "step 6 time 1.0\n");
            assertThat(steps(t.poll())).containsExactly(4L, 5L, 6L);
            append(log(), "step 7 time 1.0\n");
            assertThat(steps(t.poll())).containsExactly(7L);
        }
    }

    @Test
    void replacementWithoutAMissingMomentIsDetectedByFileKey() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\n");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(steps(t.poll())).containsExactly(1L);
            Path next = dir.resolve("next.log");
            // A longer new file: a size check alone would miss the switch.
            Files.writeString(next, "step 100 time 2.0\nstep 101 time 2.0\nstep 102 time 2.0\n");
            Files.move(next, log(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertThat(steps(t.poll())).containsExactly(100L, 101L, 102L);
        }
    }

    @Test
    void truncationRestartsFromTheStart() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\nstep 2 time 1.0\nstep 3 time 1.0\nstep 4 ti");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(steps(t.poll())).containsExactly(1L, 2L, 3L);
            // copytruncate / "> file": the same file, shorter; the half line before it is dropped.
            Files.writeString(log(), "step 1 time 3.0\n", StandardOpenOption.TRUNCATE_EXISTING);
            List<StepEvent> events = t.poll();
            assertThat(steps(events)).containsExactly(1L);
            assertThat(events.get(0).timeS()).isEqualTo(3.0);
        }
    }

    @Test
    void overlongLinesAreSkippedWholeAndTheNextLineStillParses() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\n" + "x".repeat(5000) + " step 2 time 1.0\nstep 3 time 1.0\n");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(steps(t.poll())).containsExactly(1L, 3L);
            assertThat(t.skippedLongLines()).isEqualTo(1);
            // The same when the long line arrives in pieces across polls.
            append(log(), "y".repeat(700));
            assertThat(t.poll()).isEmpty();
            append(log(), "y".repeat(700) + " step 4 time 1.0");
            assertThat(t.poll()).isEmpty();
            append(log(), "\nstep 5 time 1.0\n");
            assertThat(steps(t.poll())).containsExactly(5L);
            assertThat(t.skippedLongLines()).isEqualTo(2);
        }
    }

    @Test
    void aMultiMegabyteLineUnderTheDefaultCapDoesNotStopTheTailer() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\n" + "z".repeat(3 << 20) + "\nstep 2 time 1.0\n");
        try (LogTailer t = LogTailer.open(log(), FORMAT, Fixtures.CLOCK, Long.MAX_VALUE,
                LogTailer.LineTime.READ)) {
            assertThat(steps(t.poll())).containsExactly(1L, 2L);
            assertThat(t.skippedLongLines()).isEqualTo(1);
        }
    }

    @Test
    void missingFileIsAProblemUntilItAppears() throws IOException {
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(t.poll()).isEmpty();
            assertThat(t.problem()).isEqualTo("log file " + log() + " does not exist yet; waiting for it");
            assertThat(t.poll()).isEmpty();
            Files.writeString(log(), "step 1 time 1.0\n");
            assertThat(steps(t.poll())).containsExactly(1L);
            assertThat(t.problem()).isNull();
        }
    }

    @Test
    void directoryIsAProblem() throws IOException {
        Files.createDirectory(log());
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(t.poll()).isEmpty();
            assertThat(t.problem()).isEqualTo("log file " + log() + " is a directory, not a regular file; waiting for "
                    + "a regular file");
        }
    }

    @Test
    void unreadableFileIsAOneLineProblemAndRecovers() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\n");
        Files.setPosixFilePermissions(log(), PosixFilePermissions.fromString("---------"));
        assumeFalse(Files.isReadable(log()), "running as a user that permission bits restrict");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(t.poll()).isEmpty();
            assertThat(t.problem()).isEqualTo(LogTailer.permissionDenied(log())).contains("permission denied", "give");
            Files.setPosixFilePermissions(log(), PosixFilePermissions.fromString("rw-r--r--"));
            assertThat(steps(t.poll())).containsExactly(1L);
            assertThat(t.problem()).isNull();
        }
    }

    @Test
    void unreadableEvenForRoot() {
        // Root ignores permission bits on ordinary files, but the kernel refuses to read a write-only sysctl even
        // to root: a real EACCES on the machines where the test above cannot run.
        Path writeOnly = Path.of("/proc/sys/vm/compact_memory");
        assumeTrue(Files.exists(writeOnly), "a Linux /proc/sys");
        try (LogTailer t = new LogTailer(writeOnly, StepLineParsers.forFormat("auto"), Fixtures.CLOCK, 1024, 1024)) {
            assertThat(t.poll()).isEmpty();
            assertThat(t.problem()).isEqualTo(LogTailer.permissionDenied(writeOnly));
        }
    }

    @Test
    void nothingNewMeansAnEmptyPoll() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\nnoise\n");
        try (LogTailer t = tailer(Long.MAX_VALUE, 1024)) {
            assertThat(t.poll()).hasSize(1);
            for (int i = 0; i < 3; i++) {
                assertThat(t.poll()).isEmpty();
            }
        }
    }

    @Test
    void closedTailerReturnsNothing() throws IOException {
        Files.writeString(log(), "step 1 time 1.0\n");
        LogTailer t = tailer(Long.MAX_VALUE, 1024);
        t.close();
        assertThat(t.poll()).isEmpty();
    }

    @Test
    void timeFromTimestampsWhenTheFormatHasNone() throws IOException {
        Files.writeString(log(), "2024-05-01 12:00:00,000 it=100 loss=0.5\n2024-05-01 12:00:30,000 it=110 loss=0.4\n");
        try (LogTailer t = new LogTailer(log(), StepLineParsers.forFormat("it=(?<step>\\d+) loss=(?<loss>[0-9.]+)"),
                Fixtures.CLOCK, Long.MAX_VALUE, 1024)) {
            List<StepEvent> events = t.poll();
            // The first line has no predecessor to time it against; the second covers 10 steps in 30 s.
            assertThat(steps(events)).containsExactly(110L);
            assertThat(events.get(0).timeS()).isEqualTo(3.0);
            assertThat(events.get(0).loss()).isEqualTo(0.4);
            assertThat(events.get(0).intervalSteps()).isEqualTo(10);
        }
    }

    @Test
    void factoryReadsTimestampsWithoutOffsetInTheMachinesZone() throws IOException {
        Files.writeString(log(), "2024-05-01 12:00:00,250 - x - INFO - step 7 time 1.0\n");
        // The agent passes Clock.systemUTC(); Python wrote local time (as a replay with --log-time log reads it).
        try (LogTailer t = LogTailer.open(log(), FORMAT, Fixtures.CLOCK, Long.MAX_VALUE, LogTailer.LineTime.LOG)) {
            double expected = java.time.LocalDateTime.of(2024, 5, 1, 12, 0).atZone(java.time.ZoneId.systemDefault())
                    .toEpochSecond() + 0.25;
            assertThat(t.poll().get(0).ts()).isEqualTo(expected);
        }
    }

    @Test
    void writtenInRandomPiecesTheFixturesGiveWhatAWholeReadGives() throws IOException {
        java.util.Random random = new java.util.Random(11);
        for (String[] c : new String[][] {{"pixart-sigma.log", "pixart"}, {"sana.log", "sana"}, {"dit.log", "dit"},
                {"opensora.log", "opensora"}, {"accelerate.log", "auto"}}) {
            byte[] all = Fixtures.bytes(c[0]);
            Path file = dir.resolve("live-" + c[0]);
            Files.write(file, new byte[0]);
            List<StepEvent> live = new java.util.ArrayList<>();
            SettableClock clock = new SettableClock(Fixtures.NOW);
            try (LogTailer t = new LogTailer(file, StepLineParsers.forFormat(c[1]), clock, Long.MAX_VALUE,
                    LogTailer.DEFAULT_MAX_LINE_BYTES)) {
                int at = 0;
                while (at < all.length) {
                    // Pieces cut anywhere: inside numbers, inside multi-byte bar characters, between \r and \n.
                    int n = Math.min(all.length - at, 1 + random.nextInt(97));
                    Files.write(file, java.util.Arrays.copyOfRange(all, at, at + n), StandardOpenOption.APPEND);
                    at += n;
                    live.addAll(t.poll());
                }
                clock.set(Fixtures.NOW.plusSeconds(2));
                live.addAll(t.poll());
            }
            // The same lines from another file: the same steps, under that file's source.
            assertThat(live).as(c[0]).allSatisfy(e -> assertThat(e.source()).isNotNull());
            assertThat(live.stream().map(e -> Samples.withSource(e, null)).toList()).as(c[0])
                    .isEqualTo(Fixtures.read(dir, c[0], c[1]).stream().map(e -> Samples.withSource(e, null)).toList())
                    .isNotEmpty();
        }
    }
}
