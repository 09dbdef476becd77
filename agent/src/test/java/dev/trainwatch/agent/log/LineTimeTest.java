package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A step's time is when the agent read it; the log's own time stamps give only the intervals between its lines.
 * The lines are the DiT fixture's (a log written in UTC, as a container writes it), read as the agent on a machine
 * in {@code Asia/Shanghai} reads them.
 */
class LineTimeTest {

    private static final ZoneId SHANGHAI = ZoneId.of("Asia/Shanghai");
    /** The agent's clock: the day after the log was written. */
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path dir;

    private static List<String> ditLines() throws IOException {
        return new String(Fixtures.bytes("dit.log"), java.nio.charset.StandardCharsets.UTF_8).lines()
                .filter(l -> l.contains("(step=")).toList();
    }

    private LogTailer tailer(Path log, Clock clock, LogTailer.LineTime time) {
        return new LogTailer(log, StepLineParsers.forFormat("dit"), clock, SHANGHAI, Long.MAX_VALUE,
                LogTailer.DEFAULT_MAX_LINE_BYTES, time);
    }

    @Test
    void aLiveLineIsStampedWhenItWasReadWhateverZoneTheLogWasWrittenIn() throws IOException {
        List<String> lines = ditLines();
        assertThat(lines.size()).isGreaterThan(3);
        Path log = dir.resolve("log.txt");
        Files.writeString(log, lines.get(0) + "\n");
        Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
        try (LogTailer t = tailer(log, clock, LogTailer.LineTime.READ)) {
            t.poll();
            Files.writeString(log, lines.get(1) + "\n", StandardOpenOption.APPEND);
            List<StepEvent> live = t.poll();
            assertThat(live).isNotEmpty();
            // Read as local (Shanghai) time, the UTC stamps were 8 hours in the past: "stalled, 480 min ago".
            assertThat(live.get(live.size() - 1).ts()).isEqualTo(NOW.getEpochSecond());
        }
        try (LogTailer replay = tailer(log, clock, LogTailer.LineTime.LOG)) {
            // Replaying with the log's own times keeps them (read in the machine's zone, as the user asked).
            assertThat(replay.poll().get(0).ts()).isLessThan(NOW.getEpochSecond() - 86_400);
        }
    }

    @Test
    void linesReadTogetherKeepTheirIntervalsEndingAtTheReadTime() throws IOException {
        List<String> lines = ditLines();
        Path log = dir.resolve("log.txt");
        Files.writeString(log, String.join("\n", lines) + "\n");
        // Modified "in the future" (a file system whose clock is ahead): no effect.
        Files.setLastModifiedTime(log, FileTime.from(Instant.now().plusSeconds(3600)));
        Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
        List<StepEvent> asLogged;
        try (LogTailer t = tailer(log, clock, LogTailer.LineTime.LOG)) {
            asLogged = t.poll();
        }
        try (LogTailer t = tailer(log, clock, LogTailer.LineTime.READ)) {
            List<StepEvent> read = t.poll();
            assertThat(read).hasSameSizeAs(asLogged).hasSizeGreaterThan(2);
            StepEvent last = read.get(read.size() - 1);
            assertThat(last.ts()).isEqualTo(NOW.getEpochSecond());
            for (int i = 0; i < read.size(); i++) {
                double loggedGap = asLogged.get(asLogged.size() - 1).ts() - asLogged.get(i).ts();
                assertThat(last.ts() - read.get(i).ts()).isCloseTo(loggedGap, within(1e-6));
                assertThat(read.get(i).timeS()).isEqualTo(asLogged.get(i).timeS());
            }
        }
    }

    @Test
    void aLogThatStoppedLongAgoIsNotTakenForALiveOne() throws IOException {
        List<String> lines = ditLines();
        Path log = dir.resolve("log.txt");
        Files.writeString(log, String.join("\n", lines) + "\n");
        // Last written ten minutes ago by the wall clock (the file system's); the agent's clock is another one.
        Files.setLastModifiedTime(log, FileTime.from(Instant.now().minusSeconds(600)));
        try (LogTailer t = tailer(log, Clock.fixed(NOW, ZoneOffset.UTC), LogTailer.LineTime.READ)) {
            List<StepEvent> read = t.poll();
            // First read of the file: its newest line is as old as the file's last change, not "just now".
            assertThat(read.get(read.size() - 1).ts()).isCloseTo(NOW.getEpochSecond() - 600.0, within(5.0));
        }
    }
}
