package dev.trainwatch.cli;

import dev.trainwatch.estimator.InvalidSpecException;

/**
 * An error a user can meet, already phrased as one line, with the exit status it deserves. Subcommands throw it;
 * {@link TrainwatchCommand} prints it without a stack trace.
 */
public class UserError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    public UserError(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    /** The exit status for any exception that escaped a subcommand. */
    static int exitCodeOf(Throwable ex) {
        if (ex instanceof UserError user) {
            return user.exitCode;
        }
        if (ex instanceof InvalidSpecException || ex instanceof IllegalArgumentException) {
            return ExitCodes.USAGE;
        }
        return ExitCodes.FAILURE;
    }
}
