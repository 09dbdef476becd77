package dev.trainwatch.collector.detect;

import java.util.List;

/** The detector set, in evaluation order. */
public final class Detectors {

    private Detectors() {
    }

    /** One detector per anomaly kind, configured from {@code settings}. */
    public static List<Detector> all(DetectorSettings settings) {
        return List.of();
    }
}
