package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * One log line (split, ANSI stripped) to a step event without {@code ts}, or null; never throws for malformed input.
 * May keep state between lines: one instance per log.
 */
public interface StepLineParser {

    StepEvent parse(String line);

    /** At least one must occur in a step line (checked before ANSI stripping); null when unknown (a regex). */
    default String[] quickCheck() {
        return null;
    }

    String name();

    /**
     * A tqdm bar: {@code update(1)} redraws with the previous postfix before {@code set_postfix(loss=…)}, so the caller
     * holds each step until the next one's frame.
     */
    default boolean redraws() {
        return false;
    }
}
