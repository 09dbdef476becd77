package dev.trainwatch.cli.demo;

import dev.trainwatch.protocol.RunSpec;

/**
 * One synthetic run on one synthetic node: identity, spec, and what its GPUs and log show, as pure functions of
 * scenario time and step ({@link DemoFeed} keeps the state). Immutable.
 */
public interface Scenario {

    /** Run id; always starts with {@code demo-} so a synthetic run is never mistaken for a real one. */
    String runId();

    /** One line for people: what this scenario shows. */
    String title();

    /** The run's spec as a user would declare it. */
    RunSpec spec();

    /** The synthetic node's host name. */
    String host();

    /** NVML device name of the node's GPUs. */
    String gpuName();

    /** The step the run is at when the scenario begins (runs are shown mid-flight). */
    long firstStep();

    /** Wall seconds of step {@code step}, finishing at scenario time {@code elapsedSeconds}. */
    double stepSeconds(long step, double elapsedSeconds);

    /** Seconds of that step spent before the forward pass (data loading, online encoders). */
    double dataSeconds(long step, double elapsedSeconds);

    /** Samples per step over all ranks. */
    double samplesPerStep();

    /** Training loss at {@code step} (decays slowly; only for realism). */
    double loss(long step);

    /** What GPU {@code index} of the node reads at scenario time {@code elapsedSeconds}. */
    GpuReading gpu(int index, double elapsedSeconds);

    /** Number of GPUs the run uses on its node. */
    int gpuCount();
}
