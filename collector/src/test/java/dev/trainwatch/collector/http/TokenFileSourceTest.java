package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.ingest.ApiError;
import dev.trainwatch.protocol.testing.LogCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector's token file: a rotated token is in force without a restart, a byte-order mark is not part of it,
 * a file being rewritten keeps the last good token, and a file everyone may read is one line.
 */
@Timeout(10)
class TokenFileSourceTest {

    @TempDir
    Path dir;

    private final AtomicLong nanos = new AtomicLong();

    @Test
    void aRotatedTokenIsInForceWithoutARestart() throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "old-token\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:00:00Z")));
        TokenFileSource tokens = TokenFileSource.open(file, nanos::get);
        BearerAuth auth = new BearerAuth(tokens);
        auth.check("Bearer old-token");

        Files.writeString(file, "new-token\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:01:00Z")));
        nanos.addAndGet(2_000_000_000L);
        auth.check("Bearer new-token");
        assertThatThrownBy(() -> auth.check("Bearer old-token")).isInstanceOf(ApiError.class);

        Files.writeString(file, "");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:02:00Z")));
        nanos.addAndGet(2_000_000_000L);
        assertThat(tokens.get()).as("an emptied file keeps the last good token").isEqualTo("new-token");
    }

    @Test
    void aByteOrderMarkIsNotPartOfTheToken() throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "\uFEFFs3cret\r\n");
        assertThat(TokenFileSource.read(file)).isEqualTo("s3cret");
    }

    @Test
    void aTokenFileEveryoneMayReadIsOneLine() throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "s3cret");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        List<String> lines;
        try (LogCapture log = LogCapture.of(TokenFileSource.class.getName())) {
            TokenFileSource.open(file);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            TokenFileSource.open(file);
            lines = log.messages();
        }
        assertThat(lines).singleElement().asString().contains("readable by every user", "chmod 0600");
    }
}
