package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryStoreTest {
    private static final Instant T0 = Instant.parse("2026-11-22T08:00:00Z");

    @TempDir
    Path dir;

    @Test
    void runsAnomaliesAndOutcomesSurviveReopening() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            store.saveRun("r1", "{\"model\":\"dit-xl-2\"}", "{\"step_seconds\":1.0}", T0);
            store.saveRun("r1", null, null, T0.plusSeconds(5)); // keeps the spec
            store.anomalyRaised(new StoredAnomaly("r1", "stalled", "critical", T0.plusSeconds(20), null,
                    "no step for 10 min", "look at the log", "{\"seconds\":600}"));
            store.anomalyRaised(new StoredAnomaly("r1", "stalled", "critical", T0.plusSeconds(25), null,
                    "duplicate raise", null, null)); // same episode: ignored
            store.anomalyRaised(new StoredAnomaly("r1", "oom_risk", "warning", T0.plusSeconds(30), null,
                    "headroom 1 GB", null, null));
            store.anomalyResolved("r1", "oom_risk", T0.plusSeconds(40));
            // The summary, the end and the outcome, as the summary writer stores an ended run: one transaction.
            store.writeSummaries(java.util.List.of(new HistoryStore.SummaryWrite("r1", "{\"median_step_seconds\":1.4}",
                            T0.plusSeconds(99), T0.plusSeconds(50), T0.plusSeconds(50))),
                    java.util.List.of(new RunOutcome("r1", "a100-80gb", "dit", 1.0, 1.4, 40L, 44L, T0.plusSeconds(50))));
        }
        try (HistoryStore store = HistoryStore.open(dir)) {
            StoredRun run = store.runs(10).get(0);
            assertThat(run.specJson()).isEqualTo("{\"model\":\"dit-xl-2\"}");
            assertThat(run.summaryJson()).contains("1.4");
            assertThat(run.firstSeen()).isEqualTo(T0);
            assertThat(run.ended()).isEqualTo(T0.plusSeconds(50));
            assertThat(store.anomalies("r1", 10)).extracting(StoredAnomaly::kind, StoredAnomaly::resolved)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("oom_risk", T0.plusSeconds(40)),
                            org.assertj.core.groups.Tuple.tuple("stalled", null));
            assertThat(store.anomalies(null, 10).get(1).message()).isEqualTo("no step for 10 min");
            assertThat(store.outcomes()).singleElement().extracting(RunOutcome::observedStepSeconds).isEqualTo(1.4);
        }
    }

    @Test
    void anUnusableDataDirectoryIsAOneLineError() throws Exception {
        Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
        assertThatThrownBy(() -> HistoryStore.open(file))
                .isInstanceOf(HistoryException.class)
                .hasMessage("cannot create data directory " + file + ": " + file + " exists and is not a directory");
    }

    @Test
    void aDirectoryTheFileSystemRefusesIsAClearOneLineError() {
        // Linux's /proc takes no new directories: mkdir fails with ENOENT although every parent exists.
        Path inProc = Path.of("/proc/self/trainwatch-data");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "no /proc");
        assertThatThrownBy(() -> HistoryStore.open(inProc))
                .isInstanceOf(HistoryException.class)
                .hasMessage("cannot create data directory " + inProc + ": the file system does not allow a directory"
                        + " at " + inProc + "; pass another --data-dir");
    }

    @Test
    void theDatabaseUsesWriteAheadLogging() throws Exception {
        try (HistoryStore store = HistoryStore.open(dir);
             Connection other = DriverManager.getConnection("jdbc:sqlite:" + store.file());
             ResultSet mode = other.createStatement().executeQuery("PRAGMA journal_mode")) {
            assertThat(mode.getString(1)).isEqualToIgnoringCase("wal");
        }
    }

    @Test
    void aReadOnlyDataDirectoryIsAOneLineErrorThatSaysSo() throws Exception {
        Path readOnly = Files.createDirectory(dir.resolve("read-only"));
        Files.setPosixFilePermissions(readOnly, java.nio.file.attribute.PosixFilePermissions.fromString("r-xr-xr-x"));
        // root may write anywhere: the check is only meaningful for an ordinary user.
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isWritable(readOnly), "running as root");
        assertThatThrownBy(() -> HistoryStore.open(readOnly))
                .isInstanceOf(HistoryException.class)
                .hasMessage("data directory " + readOnly + " is not writable: give the collector's user write access"
                        + " or pass another --data-dir");
    }

    @Test
    void aDatabaseThatCannotBeOpenedIsAOneLineError() throws Exception {
        Files.createDirectories(dir.resolve("trainwatch.db")); // a directory where the file should be
        assertThatThrownBy(() -> HistoryStore.open(dir))
                .isInstanceOf(HistoryException.class)
                .hasMessageStartingWith("cannot open history database " + dir.resolve("trainwatch.db"))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
}
