/**
 * The wire codec, generated at compile time from the protocol records (avaje-jsonb's annotation processor writes one
 * adapter per record into {@code dev.trainwatch.protocol}); {@link dev.trainwatch.protocol.wire.WireCodec} is its
 * entry point.
 */
@Json.Import(jsonSettings = @Json(naming = Json.Naming.LowerUnderscore), value = {
    AgentBatch.class, GpuSample.class, UtilizationWindow.class, GpuProcess.class, GpuActivity.class,
    RunAttribution.class, RankInfo.class, AgentEvent.class, RunFailure.class, RunEnding.class, PhaseProgress.class,
    AgentHealth.class,
    HostMemory.class, RunSteps.class, StepEvent.class, RunSpec.class, RunSpec.Bucket.class})
package dev.trainwatch.protocol.wire;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunEnding;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import io.avaje.jsonb.Json;
