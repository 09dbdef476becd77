package dev.trainwatch.cli.watch;

import dev.trainwatch.collector.state.view.RunView;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** What {@code watch} says when there is no run a few seconds after it started, rather than silence. Pure. */
public final class NothingToWatch {

    public static final double AFTER_SECONDS = 5;

    private NothingToWatch() {
    }

    /** The one line to print, or empty while there is something to watch or it is too early to tell. */
    public static Optional<String> notice(List<RunView> runs, double secondsWatching, Path log) {
        if (!runs.isEmpty() || secondsWatching < AFTER_SECONDS) {
            return Optional.empty();
        }
        return Optional.of("trainwatch watch: nothing to watch yet: no training process on the GPUs (NVML lists no"
                + " compute process)" + (log != null ? " and no step in " + log : "") + "; start the training (it is"
                + " picked up when it first uses a GPU), or pass --attach PID" + (log == null ? " or --log FILE" : ""));
    }
}
