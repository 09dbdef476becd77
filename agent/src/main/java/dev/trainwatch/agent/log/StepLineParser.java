package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * Turns one log line (already split on {@code \r}/{@code \n} and stripped of ANSI colour codes) into a step
 * event, or null when the line is not a step line. Implementations reject most lines with a cheap
 * {@code indexOf} before doing any real work, because a catch-up read passes every line of the file through
 * here. The returned event has no {@code ts}; the caller takes it from the line's timestamp prefix or the read
 * time. Parsers may keep state between lines (the previous step number, to infer the log interval), so one
 * instance serves one log and is not thread-safe.
 */
public interface StepLineParser {

    /** The step on this line, or null. Never throws for malformed input. */
    StepEvent parse(String line);

    /**
     * Fragments of which a step line must contain at least one, checked on the raw line before ANSI codes are
     * stripped, so most noise lines cost one {@code indexOf} each; null when the parser cannot say (a user's
     * regex). Colour codes wrap whole lines or prefixes in practice, never split these keys.
     */
    default String[] quickCheck() {
        return null;
    }

    /** The preset's name ({@code pixart}, …, {@code regex}), for messages and docs. */
    String name();

    /**
     * True when the format redraws a step's line (a tqdm bar: training loops call {@code update(1)}, which redraws
     * with the previous step's postfix, then {@code set_postfix(loss=…)}): the last frame of a step carries its
     * values, so the caller holds each step until the next step's frame (or a quiet second) before sending it.
     */
    default boolean redraws() {
        return false;
    }
}
