package dev.trainwatch.agent.nvml;

import com.sun.jna.Function;
import java.util.HashMap;
import java.util.Map;

/** The symbols a reader's driver offered for the readings with fallbacks, by reading. */
final class BoundSymbols {

    private BoundSymbols() {
    }

    static Map<String, String> of(NvmlGpuReader reader) {
        NvmlApi api = reader.api;
        Map<String, String> m = new HashMap<>();
        m.put("init", name(api.init));
        m.put("count", name(api.getCount));
        m.put("handle", name(api.getHandleByIndex));
        m.put("pci", name(api.getPciInfo));
        m.put("memory", reader.memoryV2Usable ? "nvmlDeviceGetMemoryInfo_v2"
                : api.memoryInfo != null ? "nvmlDeviceGetMemoryInfo" : null);
        m.put("clock_event_reasons", api.clockEventReasonsSymbol);
        m.put("processes", api.computeProcesses == null ? null : api.processStride.symbol);
        m.put("process_stride", Integer.toString(api.processStride.bytes));
        m.put("event_wait", name(api.eventSetWait));
        m.put("gpm", api.gpm == null ? null : "nvmlGpmMetricsGet");
        m.put("field_values", api.fieldValues == null ? null : "nvmlDeviceGetFieldValues");
        m.put("pcie_throughput", api.pcieThroughput == null ? null : "nvmlDeviceGetPcieThroughput");
        m.values().removeIf(v -> v == null);
        return m;
    }

    private static String name(Function f) {
        return f == null ? null : f.getName();
    }
}
