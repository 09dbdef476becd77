package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TempDirsTest {

    @TempDir
    Path tmp;

    @Test
    void removesTheWholeTreeButNotWhatALinkInItPointsAt() throws Exception {
        Path work = Files.createDirectories(tmp.resolve("work/spool/nested"));
        Files.writeString(work.resolve("batch.json"), "{}");
        Files.writeString(tmp.resolve("work/output.log"), "step 1\n");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("keep.txt"), "keep");
        Files.createSymbolicLink(tmp.resolve("work/link"), outside);

        TempDirs.deleteQuietly(tmp.resolve("work"));

        assertThat(tmp.resolve("work")).doesNotExist();
        assertThat(outside.resolve("keep.txt")).hasContent("keep");
    }

    @Test
    void aMissingDirectoryIsNoError() {
        TempDirs.deleteQuietly(tmp.resolve("never-made"));
        assertThat(tmp.resolve("never-made")).doesNotExist();
    }
}
