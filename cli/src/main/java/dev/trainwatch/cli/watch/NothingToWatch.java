package dev.trainwatch.cli.watch;

import dev.trainwatch.collector.state.RunView;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** What {@code watch} says when no run shows a few seconds after it started (no GPU process, no step). Pure. */
public final class NothingToWatch {

    /** How long after the start a watch with no run says so. */
    public static final double AFTER_SECONDS = 5;

    private NothingToWatch() {
    }

    /**
     * The one line to print, once, or empty while there is something to watch or it is too early to tell.
     *
     * @param runs             the runs the collector holds now
     * @param secondsWatching  since the watch started
     * @param log              the log given with {@code --log}, or null
     */
    public static Optional<String> notice(List<RunView> runs, double secondsWatching, Path log) {
        if (!runs.isEmpty() || secondsWatching < AFTER_SECONDS) {
            return Optional.empty();
        }
        return Optional.of("trainwatch watch: nothing to watch yet: no training process on the GPUs (NVML lists no"
                + " compute process)" + (log != null ? " and no step in " + log : "") + "; start the training (it is"
                + " picked up when it first uses a GPU), or pass --attach PID" + (log == null ? " or --log FILE" : ""));
    }
}
