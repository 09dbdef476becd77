package dev.trainwatch.estimator;

import dev.trainwatch.protocol.RunSpec;

/** Builds run specs in tests without 17 positional nulls. */
final class Specs {
    private Specs() {
    }

    static RunSpec spec(String model, String gpu, int gpus, int batch, int resolution, String precision,
            String optimizer, Boolean checkpointing, Boolean ema, String features, String attention) {
        return new RunSpec(model, gpu, gpus, batch, resolution, null, null, null, precision, optimizer, checkpointing,
                ema, features, null, attention, null, null);
    }

    static RunSpec simple(String model, String gpu, int batch) {
        return new RunSpec(model, gpu, null, batch, null, null, null, null, null, null, null, null, null, null, null,
                null, null);
    }
}
