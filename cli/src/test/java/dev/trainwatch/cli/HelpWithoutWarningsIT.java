package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The help of the commands with watch and estimate options, as a user's terminal shows it. */
class HelpWithoutWarningsIT {

    @TempDir
    Path dir;

    /** picocli prints its format warnings on the process's own stderr, so the help is read from a real process. */
    @Test
    void helpPrintsNoFormatWarnings() throws Exception {
        for (String command : List.of("estimate", "watch", "run")) {
            TrainwatchProcess p = TrainwatchProcess.start(dir, Map.of(), command, "--help");
            assertThat(p.waitFor(Duration.ofSeconds(60))).as(command).isZero();
            assertThat(p.stderr()).as(command).doesNotContain("picocli WARN").doesNotContain("Could not format");
            assertThat(p.stdout()).as(command).contains("(50%)").doesNotContain("50%%");
        }
    }

}
