package dev.trainwatch.cli.demo;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.util.List;

/**
 * Where the demo's synthetic data goes: the collector's ingest, the same way real agents and training scripts
 * reach it. Called from one thread.
 */
public interface DemoSink {

    /** Declares a run ({@code PUT /v1/runs/{run_id}}). */
    void putSpec(String runId, RunSpec spec) throws IOException;

    /** Reports steps of a run ({@code POST /v1/runs/{run_id}/steps}). */
    void postSteps(String runId, List<StepEvent> steps) throws IOException;

    /** Delivers an agent batch ({@code POST /v1/samples}). */
    void postBatch(AgentBatch batch) throws IOException;
}
