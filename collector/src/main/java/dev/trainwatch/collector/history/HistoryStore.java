package dev.trainwatch.collector.history;

import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Run history in an embedded SQLite database ({@code trainwatch.db} under the data directory): run specs and
 * estimates, per-run summaries, anomaly episodes (the alert history) and finished-run outcomes for calibration.
 *
 * <p>Durability: WAL with {@code synchronous=NORMAL}; every method commits before it returns, so what it wrote
 * survives a SIGKILL (only a power loss can lose the newest transactions). Thread-safe: one connection, all methods
 * synchronized (SQLite has one writer anyway).
 */
public final class HistoryStore implements AutoCloseable {
    private static final int SCHEMA_VERSION = 2;
    private static final System.Logger LOG = System.getLogger("dev.trainwatch.collector.history");
    /** Every line the history writes is a problem, so WARNING. */
    public static final Consumer<String> WARNINGS = line -> LOG.log(System.Logger.Level.WARNING, line);
    public static final int BUSY_TIMEOUT_MS = 5_000;
    private final Connection connection;
    private final Path file;
    private DataDirLock lock;

    private HistoryStore(Connection connection, Path file) {
        this.connection = connection;
        this.file = file;
    }

    /** Opens the history for the collector that owns {@code dataDir}, holding its {@link DataDirLock} until closed. */
    public static HistoryStore openForCollector(Path dataDir) {
        prepareDirectory(dataDir);
        DataDirLock lock = DataDirLock.acquire(dataDir);
        try {
            // Only the owner may set a damaged file aside: a reader must never move a running collector's database.
            new HistorySalvage(dataDir.resolve("trainwatch.db"), WARNINGS, Clock.systemUTC()).check();
            HistoryStore store = open(dataDir);
            store.lock = lock;
            return store;
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /** Opens (creating if needed) {@code trainwatch.db} in {@code dataDir} as a reader: a damaged file is an error. */
    public static HistoryStore open(Path dataDir) {
        Path file = dataDir.resolve("trainwatch.db");
        prepareDirectory(dataDir);
        try {
            Connection connection = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
            try (Statement st = connection.createStatement()) {
                // busy_timeout first: switching to WAL itself needs the lock when another process has the file.
                st.execute("PRAGMA busy_timeout=" + BUSY_TIMEOUT_MS);
                st.execute("PRAGMA journal_mode=WAL");
                st.execute("PRAGMA synchronous=NORMAL");
                st.execute("PRAGMA foreign_keys=ON");
            }
            HistoryStore store = new HistoryStore(connection, file);
            createSchema(connection);
            return store;
        } catch (SQLException e) {
            if (diskFull(e, dataDir)) {
                throw new HistoryException("data directory " + dataDir + " is full (" + usableKib(dataDir)
                        + " KiB free): free some space there or pass another --data-dir", e);
            }
            throw new HistoryException(openFailure(file, e, sqliteTempDir()), e);
        }
    }

    private static void prepareDirectory(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
        } catch (AccessDeniedException e) {
            throw new HistoryException("cannot create data directory " + dataDir + ": permission denied on "
                    + e.getFile() + "; give the collector's user write access or pass another --data-dir", e);
        } catch (FileAlreadyExistsException e) {
            throw new HistoryException("cannot create data directory " + dataDir + ": " + e.getFile()
                    + " exists and is not a directory", e);
        } catch (NoSuchFileException e) {
            // mkdir's ENOENT once the parents exist: a file system that takes no new directories there (/proc).
            throw new HistoryException("cannot create data directory " + dataDir + ": the file system does not allow"
                    + " a directory at " + e.getFile() + "; pass another --data-dir", e);
        } catch (IOException e) {
            // A FileSystemException's message without a reason is only the path: name the kind of failure instead.
            String reason = e instanceof FileSystemException f && f.getReason() == null
                    ? e.getClass().getSimpleName() + " on " + f.getFile() : Errors.reason(e);
            throw new HistoryException("cannot create data directory " + dataDir + ": " + reason, e);
        }
        // SQLite creates its WAL files beside the database: say so rather than "unable to open database file".
        if (!Files.isWritable(dataDir)) {
            throw new HistoryException("data directory " + dataDir + " is not writable: give the collector's user"
                    + " write access or pass another --data-dir", null);
        }
    }

    /** Where SQLite's driver unpacks its native library: {@code org.sqlite.tmpdir}, else {@code java.io.tmpdir}. */
    static Path sqliteTempDir() {
        return Path.of(System.getProperty("org.sqlite.tmpdir", System.getProperty("java.io.tmpdir")));
    }

    /** "Error opening connection" without a writable temporary directory: the native library could not unpack. */
    static String openFailure(Path file, SQLException e, Path tempDir) {
        if (String.valueOf(e.getMessage()).contains("Error opening connection") && !Files.isWritable(tempDir)) {
            return "cannot open history database " + file + ": the temporary directory " + tempDir + " is not"
                    + " writable, and SQLite unpacks its native library there; make it writable or point it at one"
                    + " that is with JAVA_TOOL_OPTIONS=-Dorg.sqlite.tmpdir=DIR";
        }
        return "cannot open history database " + file + ": " + Errors.oneLine(e);
    }

    /** SQLITE_FULL, SHMSIZE (the WAL index cannot grow) or any I/O error while almost nothing is free. */
    static boolean diskFull(SQLException e, Path dir) {
        String message = String.valueOf(e.getMessage());
        if (message.contains("SQLITE_FULL") || message.contains("SHMSIZE") || message.contains("disk is full")) {
            return true;
        }
        return message.contains("SQLITE_IOERR") && usableKib(dir) < 64;
    }

    private static long usableKib(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace() / 1024;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    public Path file() {
        return file;
    }

    static void createSchema(Connection connection) throws SQLException {
        try (Statement st = connection.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
            int version = 0;
            try (ResultSet rs = st.executeQuery("SELECT MAX(version) FROM schema_version")) {
                if (rs.next()) {
                    version = rs.getInt(1);
                }
            }
            if (version > SCHEMA_VERSION) {
                throw new SQLException("database schema " + version + " is newer than this trainwatch ("
                        + SCHEMA_VERSION + ")");
            }
            if (version < 1) {
                st.execute("""
                        CREATE TABLE IF NOT EXISTS runs (
                          run_id TEXT PRIMARY KEY,
                          spec_json TEXT,
                          estimate_json TEXT,
                          summary_json TEXT,
                          first_seen_ms INTEGER NOT NULL,
                          last_seen_ms INTEGER NOT NULL,
                          ended_ms INTEGER)""");
                st.execute("""
                        CREATE TABLE IF NOT EXISTS anomalies (
                          id INTEGER PRIMARY KEY AUTOINCREMENT,
                          run_id TEXT NOT NULL,
                          kind TEXT NOT NULL,
                          severity TEXT NOT NULL,
                          since_ms INTEGER NOT NULL,
                          resolved_ms INTEGER,
                          message TEXT,
                          suggestion TEXT,
                          evidence_json TEXT)""");
                st.execute("CREATE INDEX IF NOT EXISTS anomalies_run ON anomalies(run_id, kind, resolved_ms)");
                st.execute("""
                        CREATE TABLE IF NOT EXISTS outcomes (
                          run_id TEXT PRIMARY KEY,
                          gpu_id TEXT NOT NULL,
                          family TEXT NOT NULL,
                          predicted_step_s REAL NOT NULL,
                          observed_step_s REAL NOT NULL,
                          predicted_peak_bytes INTEGER,
                          observed_peak_bytes INTEGER,
                          at_ms INTEGER NOT NULL)""");
                st.execute("INSERT INTO schema_version(version) VALUES (1)");
            }
            if (version < 2) {
                // Calibration a user steers: runs left out of it, and groups started afresh.
                st.execute("CREATE TABLE IF NOT EXISTS calibration_exclusions (run_id TEXT PRIMARY KEY, at_ms INTEGER NOT NULL)");
                st.execute("CREATE TABLE IF NOT EXISTS calibration_resets (group_key TEXT PRIMARY KEY, at_ms INTEGER NOT NULL)");
                st.execute("INSERT INTO schema_version(version) VALUES (2)");
            }
        }
    }

    public synchronized void saveRun(String runId, String specJson, String estimateJson, Instant at) {
        execute("""
                INSERT INTO runs(run_id, spec_json, estimate_json, first_seen_ms, last_seen_ms) VALUES (?,?,?,?,?)
                ON CONFLICT(run_id) DO UPDATE SET
                  spec_json = COALESCE(excluded.spec_json, runs.spec_json),
                  estimate_json = COALESCE(excluded.estimate_json, runs.estimate_json),
                  last_seen_ms = excluded.last_seen_ms""",
                runId, specJson, estimateJson, at.toEpochMilli(), at.toEpochMilli());
    }

    /** One run's summary for {@link #writeSummaries}; {@code firstSeen} counts only for a run new to the database. */
    public record SummaryWrite(String runId, String summaryJson, Instant firstSeen, Instant lastSeen, Instant ended) {
    }

    /** Writes run summaries, in order, and finished-run outcomes in one transaction: all or nothing. */
    public synchronized void writeSummaries(List<SummaryWrite> summaries, List<RunOutcome> outcomes) {
        if (summaries.isEmpty() && outcomes.isEmpty()) {
            return;
        }
        try {
            connection.setAutoCommit(false);
            try (PreparedStatement summary = connection.prepareStatement("""
                    INSERT INTO runs(run_id, summary_json, first_seen_ms, last_seen_ms, ended_ms) VALUES (?,?,?,?,?)
                    ON CONFLICT(run_id) DO UPDATE SET summary_json = excluded.summary_json,
                      last_seen_ms = MAX(runs.last_seen_ms, excluded.last_seen_ms),
                      ended_ms = excluded.ended_ms""");
                 PreparedStatement outcome = connection.prepareStatement("""
                    INSERT OR REPLACE INTO outcomes(run_id, gpu_id, family, predicted_step_s, observed_step_s,
                      predicted_peak_bytes, observed_peak_bytes, at_ms) VALUES (?,?,?,?,?,?,?,?)""")) {
                for (SummaryWrite w : summaries) {
                    bind(summary, w.runId(), w.summaryJson(), w.firstSeen().toEpochMilli(),
                            w.lastSeen().toEpochMilli(), w.ended() == null ? null : w.ended().toEpochMilli());
                    summary.executeUpdate();
                }
                for (RunOutcome o : outcomes) {
                    bind(outcome, o.runId(), o.gpuId(), o.family(), o.predictedStepSeconds(),
                            o.observedStepSeconds(), o.predictedPeakBytes(), o.observedPeakBytes(),
                            o.at().toEpochMilli());
                    outcome.executeUpdate();
                }
                connection.commit();
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly();
                throw e;
            } finally {
                restoreAutoCommit();
            }
        } catch (SQLException e) {
            throw failure("write " + summaries.size() + " run summaries", e);
        }
    }

    private static void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
    }

    /** After SQLite rolled a failed transaction back itself (disk full) this fails too; it must not hide the cause. */
    private void restoreAutoCommit() {
        try {
            connection.setAutoCommit(true);
        } catch (SQLException ignored) {
            // a closed connection fails the next call clearly
        }
    }

    private void rollbackQuietly() {
        try {
            connection.rollback();
        } catch (SQLException ignored) {
            // The connection is broken; the caller reports the original failure.
        }
    }

    /** Opens an episode, unless one of the run and kind is open. */
    public synchronized void anomalyRaised(StoredAnomaly anomaly) {
        execute("""
                INSERT INTO anomalies(run_id, kind, severity, since_ms, message, suggestion, evidence_json)
                SELECT ?,?,?,?,?,?,? WHERE NOT EXISTS
                  (SELECT 1 FROM anomalies WHERE run_id = ? AND kind = ? AND resolved_ms IS NULL)""",
                anomaly.runId(), anomaly.kind(), anomaly.severity(), anomaly.since().toEpochMilli(),
                anomaly.message(), anomaly.suggestion(), anomaly.evidenceJson(), anomaly.runId(), anomaly.kind());
    }

    public synchronized void anomalyResolved(String runId, String kind, Instant at) {
        execute("UPDATE anomalies SET resolved_ms = ? WHERE run_id = ? AND kind = ? AND resolved_ms IS NULL",
                at.toEpochMilli(), runId, kind);
    }

    /** Caps the database at {@code pages} pages, never below its size ({@code 0} lifts it), to test a full disk. */
    synchronized void capPagesForTests(long pages) {
        try (Statement st = connection.createStatement()) {
            st.execute("PRAGMA max_page_count=" + (pages > 0 ? pages : 1_073_741_823L));
        } catch (SQLException e) {
            throw failure("cap the page count", e);
        }
    }

    public synchronized List<StoredRun> runs(int limit) {
        return query("read runs", """
                SELECT run_id, spec_json, estimate_json, summary_json, first_seen_ms, last_seen_ms, ended_ms
                FROM runs ORDER BY last_seen_ms DESC LIMIT ?""",
                rs -> new StoredRun(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
                        Instant.ofEpochMilli(rs.getLong(5)), Instant.ofEpochMilli(rs.getLong(6)), instantOrNull(rs, 7)),
                limit);
    }

    /** Anomaly episodes, newest first; {@code runId} null for all runs. */
    public synchronized List<StoredAnomaly> anomalies(String runId, int limit) {
        String sql = "SELECT run_id, kind, severity, since_ms, resolved_ms, message, suggestion, evidence_json"
                + " FROM anomalies" + (runId == null ? "" : " WHERE run_id = ?") + " ORDER BY since_ms DESC, id DESC LIMIT ?";
        return query("read anomalies", sql, rs -> new StoredAnomaly(rs.getString(1), rs.getString(2), rs.getString(3),
                        Instant.ofEpochMilli(rs.getLong(4)), instantOrNull(rs, 5), rs.getString(6), rs.getString(7),
                        rs.getString(8)),
                runId == null ? new Object[] {limit} : new Object[] {runId, limit});
    }

    /** Leaves a run out of calibration or counts it again; unknown run ids are kept as given. */
    public synchronized void excludeFromCalibration(String runId, boolean exclude, Instant at) {
        if (exclude) {
            execute("INSERT OR REPLACE INTO calibration_exclusions(run_id, at_ms) VALUES (?,?)", runId, at.toEpochMilli());
        } else {
            execute("DELETE FROM calibration_exclusions WHERE run_id = ?", runId);
        }
    }

    public synchronized Set<String> calibrationExclusions() {
        return new HashSet<>(query("read calibration exclusions", "SELECT run_id FROM calibration_exclusions",
                rs -> rs.getString(1)));
    }

    /** Starts a calibration group afresh: outcomes recorded until {@code at} no longer count. */
    public synchronized void resetCalibration(String groupKey, Instant at) {
        execute("INSERT OR REPLACE INTO calibration_resets(group_key, at_ms) VALUES (?,?)", groupKey, at.toEpochMilli());
    }

    public synchronized Map<String, Instant> calibrationResets() {
        return query("read calibration resets", "SELECT group_key, at_ms FROM calibration_resets",
                rs -> Map.entry(rs.getString(1), Instant.ofEpochMilli(rs.getLong(2))))
                .stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    public synchronized List<RunOutcome> outcomes() {
        return query("read outcomes", """
                SELECT run_id, gpu_id, family, predicted_step_s, observed_step_s, predicted_peak_bytes,
                  observed_peak_bytes, at_ms FROM outcomes ORDER BY at_ms""",
                rs -> new RunOutcome(rs.getString(1), rs.getString(2), rs.getString(3), rs.getDouble(4),
                        rs.getDouble(5), longOrNull(rs, 6), longOrNull(rs, 7), Instant.ofEpochMilli(rs.getLong(8))));
    }

    @Override
    public synchronized void close() {
        try {
            connection.close();
        } catch (SQLException e) {
            // closing a connection whose file vanished: nothing left to save
        } finally {
            if (lock != null) {
                lock.close();
                lock = null;
            }
        }
    }

    @FunctionalInterface
    private interface Row<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> List<T> query(String what, String sql, Row<T> row, Object... args) {
        List<T> out = new ArrayList<>();
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(row.read(rs));
                }
            }
        } catch (SQLException e) {
            throw failure(what, e);
        }
        return out;
    }

    private void execute(String sql, Object... args) {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            bind(ps, args);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw failure("write", e);
        }
    }

    private HistoryException failure(String what, SQLException e) {
        return new HistoryException("history database " + file + ": cannot " + what + ": " + Errors.oneLine(e), e);
    }

    private static Instant instantOrNull(ResultSet rs, int column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : Instant.ofEpochMilli(value);
    }

    private static Long longOrNull(ResultSet rs, int column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : value;
    }
}
