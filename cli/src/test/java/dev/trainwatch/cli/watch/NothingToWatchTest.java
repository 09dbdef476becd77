package dev.trainwatch.cli.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.view.RunView;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class NothingToWatchTest {

    private static final RunView RUN = new RunView("r", null, null, null, null, List.of(), List.of(), List.of(), 1.0,
            null, false, null, null, null, null, null, null);

    @Test
    void aWatchWithNoRunSaysSoOnceItIsNotTooEarly() {
        assertThat(NothingToWatch.notice(List.of(), 1, null)).isEmpty();
        assertThat(NothingToWatch.notice(List.of(), NothingToWatch.AFTER_SECONDS, null)).hasValueSatisfying(line ->
                assertThat(line).startsWith("trainwatch watch: nothing to watch yet: no training process on the GPUs")
                        .contains("--attach PID or --log FILE").doesNotContain("\n"));
        assertThat(NothingToWatch.notice(List.of(), 30, Path.of("/runs/train_log.log")))
                .hasValueSatisfying(line -> assertThat(line).contains("no step in /runs/train_log.log"));
    }

    @Test
    void aWatchWithARunSaysNothing() {
        assertThat(NothingToWatch.notice(List.of(RUN), 60, null)).isEmpty();
    }
}
