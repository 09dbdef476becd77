package dev.trainwatch.cli;

import dev.trainwatch.agent.Durations;
import dev.trainwatch.estimator.InvalidSpecException;
import java.time.Duration;
import java.util.function.Function;

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

    /**
     * A duration option's value (500ms, 2s, 1m) within {@code min} and {@code max} (whole minutes; null: unbounded);
     * a mistake is {@code error} of one line naming the option.
     */
    static Duration duration(String option, String text, Duration min, Duration max,
                             Function<String, RuntimeException> error) {
        Duration parsed;
        try {
            parsed = Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw error.apply(option + ": " + e.getMessage());
        }
        if (min != null && parsed.compareTo(min) < 0) {
            throw error.apply(option + ": " + text + " is below the minimum of " + Durations.text(min));
        }
        if (max != null && parsed.compareTo(max) > 0) {
            throw error.apply(option + ": " + text + " is above the maximum of " + max.toMinutes() + "m");
        }
        return parsed;
    }
}
