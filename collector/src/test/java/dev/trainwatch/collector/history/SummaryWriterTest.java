package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.testing.SettableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The summary writer on a stepped clock, against a real SQLite file, driven without its thread. */
class SummaryWriterTest {
    private static final Instant START = Instant.parse("2026-11-22T08:00:00Z");
    private static final double T0 = START.getEpochSecond();
    private static final Duration INTERVAL = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    private final SettableClock clock = new SettableClock(START);
    private final List<String> log = new ArrayList<>();
    private final List<RunOutcome> outcomes = new ArrayList<>();

    private SummaryWriter writer(HistoryStore store, int capacity) {
        Function<RunSummary, Optional<RunOutcome>> outcomeOf = s -> Optional.of(new RunOutcome(s.runId(), "a100-80gb",
                "dit", 1.0, s.stepSeconds(), 40L << 30, s.peakMemoryBytes(), START));
        return new SummaryWriter(store, outcomeOf, outcomes::add, INTERVAL, capacity, clock, log::add);
    }

    private static RunSummary summary(String runId, long step, long peakBytes, boolean ended) {
        double now = T0 + step / 10.0;
        return new RunSummary(runId, null, T0, now, ended, ended ? now : null, step, now, 1.0 + step / 1e6, 1.0,
                peakBytes, 40L << 30, 0.9, 8.0, List.of("node1"), List.of("GPU-1"), List.of(), null,
                null, null, null);
    }

    /** Last step and peak memory per run as stored. */
    private static Map<String, List<Long>> stored(HistoryStore store) {
        return store.runs(100).stream().collect(Collectors.toMap(StoredRun::runId, r -> {
            try {
                RunSummary s = Json.MAPPER.readValue(r.summaryJson(), RunSummary.class);
                return List.of(s.lastStep(), s.peakMemoryBytes());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }));
    }

    @Test
    void manyUpdatesBecomeOneTransactionPerIntervalAndTheNewestNumbersLand() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = writer(store, SummaryWriter.DEFAULT_CAPACITY);
            // 3 runs, an update every 10 ms for 10 s: 1,000 updates, flushIfDue polled after each.
            for (int i = 1; i <= 1_000; i++) {
                String run = "run-" + (i % 3);
                writer.changed(summary(run, i, (40L << 30) + i, false));
                clock.advance(Duration.ofMillis(10));
                writer.flushIfDue();
            }
            SummaryWriter.Stats stats = writer.stats();
            // The first change is written at once, then at most one write per 2 s: 1 + 10 s / 2 s.
            assertThat(stats.writes()).isBetween(5L, 6L);
            assertThat(stats.summariesWritten()).isLessThanOrEqualTo(3 * stats.writes());
            // Not yet due: the newest numbers wait in memory...
            assertThat(stats.pending()).isEqualTo(3);
            assertThat(writer.flushIfDue()).isFalse();
            // ...and land one interval later.
            clock.advance(INTERVAL);
            assertThat(writer.flushIfDue()).isTrue();
            assertThat(stored(store)).containsOnly(
                    Map.entry("run-2", List.of(998L, (40L << 30) + 998)),
                    Map.entry("run-0", List.of(999L, (40L << 30) + 999)),
                    Map.entry("run-1", List.of(1_000L, (40L << 30) + 1_000)));
            assertThat(writer.stats().pending()).isZero();
            assertThat(log).isEmpty();
        }
    }

    @Test
    void closeWritesWhatIsPendingWithoutWaitingForTheInterval() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = writer(store, SummaryWriter.DEFAULT_CAPACITY);
            writer.changed(summary("r", 1, 1, false));
            writer.flushIfDue();
            writer.changed(summary("r", 77, 5, false));
            assertThat(writer.flushIfDue()).isFalse();
            writer.close();
            assertThat(stored(store)).containsEntry("r", List.of(77L, 5L));
            writer.changed(summary("r", 78, 5, false));
            assertThat(writer.stats().pending()).as("ignored after close").isZero();
        }
    }

    @Test
    void anEndedRunIsWrittenAtOnceWithItsOutcomeAndNoOlderSummaryOverwritesIt() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = writer(store, SummaryWriter.DEFAULT_CAPACITY);
            writer.changed(summary("warm-up", 1, 1, false));
            writer.flushIfDue(); // the interval starts now
            writer.changed(summary("done", 500, 7, false));
            writer.ended(summary("done", 600, 9, true));
            assertThat(writer.flushIfDue()).as("an ended run does not wait for the interval").isTrue();
            assertThat(stored(store)).containsEntry("done", List.of(600L, 9L));
            assertThat(store.runs(10)).filteredOn(r -> r.runId().equals("done")).singleElement()
                    .satisfies(r -> assertThat(r.ended()).isNotNull());
            assertThat(store.outcomes()).singleElement().satisfies(o -> {
                assertThat(o.runId()).isEqualTo("done");
                assertThat(o.observedPeakBytes()).isEqualTo(9L);
            });
            assertThat(outcomes).extracting(RunOutcome::runId).containsExactly("done");

            // Ended and reopened (a requeued job) before the next write: the reopened state wins.
            writer.ended(summary("requeued", 10, 1, true));
            writer.changed(summary("requeued", 11, 2, false));
            writer.flush();
            assertThat(store.runs(10)).filteredOn(r -> r.runId().equals("requeued")).singleElement()
                    .satisfies(r -> assertThat(r.ended()).isNull());
            assertThat(stored(store)).containsEntry("requeued", List.of(11L, 2L));
        }
    }

    @Test
    void aFullDiskIsOneLogLineBoundedMemoryAndNothingLostOnceItHasRoomAgain() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = writer(store, 3);
            writer.changed(summary("a", 1, 1, false));
            writer.flush();
            store.capPagesForTests(1); // no page beyond those it has
            String big = "x".repeat(20_000); // a summary that needs new pages
            for (int round = 0; round < 5; round++) {
                writer.changed(withHost(summary("a", 10 + round, 1, false), big));
                writer.changed(withHost(summary("b", 10 + round, 1, false), big));
                writer.changed(withHost(summary("c", 10 + round, 1, false), big));
                writer.changed(summary("d", 10 + round, 1, false)); // no room: dropped
                clock.advance(INTERVAL);
                assertThat(writer.flushIfDue()).isTrue();
            }
            SummaryWriter.Stats failing = writer.stats();
            assertThat(failing.failedWrites()).isEqualTo(5);
            assertThat(failing.pending()).as("bounded by the capacity").isEqualTo(3);
            assertThat(failing.dropped()).isEqualTo(5);
            assertThat(log).as("one line when writes start failing, one when dropping starts").hasSize(2)
                    .allSatisfy(line -> assertThat(line).startsWith("trainwatch: history: ").doesNotContain("\n"))
                    .anySatisfy(line -> assertThat(line).contains("cannot write 3 run summaries").contains("full"))
                    .anySatisfy(line -> assertThat(line).contains("dropping the summary of run d"));

            store.capPagesForTests(0);
            clock.advance(INTERVAL);
            assertThat(writer.flushIfDue()).isTrue();
            assertThat(stored(store)).containsEntry("a", List.of(14L, 1L)).containsEntry("c", List.of(14L, 1L))
                    .doesNotContainKey("d");
            assertThat(log).hasSize(3);
            assertThat(log.get(2)).startsWith("trainwatch: history: writing run summaries again");
        }
    }

    @Test
    void withAZeroIntervalEveryChangeIsWrittenButAFailingDatabaseIsRetriedOnlyOnceASecond() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = new SummaryWriter(store, s -> Optional.empty(), outcomes::add, Duration.ZERO, 10,
                    clock, log::add);
            for (int step = 1; step <= 3; step++) {
                writer.changed(summary("r", step, 1, false));
                assertThat(writer.flushIfDue()).isTrue();
            }
            assertThat(writer.stats().writes()).isEqualTo(3);
            store.capPagesForTests(1); // no page beyond those it has
            writer.changed(withHost(summary("r", 4, 1, false), "x".repeat(20_000)));
            assertThat(writer.flushIfDue()).as("first attempt").isTrue();
            assertThat(writer.flushIfDue()).as("no hot loop on a full disk").isFalse();
            clock.advance(Duration.ofMillis(999));
            assertThat(writer.flushIfDue()).isFalse();
            clock.advance(Duration.ofMillis(1));
            assertThat(writer.flushIfDue()).isTrue();
            assertThat(writer.stats().failedWrites()).isEqualTo(2);
            assertThat(log).singleElement().satisfies(line -> assertThat(line).contains("retrying every 1000 ms"));
        }
    }

    @Test
    void aWallClockSteppedBackDoesNotHoldWritesUntilItCatchesUp() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = writer(store, 10);
            writer.changed(summary("r", 1, 1, false));
            assertThat(writer.flushIfDue()).isTrue();
            clock.advance(Duration.ofHours(-1)); // NTP steps the clock back an hour
            writer.changed(summary("r", 2, 2, false));
            assertThat(writer.flushIfDue()).as("due at once, not in an hour").isTrue();
            assertThat(stored(store)).containsEntry("r", List.of(2L, 2L));
            // From the new time on, the interval paces writes again.
            writer.changed(summary("r", 3, 3, false));
            assertThat(writer.flushIfDue()).isFalse();
            clock.advance(INTERVAL);
            assertThat(writer.flushIfDue()).isTrue();
            writer.close();
        }
        assertThat(log).isEmpty();
    }

    @Test
    void itsThreadWritesAChangeAndAnEndWithoutBeingAsked() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            SummaryWriter writer = new SummaryWriter(store, s -> Optional.empty(), outcomes::add,
                    Duration.ofMillis(200), 10, java.time.Clock.systemUTC(), log::add);
            writer.start();
            try {
                writer.changed(summary("live", 5, 1, false));
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> stored(store).containsKey("live"));
                writer.changed(summary("live", 6, 2, false));
                writer.ended(summary("live", 7, 3, true));
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> store.runs(10).get(0).ended() != null);
                assertThat(stored(store)).containsEntry("live", List.of(7L, 3L));
            } finally {
                writer.close();
            }
            assertThat(log).isEmpty();
        }
    }

    @Test
    void aClosedDatabaseNeverThrowsIntoTheCaller() {
        HistoryStore store = HistoryStore.open(dir);
        SummaryWriter writer = writer(store, 10);
        store.close();
        writer.changed(summary("r", 1, 1, false));
        writer.ended(summary("s", 1, 1, true));
        writer.flush();
        writer.close();
        assertThat(log).singleElement().satisfies(line -> assertThat(line)
                .startsWith("trainwatch: history: cannot write 2 run summaries").doesNotContain("\n"));
        assertThat(outcomes).isEmpty();
    }

    private static RunSummary withHost(RunSummary s, String host) {
        return new RunSummary(s.runId(), s.spec(), s.firstSeenTs(), s.lastSeenTs(), s.ended(), s.endedAt(),
                s.lastStep(), s.lastStepTs(), s.stepSeconds(), s.predictedStepSeconds(), s.peakMemoryBytes(),
                s.predictedPeakMemoryBytes(), s.gpuUtilizationRatio(), s.samplesPerSecond(), List.of(host),
                s.gpuUuids(), s.anomalies(), s.synthetic(), null, null, null);
    }
}
