package dev.trainwatch.estimator;

import java.util.function.Consumer;

/**
 * One change the estimator can price on a run: what to do, the flag that does it, what it gives up, and the edit
 * that makes it. Levers of one {@code slot} exclude each other (one optimizer, one precision); a plan combines at
 * most one lever per slot, applying their edits to one copy of the run. Immutable.
 *
 * @param slot    what the lever sets ({@code optimizer}, {@code features}, {@code ema}, …)
 * @param change  the change in words ("use 8-bit CAME")
 * @param flag    the {@code trainwatch estimate} flags that make it ("--optimizer came8bit")
 * @param givesUp what it costs besides memory and step time, in words, or null when nothing
 * @param effort  how much of the user's recipe it changes: 0 a setting (fused attention, accumulation, ZeRO,
 *                checkpointing), 1 numerics (8-bit state of the same optimizer, half precision), 2 the pipeline or
 *                framework (precomputed features, no EMA, mixed weights), 3 another optimizer (retune it)
 * @param edit    makes the change on a copy of the run
 */
record Lever(String slot, String change, String flag, String givesUp, int effort,
             Consumer<ResolvedRun.Builder> edit) {
}
