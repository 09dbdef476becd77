package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory on a file system that is full: a real one, a 1 MiB tmpfs filled to the last byte (the test
 * needs root and the right to mount, as CI has; it is skipped elsewhere). Before, the collector said only
 * {@code SQLITE_IOERR_SHMSIZE}.
 */
class FullDataDirectoryIT {

    @TempDir
    Path dir;
    Path mount;
    boolean mounted;

    static int run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }

    @BeforeEach
    void mountASmallFileSystem() throws Exception {
        mount = dir.resolve("small");
        Files.createDirectories(mount);
        mounted = run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString()) == 0;
        assumeTrue(mounted, "cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)");
    }

    void fill() throws IOException {
        Path filler = mount.resolve("filler");
        try (OutputStream out = Files.newOutputStream(filler)) {
            byte[] block = new byte[4096];
            while (true) {
                out.write(block);
            }
        } catch (IOException full) {
            // No space left on device: full.
        }
    }

    @AfterEach
    void unmount() throws Exception {
        if (mounted) {
            run("umount", "-l", mount.toString());
        }
    }

    @Test
    void aFullDataDirectoryIsOneLineSayingSo() throws IOException {
        Path data = mount;
        fill();
        assertThatThrownBy(() -> HistoryStore.open(data).close())
                .isInstanceOf(HistoryException.class)
                .hasMessageStartingWith("data directory " + data + " is full")
                .hasMessageNotContaining("SQLITE_")
                .hasMessageNotContaining("\n");
    }

    @Test
    void anExistingDatabaseOnADirectoryThatFilledUpIsOneLineSayingSo() throws IOException {
        Path data = mount;
        HistoryStore.open(data).close();
        fill();
        assertThatThrownBy(() -> HistoryStore.open(data).close())
                .isInstanceOf(HistoryException.class)
                .hasMessageStartingWith("data directory " + data + " is full")
                .hasMessageNotContaining("SQLITE_")
                .hasMessageNotContaining("\n");
    }
}
