package dev.trainwatch.cli;

import dev.trainwatch.agent.log.StepLineParsers;
import java.util.regex.Pattern;

/**
 * Checks {@code --log-format} before anything starts: a preset name, or a regular expression with a named group
 * {@code step}. A bare word that is no preset is a mistyped preset ("dti"), not a regular expression.
 */
public final class LogFormats {

    /** Letters, digits, '-' and '_' only: what a preset name looks like, and no useful regular expression does. */
    private static final Pattern WORD = Pattern.compile("[A-Za-z0-9_-]+");

    private LogFormats() {
    }

    /**
     * @throws UserError (usage) with one line: the unknown preset and the closest ones, or why the regular expression
     *                   cannot be used
     */
    public static void check(String format) {
        if (format == null || format.isBlank()) {
            return;
        }
        String trimmed = format.trim();
        boolean word = WORD.matcher(trimmed).matches();
        try {
            if (!StepLineParsers.forFormat(trimmed).name().equals("regex") || !word) {
                return;
            }
        } catch (IllegalArgumentException e) {
            if (!word) {
                throw new UserError(ExitCodes.USAGE, "--log-format: " + e.getMessage());
            }
        }
        throw new UserError(ExitCodes.USAGE, "--log-format: unknown preset '" + trimmed + "'"
                + Suggestions.didYouMean(trimmed, StepLineParsers.PRESETS) + " (presets: "
                + String.join(", ", StepLineParsers.PRESETS) + "; or a regular expression with a group (?<step>\\d+))");
    }
}
