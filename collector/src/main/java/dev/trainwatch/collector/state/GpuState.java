package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.RunContext.XidRecord;
import dev.trainwatch.collector.state.window.GpuWindow;
import dev.trainwatch.protocol.GpuSample;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.TreeMap;

/** One GPU of the fleet: its window, newest sample, attribution and XIDs. Guarded by the fleet's lock. */
final class GpuState {

    private static final int RECENT_XIDS = 32;

    final GpuWindow window;
    GpuSample latest;
    String runId;
    double lastSeen;
    final TreeMap<Long, Long> xidCounts = new TreeMap<>();
    final Deque<XidRecord> recentXids = new ArrayDeque<>();

    GpuState(GpuWindow window) {
        this.window = window;
    }

    void addXid(XidRecord xid) {
        xidCounts.merge(xid.xid(), 1L, Long::sum);
        recentXids.addLast(xid);
        while (recentXids.size() > RECENT_XIDS) {
            recentXids.removeFirst();
        }
    }
}
