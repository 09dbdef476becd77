package dev.trainwatch.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until its issue lands: says so and fails. */
@Command(name = "collector", mixinStandardHelpOptions = true, description = "Not available in this build yet.")
final class CollectorCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError(ExitCodes.FAILURE, "'collector' is not available in this build yet");
    }
}
