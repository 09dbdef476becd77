package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 44: two collectors on one data directory adopted each other's runs; the second now refuses, in one line. */
class DataDirLockTest {

    @TempDir
    Path dir;

    @Test
    void aSecondCollectorOnTheSameDataDirectoryRefusesInOneLine() {
        try (HistoryStore first = HistoryStore.openForCollector(dir)) {
            assertThatThrownBy(() -> HistoryStore.openForCollector(dir))
                    .isInstanceOf(HistoryException.class)
                    .hasMessageStartingWith("data directory " + dir + " is in use by another collector (pid "
                            + ProcessHandle.current().pid() + ")")
                    .hasMessageEndingWith("stop that one, or give this one another --data-dir")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
            // A reader (estimate --data-dir) still opens it.
            try (HistoryStore reader = HistoryStore.open(dir)) {
                assertThat(reader.file()).isEqualTo(first.file());
            }
        }
        // Closed: the next collector takes it.
        try (HistoryStore next = HistoryStore.openForCollector(dir)) {
            assertThat(next.file()).exists();
        }
    }
}
