package dev.trainwatch.cli.demo;

import java.util.SplittableRandom;

/**
 * Deterministic noise: the same (seed, key) always gives the same value, so a scenario's readings do not depend
 * on how often the feed ticks.
 */
final class Noise {

    private Noise() {
    }

    /** A value in [-1, 1). */
    static double signed(long seed, long key) {
        return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + key).nextDouble() * 2 - 1;
    }

    /** Key for a time-based reading: tenths of a second, so readings change at most ten times a second. */
    static long timeKey(double elapsedSeconds, int index) {
        return (long) Math.floor(elapsedSeconds * 10) * 64 + index;
    }
}
