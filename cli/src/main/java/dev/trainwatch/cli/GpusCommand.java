package dev.trainwatch.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until its issue lands: says so and fails. */
@Command(name = "gpus", mixinStandardHelpOptions = true, description = "Not available in this build yet.")
final class GpusCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError(ExitCodes.FAILURE, "'gpus' is not available in this build yet");
    }
}
