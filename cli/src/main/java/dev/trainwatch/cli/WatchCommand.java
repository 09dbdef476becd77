package dev.trainwatch.cli;

import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.MonotonicClock;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.cli.watch.LocalStack;
import dev.trainwatch.cli.watch.NothingToWatch;
import dev.trainwatch.cli.watch.StatusLines;
import dev.trainwatch.cli.watch.TerminalStatus;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code trainwatch watch}: the agent and the collector in one process on this machine, with the page and
 * {@code /metrics}; on a terminal a live status line per run. Ends when the attached run ends, or on Ctrl-C.
 */
@Command(name = "watch", mixinStandardHelpOptions = true,
        description = "Watches training on this machine: reads the GPUs through NVML and the run's log, compares them "
                + "with the estimate, and serves the page and /metrics. Needs NVML (exit status 3 without it; try "
                + "'trainwatch demo' on a machine without an NVIDIA GPU).",
        sortOptions = false)
final class WatchCommand implements Callable<Integer> {

    /** How often the status lines are redrawn, milliseconds. */
    private static final long STATUS_EVERY_MILLIS = 1000;

    @Spec
    CommandSpec spec;

    @picocli.CommandLine.ParentCommand
    TrainwatchCommand parent;

    @Option(names = "--attach", paramLabel = "PID", converter = PidConverter.class,
            description = "Watch this process and its descendants (default: every compute process on the GPUs).")
    Long attachPid;

    @Option(names = "--log", paramLabel = "FILE", description = "The run's log to parse for steps (e.g. train_log.log).")
    Path log;

    /** When the command was made (just before it starts watching), and whether "nothing to watch" was said. */
    private final long created = System.nanoTime();
    private final AtomicBoolean toldNothing = new AtomicBoolean();

    @Mixin
    WatchOptions watch;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        LogFormats.check(watch.logFormat);
        if (attachPid != null && ProcessHandle.of(attachPid).isEmpty()) {
            throw new UserError(ExitCodes.USAGE, "--attach: no process " + attachPid + " is running");
        }
        RunSpec runSpec = watch.runSpec();
        Path work = Files.createTempDirectory("trainwatch-watch-");
        boolean terminal = System.console() != null;
        TerminalStatus status = new TerminalStatus(out);
        // Alert lines (raised, resolved) go above the live status block on a terminal, else one per line.
        Consumer<String> alertLog = line -> {
            if (terminal) {
                status.printAbove(line);
            } else {
                out.println(line);
                out.flush();
            }
        };
        LocalStack stack;
        try {
            stack = LocalStack.start(watch.options(spec, true, attachPid, watch.runId, runSpec, log,
                    work.resolve("spool")),
                    MonotonicClock.system(), System.getenv(), alertLog);
        } catch (GpuUnavailableException e) {
            TempDirs.deleteQuietly(work);
            throw new UserError(ExitCodes.NVML_UNAVAILABLE, "NVML unavailable: " + e.getMessage()
                    + " (no NVIDIA GPU here? 'trainwatch demo' shows trainwatch on synthetic runs)");
        } catch (CollectorServer.StartException | IOException | IllegalStateException e) {
            TempDirs.deleteQuietly(work);
            throw new UserError(ExitCodes.FAILURE, Errors.oneLine(e));
        }
        CountDownLatch done = new CountDownLatch(1);
        AtomicBoolean signalled = new AtomicBoolean();
        Thread stopper = new Thread(() -> {
            signalled.set(true);
            stack.close();
            TempDirs.deleteQuietly(work);
            done.countDown();
        }, "trainwatch-watch-stop");
        Runtime.getRuntime().addShutdownHook(stopper);

        TrainwatchCommand.bindLogMetrics(parent, stack.server().metrics().registry());
        out.println("trainwatch watch: page " + stack.pageUri() + "  metrics " + stack.pageUri().resolve("metrics")
                + (attachPid != null ? "  (until process " + attachPid + " ends; Ctrl-C stops)" : "  (Ctrl-C stops)"));
        out.flush();

        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "trainwatch-watch-status");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleAtFixedRate(() -> {
            try {
                tellIfNothingToWatch(stack, alertLog);
                if (terminal) {
                    status.paint(StatusLines.render(stack.fleet().runs(), terminalWidth()));
                }
                if (stack.attachedRunEnded()) {
                    done.countDown();
                }
            } catch (RuntimeException e) {
                err.println("trainwatch: status failed: " + Errors.oneLine(e));
            }
        }, 0, STATUS_EVERY_MILLIS, TimeUnit.MILLISECONDS);

        done.await();
        ticker.shutdownNow();
        if (!signalled.get()) {
            // The run is over: show where it stood, then stop without waiting for a signal.
            Runtime.getRuntime().removeShutdownHook(stopper);
            status.release();
            stack.stopAgent();
            for (var run : stack.fleet().runs()) {
                out.println("trainwatch: ended " + StatusLines.line(run));
            }
            out.flush();
            stack.close();
            TempDirs.deleteQuietly(work);
        }
        return ExitCodes.OK;
    }

    /** Once, a few seconds in with no run: says there is nothing to watch yet, and what to do. */
    private void tellIfNothingToWatch(LocalStack stack, Consumer<String> out) {
        if (!toldNothing.get()) {
            NothingToWatch.notice(stack.fleet().runs(), (System.nanoTime() - created) / 1e9, log).ifPresent(line -> {
                toldNothing.set(true);
                out.accept(line);
            });
        }
    }

    private static int terminalWidth() {
        try {
            int columns = Integer.parseInt(System.getenv().getOrDefault("COLUMNS", "160").trim());
            return columns > 20 ? columns : 160;
        } catch (NumberFormatException e) {
            return 160;
        }
    }
}
