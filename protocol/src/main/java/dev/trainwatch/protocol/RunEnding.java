package dev.trainwatch.protocol;

import java.util.List;

/**
 * How an agent saw a run end that it did not start (its processes vanished): whether the log it followed says why,
 * and where the run's processes wrote their output, so the collector can say "ended without a cause in the log"
 * and which output to point {@code --log} at. Sent with a {@code run_ended} {@link AgentEvent}. Immutable.
 *
 * @param log        the log the agent followed for the run, or null when it followed none
 * @param causeInLog true when the log's last lines name a cause (a {@code run_failed} event then says which)
 * @param lastLine   the log's last line (at most 500 characters), or null
 * @param outputs    files the run's processes had as stdout or stderr (at most 4, the log itself left out): where a
 *                   traceback that is not in the log went
 */
public record RunEnding(String log, boolean causeInLog, String lastLine, List<String> outputs) {
}
