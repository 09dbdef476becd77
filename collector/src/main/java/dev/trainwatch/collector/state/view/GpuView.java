package dev.trainwatch.collector.state.view;

import dev.trainwatch.protocol.GpuSample;
import java.util.Map;

/** One GPU of the fleet with its newest sample; {@code xidCounts} by XID number as a label string. */
public record GpuView(String uuid, String host, String runId, GpuSample latest, Map<String, Long> xidCounts,
                      double lastSeenTs, double idleSeconds) {
}
