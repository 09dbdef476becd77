package dev.trainwatch.collector.detect;

/**
 * A rank named as the one that stopped, and why.
 *
 * @param busyOnCpu its GPU is idle but its process works (an unannounced save or evaluation): not a hang
 */
record StallCulprit(int rank, String host, String why, boolean busyOnCpu) {

    /** A 2-rank run's one odd rank ("fewer than half" can never hold for two). */
    static boolean oneOfTwo(int odd, int of) {
        return odd == 1 && of == 2;
    }
}
