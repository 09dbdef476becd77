package dev.trainwatch.collector.history;

import dev.trainwatch.protocol.testing.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import java.io.RandomAccessFile;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged history never takes the collector down: a garbage, zeroed or truncated {@code trainwatch.db} is moved
 * aside with one line and a fresh history serves; a corrupt page costs only the rows on it, and runs written after it
 * are restored too; a garbage write-ahead file is set aside with one line.
 */
@Timeout(120)
class DamagedHistoryTest {

    @TempDir
    Path dir;

    private LogCapture log;

    @BeforeEach
    void listen() {
        log = LogCapture.of("dev.trainwatch.collector.history");
    }

    @AfterEach
    void stopListening() {
        log.close();
    }

    private Path db() {
        return dir.resolve("trainwatch.db");
    }

    @Test
    void aGarbageOrZeroedFileIsMovedAsideAndAFreshHistoryServes() throws Exception {
        byte[] garbage = new byte[20_000];
        new Random(43).nextBytes(garbage);
        for (byte[] content : List.of(garbage, new byte[16_384])) {
            log.clear();
            Files.write(db(), content);
            try (HistoryStore store = HistoryStore.openForCollector(dir)) {
                store.saveRun("after", null, null, Instant.parse("2026-01-01T00:00:00Z"));
                assertThat(store.runs(10)).extracting(StoredRun::runId).containsExactly("after");
            }
            assertThat(log.messages()).singleElement().asString().contains("is damaged", "moved aside", "fresh history");
            deleteAside();
            Files.delete(db());
        }
    }

    @Test
    void aCollectorWhoseHistoryFileIsGarbageServes() throws Exception {
        Files.writeString(db(), "garbage, not SQLite ".repeat(500));
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dir);
        try (CollectorStack stack = CollectorStack.start(config, line -> { })) {
            HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    stack.server().clientUri().resolve("healthz")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(stack.history()).isPresent();
        }
        assertThat(log.messages()).anySatisfy(line -> assertThat(line).contains("is damaged", "fresh history"));
    }

    @Test
    void aReaderBesideTheCollectorNeverMovesADamagedFileAside() throws Exception {
        Files.write(db(), "not a database at all, just some bytes".repeat(200).getBytes(StandardCharsets.UTF_8));
        byte[] before = Files.readAllBytes(db());
        assertThatThrownBy(() -> HistoryStore.open(dir)).isInstanceOf(HistoryException.class)
                .hasMessageContaining("trainwatch.db").hasMessageNotContaining("\n");
        assertThat(Files.readAllBytes(db())).as("the file a reader found damaged stays where it was").isEqualTo(before);
        assertThat(log.messages()).isEmpty();
    }

    @Test
    void aTruncatedFileIsMovedAsideKeepingWhatCanBeRead() throws Exception {
        writeRuns(300);
        try (RandomAccessFile file = new RandomAccessFile(db().toFile(), "rw")) {
            file.setLength(file.length() / 2);
        }
        try (HistoryStore store = HistoryStore.openForCollector(dir)) {
            assertThat(store.runs(1000)).isNotEmpty().hasSizeLessThan(300);
        }
        assertThat(log.messages()).singleElement().asString().contains("is damaged", "recovered");
    }

    @Test
    void aCorruptPageCostsOnlyItsRowsAndLaterRunsAreRestoredToo() throws Exception {
        writeRuns(300);
        corruptPageHolding("marker-run-150-");
        try (HistoryStore store = HistoryStore.openForCollector(dir)) {
            List<String> ids = store.runs(1000).stream().map(StoredRun::runId).toList();
            assertThat(ids).hasSizeBetween(250, 299).doesNotContain("run-150").contains("run-1", "run-300");
            store.saveRun("written-after", "{}", null, Instant.parse("2026-02-01T00:00:00Z"));
        }
        assertThat(log.messages()).singleElement().asString().contains("is damaged", "recovered");
        try (HistoryStore store = HistoryStore.openForCollector(dir)) {
            assertThat(store.runs(1000)).extracting(StoredRun::runId).contains("written-after", "run-300");
        }
        assertThat(log.messages()).hasSize(1);
    }

    @Test
    void aGarbageWriteAheadFileIsSetAsideInOneLine() throws Exception {
        writeRuns(5);
        Files.writeString(dir.resolve("trainwatch.db-wal"), "this is not a write-ahead log at all");
        try (HistoryStore store = HistoryStore.openForCollector(dir)) {
            assertThat(store.runs(10)).hasSize(5);
        }
        assertThat(log.messages()).singleElement().asString().contains("write-ahead file", "lost");
    }

    @Test
    void noWritableTemporaryDirectoryIsSaidInOneLineWithWhatToDo() {
        Path missing = dir.resolve("no-such-tmp"); // not writable, even for root
        assertThat(HistoryStore.openFailure(db(), new SQLException("Error opening connection"), missing))
                .contains("temporary directory " + missing, "not writable", "-Dorg.sqlite.tmpdir=")
                .doesNotContain("\n");
        assertThat(HistoryStore.openFailure(db(), new SQLException("Error opening connection"), dir))
                .contains("Error opening connection");
    }

    private void writeRuns(int n) {
        try (HistoryStore store = HistoryStore.openForCollector(dir)) {
            for (int i = 1; i <= n; i++) {
                String spec = "{\"model\":\"marker-run-" + i + "-" + "x".repeat(300) + "\"}";
                store.saveRun("run-" + i, spec, null, Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i));
            }
        }
        assertThat(log.messages()).isEmpty();
    }

    /** Overwrites the page of the database file that holds {@code marker} (a runs table leaf) with garbage. */
    private void corruptPageHolding(String marker) throws Exception {
        byte[] content = Files.readAllBytes(db());
        byte[] needle = marker.getBytes(StandardCharsets.UTF_8);
        int at = indexOf(content, needle);
        assertThat(at).as("marker in the file").isPositive();
        int page = 4096;
        int start = at / page * page;
        assertThat(start).as("not the first page").isPositive();
        Arrays.fill(content, start, Math.min(content.length, start + page), (byte) 0x55);
        Files.write(db(), content);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private void deleteAside() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(p -> p.getFileName().toString().contains(".damaged-")).toList()) {
                Files.delete(p);
            }
        }
    }
}
