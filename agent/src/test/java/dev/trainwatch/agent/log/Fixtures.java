package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/** Runs captured logs through the production reader ({@link LogTailer}), as the agent would. */
final class Fixtures {

    /** The read time every test clock reports: well after the fixtures' own timestamps. */
    static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private Fixtures() {
    }

    static byte[] bytes(String name) {
        try (InputStream in = Fixtures.class.getResourceAsStream("/logs/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing fixture " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies the fixture into {@code dir} and reads all of it with {@code format}. */
    static List<StepEvent> read(Path dir, String name, String format) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, bytes(name));
        return readFile(file, format);
    }

    /** Reads all of {@code file} with {@code format}, in two polls two seconds apart. */
    static List<StepEvent> readFile(Path file, String format) throws IOException {
        // The second poll comes two seconds later, as the agent's would: a progress bar's newest step is sent once
        // its bar has not moved on for a second (its last frame carries its loss).
        SettableClock clock = new SettableClock(NOW);
        try (LogTailer tailer = new LogTailer(file, StepLineParsers.forFormat(format), clock, Long.MAX_VALUE,
                LogTailer.DEFAULT_MAX_LINE_BYTES)) {
            List<StepEvent> all = new ArrayList<>(tailer.poll());
            clock.set(NOW.plusSeconds(2));
            all.addAll(tailer.poll());
            return all;
        }
    }

    static StepEvent at(List<StepEvent> events, long step) {
        return events.stream().filter(e -> e.step() == step).findFirst()
                .orElseThrow(() -> new AssertionError("no event for step " + step + " in " + events));
    }

    static double unix(String isoUtc) {
        return Instant.parse(isoUtc).toEpochMilli() / 1000.0;
    }

}
