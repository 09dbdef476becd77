package dev.trainwatch.collector.history;

import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * A history that survives damage, checked at start before the database is used. A file that is not a database is
 * moved aside for a fresh one; one whose {@code quick_check} finds corrupt pages is moved aside too and every
 * readable row copied into the fresh one, so damage costs at most the rows on broken pages. A write-ahead file that is
 * not one is moved aside. Each is one line. Not thread-safe.
 */
final class HistorySalvage {

    private static final int WAL_MAGIC_BE = 0x377f0683;
    private static final int WAL_MAGIC_LE = 0x377f0682;
    /** Runs before their anomalies. */
    private static final List<String> TABLES = List.of("runs", "anomalies", "outcomes", "calibration_exclusions",
            "calibration_resets");
    /** Rows read at once while nothing fails; after a failure, one at a time through that stretch. */
    private static final int CHUNK = 64;
    /** Rowids probed past the last row found before giving up, when the table's largest rowid cannot be read. */
    private static final long PROBE_PAST = 10_000;

    private final Path file;
    private final Consumer<String> log;
    private final Clock clock;

    HistorySalvage(Path file, Consumer<String> log, Clock clock) {
        this.file = file;
        this.log = log;
        this.clock = clock;
    }

    void check() {
        checkWriteAhead();
        if (!Files.exists(file)) {
            return;
        }
        String damage = damage();
        if (damage == null) {
            return;
        }
        Path aside = moveAside(file);
        if (aside == null) {
            return; // cannot move it: opening it will say why
        }
        String recovered = damage.startsWith("not a database") ? "" : recover(aside);
        log.accept("history database " + file + " is damaged (" + damage + "): moved aside to " + aside.getFileName()
                + ", serving on a fresh history" + recovered);
    }

    private String damage() {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
             Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout=" + HistoryStore.BUSY_TIMEOUT_MS);
            try (ResultSet rs = st.executeQuery("PRAGMA quick_check(3)")) {
                List<String> problems = new ArrayList<>();
                while (rs.next()) {
                    problems.add(rs.getString(1));
                }
                return problems.equals(List.of("ok")) ? null : "quick_check: " + String.join("; ", problems);
            }
        } catch (SQLException e) {
            String message = String.valueOf(e.getMessage());
            if (message.contains("SQLITE_NOTADB") || message.contains("not a database")) {
                return "not a database";
            }
            if (message.contains("SQLITE_CORRUPT") || message.contains("malformed")) {
                return "corrupt pages";
            }
            return null; // locked, permissions, a full disk: opening it says what to do
        }
    }

    /** Copies what can be read into a fresh file at {@link #file}; what it recovered. */
    private String recover(Path damaged) {
        padToHeaderSize(damaged);
        try (Connection fresh = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath())) {
            HistoryStore.createSchema(fresh);
            try (Statement st = fresh.createStatement()) {
                st.execute("ATTACH DATABASE '" + damaged.toAbsolutePath().toString().replace("'", "''")
                        + "' AS damaged");
            }
            List<String> counts = new ArrayList<>();
            for (String table : TABLES) {
                long[] copied = copyTable(fresh, table);
                counts.add(copied[0] + " " + table.replace('_', ' ') + (copied[1] > 0 ? " (" + copied[1]
                        + " unreadable)" : ""));
            }
            return "; recovered " + String.join(", ", counts);
        } catch (SQLException e) {
            return "; nothing could be read from it (" + (String.valueOf(e.getMessage()).contains("SQLITE_CORRUPT")
                    ? "its tables' catalogue is damaged" : Errors.oneLine(e))
                    + ")";
        }
    }

    /** Pads a truncated file with zeros to its header's size, so SQLite reads the pages there instead of none. */
    private static void padToHeaderSize(Path damaged) {
        try (RandomAccessFile raf = new RandomAccessFile(damaged.toFile(), "rw")) {
            if (raf.length() < 100) {
                return;
            }
            raf.seek(16);
            int pageSize = raf.readUnsignedShort();
            raf.seek(28);
            long pages = raf.readInt() & 0xffffffffL;
            long bytes = (pageSize == 1 ? 65_536L : pageSize) * pages;
            if (bytes > raf.length() && bytes < (1L << 40)) {
                raf.setLength(bytes);
            }
        } catch (IOException e) {
            // recovery then reads the file as it is
        }
    }

    /** Copies a table row by readable row: {rows copied, rows that could not be read}. */
    private static long[] copyTable(Connection c, String table) {
        long copied = 0;
        long unreadable = 0;
        if (!tableExists(c, table)) {
            return new long[] {0, 0}; // an older schema, or a catalogue that cannot be read
        }
        long max = maxRowid(c, table);
        long emptyStretch = 0;
        for (long from = 1; from <= max && emptyStretch < PROBE_PAST; from += CHUNK) {
            long to = from + CHUNK - 1;
            int n = copy(c, table, from, to);
            int found = Math.max(n, 0);
            if (n < 0) {
                for (long rowid = from; rowid <= to; rowid++) {
                    int one = copy(c, table, rowid, rowid);
                    if (one < 0) {
                        unreadable++;
                    } else {
                        found += one;
                    }
                }
            }
            copied += found;
            // Without the largest rowid, a long stretch without a row is the end of the table.
            emptyStretch = found == 0 && max == Long.MAX_VALUE ? emptyStretch + CHUNK : 0;
        }
        return new long[] {copied, max == Long.MAX_VALUE ? 0 : unreadable};
    }

    private static boolean tableExists(Connection c, String table) {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT 1 FROM damaged.sqlite_master WHERE type = 'table' AND name = ?")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        } catch (SQLException e) {
            return false;
        }
    }

    private static long maxRowid(Connection c, String table) {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT max(rowid) FROM damaged." + table)) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (SQLException e) {
            return Long.MAX_VALUE; // the table's last page is damaged: probe until rows stop coming
        }
    }

    /** Copies the rows with rowids {@code from..to}; -1 when they cannot be read. */
    private static int copy(Connection c, String table, long from, long to) {
        try (PreparedStatement ps = c.prepareStatement("INSERT OR IGNORE INTO main." + table
                + " SELECT * FROM damaged." + table + " WHERE rowid BETWEEN ? AND ?")) {
            ps.setLong(1, from);
            ps.setLong(2, to);
            return ps.executeUpdate();
        } catch (SQLException e) {
            return -1;
        }
    }

    private void checkWriteAhead() {
        Path wal = file.resolveSibling(file.getFileName() + "-wal");
        Path shm = file.resolveSibling(file.getFileName() + "-shm");
        if (!Files.exists(wal)) {
            if (Files.exists(file) && Files.exists(shm)) {
                log.accept("history database " + file + ": its write-ahead file " + wal.getFileName() + " is missing"
                        + " (deleted while the collector was down?): the history written since the last checkpoint"
                        + " is lost; the rest is served");
            }
            return;
        }
        if (walHeaderValid(wal)) {
            return;
        }
        Path aside = moveAside(wal);
        if (aside != null) {
            log.accept("history database " + file + ": its write-ahead file is not one (damaged): moved aside to "
                    + aside.getFileName() + "; the history written since the last checkpoint is lost, the rest is"
                    + " served");
        }
    }

    private static boolean walHeaderValid(Path wal) {
        try (InputStream in = Files.newInputStream(wal)) {
            byte[] header = in.readNBytes(4);
            if (header.length == 0) {
                return true; // an empty write-ahead file holds nothing
            }
            if (header.length < 4) {
                return false;
            }
            int magic = ByteBuffer.wrap(header).getInt();
            return magic == WAL_MAGIC_BE || magic == WAL_MAGIC_LE;
        } catch (IOException e) {
            return true; // unreadable: SQLite's own open says why
        }
    }

    /** Renames {@code path} to {@code path.damaged-TIME}; null (with a line) when it cannot. */
    private Path moveAside(Path path) {
        String stamp = LocalDateTime.now(clock.withZone(ZoneOffset.UTC))
                .format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss", Locale.ROOT));
        Path aside = path.resolveSibling(path.getFileName() + ".damaged-" + stamp);
        try {
            Files.move(path, aside, StandardCopyOption.ATOMIC_MOVE);
            if (path.equals(file)) {
                // Its write-ahead and shared-memory files belong to it, not to the fresh history.
                for (String suffix : List.of("-wal", "-shm")) {
                    Path sibling = path.resolveSibling(path.getFileName() + suffix);
                    if (Files.exists(sibling)) {
                        Files.move(sibling, aside.resolveSibling(aside.getFileName() + suffix),
                                StandardCopyOption.ATOMIC_MOVE);
                    }
                }
            }
            return aside;
        } catch (IOException e) {
            log.accept("history database " + path + " is damaged and cannot be moved aside (" + e.getMessage()
                    + "): move or delete it, then start the collector again");
            return null;
        }
    }
}
