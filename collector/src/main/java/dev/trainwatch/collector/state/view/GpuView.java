package dev.trainwatch.collector.state.view;

import dev.trainwatch.protocol.GpuSample;
import java.util.Map;

/**
 * One GPU of the fleet with its newest sample, for the metrics and the fleet page. Immutable snapshot.
 *
 * @param uuid          GPU UUID
 * @param host          node
 * @param runId         the run the GPU is attributed to, null when none
 * @param latest        the newest sample as the agent sent it (absent readings are null)
 * @param xidCounts     XID errors seen since the collector started, by XID number (as a string, the metric
 *                      label value)
 * @param lastSeenTs    unix seconds (collector clock) of the newest sample
 * @param idleSeconds   how long utilisation has stayed at or below 5% (0 when busy), from the window
 */
public record GpuView(String uuid, String host, String runId, GpuSample latest, Map<String, Long> xidCounts,
                      double lastSeenTs, double idleSeconds) {
}
