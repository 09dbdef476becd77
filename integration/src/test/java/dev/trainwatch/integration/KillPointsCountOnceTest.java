package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.agent.log.LogTailer;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.SettableClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * OperationsIT's node-b without its randomness: the real log tailer (an agent's lifetimes, each resuming from what
 * the last one committed) and the real fleet, the log a symlink swapped from run-1.log to run-2.log and back, then
 * replaced by a FIFO while lines go on into run-1.log. The agent is killed once, at every point of the story in
 * turn, after sending what it read and before committing it; whatever the point, the fleet counts every line once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KillPointsCountOnceTest {

    @TempDir
    Path dir;

    private long step;
    private long lines;

    private static String dit(long step) {
        long second = 600 + step;
        return String.format(Locale.ROOT,
                "[2026-12-06 10:%02d:%02d] (step=%07d) Train Loss: 0.1500, Train Steps/Sec: 2.00%n",
                second / 60 % 60, second % 60, step);
    }

    private void line(Path file) throws IOException {
        lines++;
        Files.writeString(file, dit(++step), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    private static void link(Path link, Path target) throws IOException {
        Path temp = link.resolveSibling("link.tmp");
        Files.deleteIfExists(temp);
        Files.createSymbolicLink(temp, target);
        Files.move(temp, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** A story of file events with a poll after each line; returns the number of polls. */
    private interface Story {
        int play(Path base, Agent agent) throws Exception;
    }

    /** node-b: the symlink swapped to run-2.log and back, then replaced by a FIFO for a while. */
    private int symlinkStory(Path base, Agent agent) throws Exception {
        Path run1 = base.resolve("run-1.log");
        Path run2 = base.resolve("run-2.log");
        Path current = base.resolve("current.log");
        Files.writeString(run1, "[2026-12-06 10:00:00] Experiment directory created at results/000-DiT-XL-2\n");
        Files.writeString(run2, "[2026-12-06 10:00:00] Experiment directory created at results/001-DiT-XL-2\n");
        Files.createSymbolicLink(current, run1);
        agent.start(current);
        for (int i = 0; i < 8; i++) {
            line(run1);
            agent.poll();
        }
        link(current, run2);
        for (int i = 0; i < 8; i++) {
            line(run2);
            agent.poll();
        }
        link(current, run1);
        for (int i = 0; i < 6; i++) {
            line(run1);
            agent.poll();
        }
        Files.delete(current);
        new ProcessBuilder("mkfifo", current.toString()).start().waitFor(10, TimeUnit.SECONDS);
        for (int i = 0; i < 6; i++) {
            line(run1);
            agent.poll();
        }
        Files.delete(current);
        Files.createSymbolicLink(current, run1);
        for (int i = 0; i < 8; i++) {
            line(run1);
            agent.poll();
        }
        return agent.polls;
    }

    /**
     * node-a: logrotate renames the log after 12 lines (a new file is created), and after 24 DiT starts again in the
     * same file (its steps from 1 again).
     */
    private int rotationStory(Path base, Agent agent) throws Exception {
        Path log = base.resolve("log.txt");
        Files.writeString(log, "[2026-12-06 10:00:00] Experiment directory created at results/000-DiT-XL-2\n");
        agent.start(log);
        for (int i = 0; i < 12; i++) {
            line(log);
            agent.poll();
        }
        Files.move(log, base.resolve("log.txt.1"));
        for (int i = 0; i < 12; i++) {
            line(log);
            agent.poll();
        }
        step = 0;
        for (int i = 0; i < 12; i++) {
            line(log);
            agent.poll();
        }
        return agent.polls;
    }

    /**
     * The agent's lifetimes: poll, send, commit every {@code commitEvery} polls; killed once after poll
     * {@code killAt} (0: never).
     */
    private final class Agent {
        final Fleet fleet;
        final Path spool;
        final int killAt;
        final int commitEvery;
        int polls;
        LogTailer tailer;
        Path log;
        long counted;

        Agent(Fleet fleet, Path spool, int killAt, int commitEvery) {
            this.fleet = fleet;
            this.spool = spool;
            this.killAt = killAt;
            this.commitEvery = commitEvery;
        }

        void start(Path file) {
            log = file;
            tailer = LogTailer.open(file, "dit", Clock.systemUTC());
            tailer.keepPositionsIn(spool);
        }

        void poll() {
            polls++;
            List<StepEvent> read = tailer.poll();
            if (!read.isEmpty()) {
                for (StepEvent e : fleet.ingestSteps("node-b", read)) {
                    counted += e.intervalSteps() == null ? 1 : e.intervalSteps();
                }
            }
            if (polls == killAt) {
                tailer.close(); // killed: what it sent since its last commit is read again by the next agent
                start(log);
            } else if (polls % commitEvery == 0) {
                tailer.commit(tailer.checkpoint());
            }
        }
    }

    /** Polls in each story: one per line (36 lines) and none for the file events. */
    private static final int POLLS = 36;

    @Test
    void aKillAtAnyPointOfASwappedSymlinkCountsEveryLineOnce() throws Exception {
        assertThat(killedAtEveryPoint(this::symlinkStory)).isEmpty();
    }

    @Test
    void aKillAtAnyPointOfARotationAndARunStartedAgainCountsEveryLineOnce() throws Exception {
        assertThat(killedAtEveryPoint(this::rotationStory)).isEmpty();
    }

    /** The story played once per kill point and commit lag; the plays that did not count every line once. */
    private List<String> killedAtEveryPoint(Story story) throws Exception {
        List<String> wrong = new ArrayList<>();
        // Commits after every poll, and lagging up to a file event and beyond it (the collector slow to answer).
        for (int commitEvery : new int[] {1, 3, 8, 12}) {
            for (int killAt = 0; killAt <= POLLS; killAt++) {
                Path base = Files.createDirectories(dir.resolve(commitEvery + "-" + killAt + "-" + System.nanoTime()));
                Files.createDirectories(base.resolve("spool"));
                step = 0;
                lines = 0;
                Fleet fleet = new Fleet(new FakePredictor(), new SettableClock(Instant.parse("2026-12-06T10:30:00Z")),
                        FleetSettings.defaults(), DetectorSettings.defaults());
                Agent agent = new Agent(fleet, base.resolve("spool"), killAt, commitEvery);
                assertThat(story.play(base, agent)).isEqualTo(POLLS);
                agent.tailer.close();
                if (agent.counted != lines) {
                    wrong.add("commit every " + commitEvery + ", killed after poll " + killAt + ": " + agent.counted
                            + " steps counted for " + lines + " lines");
                }
            }
        }
        return wrong;
    }
}
