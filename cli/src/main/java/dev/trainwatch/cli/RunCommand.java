package dev.trainwatch.cli;

import dev.trainwatch.agent.attribution.RunIds;
import dev.trainwatch.agent.failure.FailureClassifier;
import dev.trainwatch.agent.failure.KernelLog;
import dev.trainwatch.agent.failure.OutputTail;
import dev.trainwatch.cli.watch.ChildProcess;
import dev.trainwatch.cli.watch.LocalStack;
import dev.trainwatch.cli.watch.SignalForwarding;
import dev.trainwatch.cli.watch.StatusLines;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.MonotonicClock;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code trainwatch run [options] -- CMD ARGS…}: runs the command with its output untouched, parses it for steps,
 * watches its GPUs and exits with its status. The command runs even when watching cannot start; trainwatch's own
 * lines go to stderr.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = "Starts a training command and watches it: its output (passed through unchanged) is parsed for "
                + "steps, its processes' GPUs are read through NVML, and the page shows it against the estimate. "
                + "Exits with the command's exit status; TERM, HUP (and INT when not at a terminal) are passed on "
                + "to it. Without NVML it still parses the output and says once that there are no GPU readings.",
        sortOptions = false)
final class RunCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @picocli.CommandLine.ParentCommand
    TrainwatchCommand parent;

    @Mixin
    WatchOptions watch;

    /** The id the run is watched under (named before the command's first output). */
    private String watchedRunId;
    /** The stack once watching started (the signal handlers may run before). */
    private final AtomicReference<LocalStack> watching = new AtomicReference<>();
    /** Set once trainwatch received SIGINT (its user's Ctrl-C) and passed it on: the run then ends as stopped. */
    private final AtomicReference<String> stoppedBy = new AtomicReference<>();

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The training command and its arguments (after --).")
    List<String> command;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        LogFormats.check(watch.logFormat);
        RunSpec runSpec = watch.runSpec();
        Path work = Files.createTempDirectory("trainwatch-run-");
        try {
            Path output = work.resolve("output.log");
            ChildProcess child;
            try {
                child = ChildProcess.start(command, new FileOutputStream(FileDescriptor.out),
                        new FileOutputStream(FileDescriptor.err), output);
            } catch (IOException e) {
                throw new UserError(ExitCodes.USAGE, "cannot start " + command.get(0) + ": " + e.getMessage());
            }
            SignalForwarding.install(child, () -> System.console() != null, name -> {
                err.println("trainwatch: SIG" + name + " received, passing it on to " + command.get(0));
                if (name.equals("INT")) {
                    userStopped();
                }
            });
            LocalStack stack = startWatching(child, output, work, runSpec, err);
            watching.set(stack);
            if (stoppedBy.get() != null) {
                userStopped(); // the Ctrl-C came before watching started
            }
            if (stack != null) {
                TrainwatchCommand.bindLogMetrics(parent, stack.server().metrics().registry());
            }
            int status = child.waitFor();
            if (stack != null) {
                finish(stack, err, status, output, watchedRunId, stoppedBy.get(), child.pid());
            }
            return status;
        } finally {
            TempDirs.deleteQuietly(work);
        }
    }

    /** Ctrl-C by the run's own user stops it without a failure; a scheduler's TERM may be a preemption worth a page. */
    private void userStopped() {
        stoppedBy.set("SIGINT");
        LocalStack stack = watching.get();
        if (stack != null && watchedRunId != null) {
            stack.fleet().stopping(watchedRunId, "SIGINT");
        }
    }

    /** Starts the collector and agent; a failure is reported and the command runs on unwatched. */
    private LocalStack startWatching(ChildProcess child, Path output, Path work, RunSpec runSpec, PrintWriter err) {
        try {
            // The run is named up front: a short command may be gone before the agent's first look at it.
            String named = RunIds.fromEnvironment(System.getenv());
            String runId = watch.runId != null ? watch.runId
                    : named != null ? named : LocalStack.hostName() + "-run-" + child.pid();
            watchedRunId = runId;
            LocalStack stack = LocalStack.start(watch.options(spec, false, child.pid(), runId, runSpec, output,
                    work.resolve("spool")), MonotonicClock.system(), System.getenv(), line -> {
                        err.println(line);
                        err.flush();
                    });
            err.println("trainwatch: watching " + command.get(0) + " (pid " + child.pid() + "); page "
                    + stack.pageUri());
            if (stack.gpuProblem() != null) {
                err.println("trainwatch: no GPU readings (" + stack.gpuProblem()
                        + "); watching the command's output only");
            }
            err.flush();
            return stack;
        } catch (Exception e) {
            err.println("trainwatch: not watching (" + Errors.oneLine(e) + "); the command runs on");
            err.flush();
            return null;
        }
    }

    /** The command has exited: its last lines, why it failed, the run's end, where it stood. */
    private static void finish(LocalStack stack, PrintWriter err, int status, Path output, String runId,
                               String stoppedBy, long pid) {
        try {
            stack.pollNow();
        } catch (IOException e) {
            // The last poll only picks up the final lines; the run's summary does without them.
        }
        try {
            stack.stopAgent();
            if (stoppedBy != null) {
                for (RunView run : stack.fleet().runs()) {
                    stack.fleet().stopping(run.runId(), stoppedBy);
                }
                err.println("trainwatch: the run was stopped by its user (" + stoppedBy + ", passed on to the command;"
                        + " exit status " + status + ")");
            }
            List<String> tail = OutputTail.read(output, OutputTail.MAX_LINES, OutputTail.MAX_BYTES);
            RunFailure failure = status == 0 || stoppedBy != null ? null : FailureClassifier.confirmKill(
                    FailureClassifier.classify(tail, status), List.of(pid), tail, KernelLog::read);
            if (failure != null && stack.fleet().run(runId).isEmpty() && stack.fleet().runs().isEmpty()) {
                // It failed before it reported a step or touched a GPU: the failure is all there is to say.
                stack.fleet().recordFailure(runId, failure, LocalStack.hostName());
            }
            for (RunView run : stack.fleet().runs()) {
                if (failure != null) {
                    if (run.anomalies().stream().noneMatch(a -> a.active() && a.kind() == AnomalyKind.RUN_FAILED)) {
                        stack.fleet().recordFailure(run.runId(), failure, LocalStack.hostName());
                    }
                    err.println("trainwatch: the run failed (" + failure.cause()
                            + (failure.rank() != null ? ", rank " + failure.rank() : "") + "): " + failure.summary());
                    run = stack.fleet().run(run.runId()).orElse(run);
                }
                // Ended first: what was still wrong ends with the run and the line says so.
                RunView ended = stack.fleet().endRun(run.runId()).orElse(run);
                err.println("trainwatch: " + StatusLines.line(ended));
            }
            err.flush();
        } finally {
            stack.close();
        }
    }
}
