package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tailer across agent restarts, with what it committed beside the spool: nothing shipped is read again, and
 * what is read again (a crash before the commit) carries the same source and step, so the collector can drop it.
 * DiT's own logger writes the lines (its format, from the DiT repository's train.py).
 */
class LogResumeTest {

    @TempDir
    Path dir;

    private Path spool() {
        return dir.resolve("spool");
    }

    /** A DiT line as its logger writes it: {@code [time] (step=0000100) Train Loss: ..., Train Steps/Sec: ...}. */
    static String dit(long step) {
        long second = step * 2;
        return String.format("[2024-03-01 %02d:%02d:%02d] (step=%07d) Train Loss: 0.1500, Train Steps/Sec: 0.50%n",
                10 + second / 3600, second / 60 % 60, second % 60, step);
    }

    private static void append(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private static void appendSteps(Path file, long from, long to) throws IOException {
        StringBuilder text = new StringBuilder();
        for (long s = from; s <= to; s++) {
            text.append(dit(s));
        }
        append(file, text.toString());
    }

    /** A tailer as the agent makes one, resuming from the spool directory. */
    private LogTailer agentTailer(Path log) {
        LogTailer t = LogTailer.open(log, "dit", Clock.systemUTC());
        t.keepPositionsIn(spool());
        return t;
    }

    /** Polls once and commits, as the agent does once the steps are delivered. */
    private static List<StepEvent> pollAndCommit(LogTailer t) {
        List<StepEvent> steps = t.poll();
        t.commit(t.checkpoint());
        return steps;
    }

    private static List<Long> steps(List<StepEvent> events) {
        return events.stream().map(StepEvent::step).toList();
    }

    @Test
    void aRestartedAgentReadsOnlyWhatWasLoggedSinceItsLastCommit() throws IOException {
        Files.createDirectories(spool());
        Path log = dir.resolve("log.txt");
        append(log, "[2024-03-01 10:00:00] Experiment directory created at results/000-DiT-XL-2\n");
        appendSteps(log, 1, 30);
        List<StepEvent> first;
        try (LogTailer t = agentTailer(log)) {
            first = pollAndCommit(t);
        }
        // DiT reports steps/sec: the first line has nothing to be timed against... it has: 0.50 steps/s.
        assertThat(steps(first)).hasSize(30);
        for (int restart = 0; restart < 12; restart++) {
            appendSteps(log, 31 + restart, 31 + restart);
            try (LogTailer t = agentTailer(log)) {
                assertThat(steps(pollAndCommit(t))).as("restart %d", restart).containsExactly(31L + restart);
            }
        }
    }

    @Test
    void linesReadAgainAfterACrashBeforeTheCommitCarryTheSameSourceAndStep() throws IOException {
        Files.createDirectories(spool());
        Path log = dir.resolve("log.txt");
        appendSteps(log, 1, 10);
        Set<String> keys = new HashSet<>();
        try (LogTailer t = agentTailer(log)) {
            pollAndCommit(t);
            appendSteps(log, 11, 15);
            for (StepEvent e : t.poll()) { // read, shipped maybe, then SIGKILL before the commit
                keys.add(e.source() + "/" + e.step());
            }
        }
        try (LogTailer t = agentTailer(log)) {
            List<StepEvent> again = t.poll();
            assertThat(steps(again)).containsExactly(11L, 12L, 13L, 14L, 15L);
            assertThat(again).allSatisfy(e -> assertThat(keys).contains(e.source() + "/" + e.step()));
        }
    }

    @Test
    void aSymlinkSwappedBackToAFileReadBeforeIsNotReadAgain() throws IOException {
        Files.createDirectories(spool());
        Path a = dir.resolve("a.txt");
        Path b = dir.resolve("b.txt");
        appendSteps(a, 1, 24);
        append(b, "[2024-03-01 11:00:00] Experiment directory created at results/001-DiT-XL-2\n");
        Path link = dir.resolve("current.log");
        Files.createSymbolicLink(link, a);
        List<StepEvent> all = new ArrayList<>();
        try (LogTailer t = agentTailer(link)) {
            all.addAll(pollAndCommit(t));
            swap(link, b);
            all.addAll(pollAndCommit(t));
            appendSteps(b, 100, 101);
            all.addAll(pollAndCommit(t));
            swap(link, a);
            all.addAll(pollAndCommit(t));
            appendSteps(a, 25, 25);
            all.addAll(pollAndCommit(t));
        }
        // 24 + 2 + 1 lines, each once (before: 60 step reports for 24 lines).
        assertThat(steps(all)).containsExactlyInAnyOrder(
                1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L, 21L, 22L,
                23L, 24L, 100L, 101L, 25L);
        // A restart after all that reads nothing again, whichever file the link names.
        try (LogTailer t = agentTailer(link)) {
            assertThat(t.poll()).isEmpty();
        }
    }

    @Test
    void aFileFirstMetAfterAnotherKeepsTheSourceAnEarlierAgentSentItsLinesWith() throws IOException {
        // OperationsIT's node-b: the agent is killed before its first commit; the next one meets the symlink on
        // b.txt, then back on a.txt, which it reads from its start. Those lines must carry the sources the first
        // agent sent them with (b.txt's higher steps are no new stretch of a.txt), or the collector counts them
        // twice (it did: 140 steps for 127 lines).
        Files.createDirectories(spool());
        Path a = dir.resolve("a.txt");
        Path b = dir.resolve("b.txt");
        append(a, "[2024-03-01 10:00:00] Experiment directory created at results/000-DiT-XL-2\n");
        append(b, "[2024-03-01 10:00:00] Experiment directory created at results/001-DiT-XL-2\n");
        appendSteps(a, 1, 8);
        Path link = dir.resolve("current.log");
        Files.createSymbolicLink(link, a);
        List<StepEvent> sent;
        try (LogTailer t = agentTailer(link)) {
            sent = t.poll(); // sent, never committed
        }
        swap(link, b);
        appendSteps(b, 9, 16);
        try (LogTailer t = agentTailer(link)) {
            assertThat(steps(t.poll())).containsExactly(9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L);
            swap(link, a);
            appendSteps(a, 17, 17);
            List<StepEvent> again = t.poll();
            assertThat(steps(again)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 17L);
            assertThat(again.subList(0, 8)).extracting(StepEvent::source)
                    .containsExactlyElementsOf(sent.stream().map(StepEvent::source).toList());
        }
    }

    private static void swap(Path link, Path target) throws IOException {
        Path temp = link.resolveSibling(link.getFileName() + ".new");
        Files.deleteIfExists(temp);
        Files.createSymbolicLink(temp, target);
        Files.move(temp, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void rotationTruncationAndARestartInBetweenLoseNothingAndRepeatNothing() throws IOException {
        Files.createDirectories(spool());
        Path log = dir.resolve("log.txt");
        List<StepEvent> all = new ArrayList<>();
        appendSteps(log, 1, 5);
        try (LogTailer t = agentTailer(log)) {
            all.addAll(pollAndCommit(t));
            appendSteps(log, 6, 8);
            Files.move(log, dir.resolve("log.txt.1")); // logrotate's rename, then the writer reopens
            appendSteps(log, 9, 10);
            all.addAll(pollAndCommit(t));
        }
        try (LogTailer t = agentTailer(log)) { // restart
            all.addAll(pollAndCommit(t));
            appendSteps(log, 11, 12);
            all.addAll(pollAndCommit(t));
            Files.write(log, new byte[0]); // copytruncate
            appendSteps(log, 13, 14);
            all.addAll(pollAndCommit(t));
        }
        try (LogTailer t = agentTailer(log)) { // restart after the truncation
            appendSteps(log, 15, 15);
            all.addAll(pollAndCommit(t));
        }
        assertThat(steps(all)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L);
        Set<String> keys = new HashSet<>();
        for (StepEvent e : all) {
            assertThat(keys.add(e.source() + "/" + e.step())).as("key of step %d", e.step()).isTrue();
        }
    }

    @Test
    void aLogRotatedWhileTheAgentWasDownIsReadToItsEndThenTheNewFileFromItsStart() throws IOException {
        Files.createDirectories(spool());
        Path log = dir.resolve("log.txt");
        List<StepEvent> all = new ArrayList<>();
        appendSteps(log, 1, 5);
        try (LogTailer t = agentTailer(log)) {
            all.addAll(pollAndCommit(t));
        }
        // While no agent runs: more lines, the rotation (rename, new file), lines in the new file.
        appendSteps(log, 6, 8);
        Files.move(log, dir.resolve("log.txt.1"));
        appendSteps(log, 9, 10);
        try (LogTailer t = agentTailer(log)) {
            all.addAll(pollAndCommit(t));
            assertThat(t.poll()).isEmpty();
        }
        assertThat(steps(all)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
    }

    @Test
    void aNewRunAppendedToTheSameFileIsANewSourceEvenAcrossARestart() throws IOException {
        Files.createDirectories(spool());
        Path log = dir.resolve("log.txt");
        List<StepEvent> all = new ArrayList<>();
        appendSteps(log, 1, 10);
        try (LogTailer t = agentTailer(log)) {
            all.addAll(pollAndCommit(t));
        }
        // DiT's logger appends: a second run (or a resume from an earlier checkpoint) starts its steps over.
        appendSteps(log, 1, 5);
        try (LogTailer t = agentTailer(log)) {
            all.addAll(pollAndCommit(t));
        }
        assertThat(steps(all)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 1L, 2L, 3L, 4L, 5L);
        String firstRun = all.get(0).source();
        String secondRun = all.get(10).source();
        assertThat(firstRun).isNotNull().isNotEqualTo(secondRun);
        assertThat(all.subList(0, 10)).allSatisfy(e -> assertThat(e.source()).isEqualTo(firstRun));
        assertThat(all.subList(10, 15)).allSatisfy(e -> assertThat(e.source()).isEqualTo(secondRun));
    }

    @Test
    void aPartialLineAtTheCommitIsReadWholeAfterTheRestart() throws IOException {
        Files.createDirectories(spool());
        Path log = dir.resolve("log.txt");
        appendSteps(log, 1, 3);
        String next = dit(4);
        append(log, next.substring(0, 20));
        try (LogTailer t = agentTailer(log)) {
            assertThat(steps(pollAndCommit(t))).containsExactly(1L, 2L, 3L);
        }
        append(log, next.substring(20));
        try (LogTailer t = agentTailer(log)) {
            assertThat(steps(pollAndCommit(t))).containsExactly(4L);
        }
    }

    @Test
    void unreadablePositionsAreOneLineAndTheRecentPastIsReadAsBefore() throws IOException {
        Files.createDirectories(spool());
        Files.writeString(spool().resolve(LogPositions.FILE_NAME), "{not json");
        Path log = dir.resolve("log.txt");
        appendSteps(log, 1, 3);
        try (LogTailer t = agentTailer(log)) {
            assertThat(steps(pollAndCommit(t))).containsExactly(1L, 2L, 3L);
        }
        try (LogTailer t = agentTailer(log)) {
            assertThat(t.poll()).isEmpty();
        }
    }
}
