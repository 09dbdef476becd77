package dev.trainwatch.agent.nvml;

/**
 * One class per NVML symbol of the poll, each with a direct-mapped native method named as the exported symbol.
 * Loaded and registered per library by {@link DirectCalls}; public because the classes are defined in a class
 * loader of their own (another runtime package) and must reach the shapes they implement. Each class is written on
 * four lines: they differ only in the symbol.
 */
public final class DirectSymbols {

    private DirectSymbols() {
    }

    public static final class MemoryInfoV2 implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetMemoryInfo_v2(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetMemoryInfo_v2(device, out); }
    }

    public static final class MemoryInfo implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetMemoryInfo(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetMemoryInfo(device, out); }
    }

    public static final class UtilizationRates implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetUtilizationRates(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetUtilizationRates(device, out); }
    }

    public static final class ClocksEventReasons implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetCurrentClocksEventReasons(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetCurrentClocksEventReasons(device, out); }
    }

    public static final class ClocksThrottleReasons implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetCurrentClocksThrottleReasons(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetCurrentClocksThrottleReasons(device, out); }
    }

    public static final class PowerUsage implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetPowerUsage(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetPowerUsage(device, out); }
    }

    public static final class EnforcedPowerLimit implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetEnforcedPowerLimit(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetEnforcedPowerLimit(device, out); }
    }

    public static final class TotalEnergyConsumption implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetTotalEnergyConsumption(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetTotalEnergyConsumption(device, out); }
    }

    public static final class PerformanceState implements DirectCalls.DeviceOut {
        static native int nvmlDeviceGetPerformanceState(long device, long out);
        @Override public int call(long device, long out) { return nvmlDeviceGetPerformanceState(device, out); }
    }

    public static final class ClockInfo implements DirectCalls.DeviceTypeOut {
        static native int nvmlDeviceGetClockInfo(long device, int type, long out);
        @Override public int call(long device, int type, long out) { return nvmlDeviceGetClockInfo(device, type, out); }
    }

    public static final class Temperature implements DirectCalls.DeviceTypeOut {
        static native int nvmlDeviceGetTemperature(long device, int type, long out);
        @Override public int call(long device, int type, long out) { return nvmlDeviceGetTemperature(device, type, out); }
    }

    public static final class ComputeRunningProcessesV3 implements DirectCalls.DeviceCountBuffer {
        static native int nvmlDeviceGetComputeRunningProcesses_v3(long device, long count, long buffer);
        @Override public int call(long device, long count, long buffer) { return nvmlDeviceGetComputeRunningProcesses_v3(device, count, buffer); }
    }

    public static final class ComputeRunningProcessesV2 implements DirectCalls.DeviceCountBuffer {
        static native int nvmlDeviceGetComputeRunningProcesses_v2(long device, long count, long buffer);
        @Override public int call(long device, long count, long buffer) { return nvmlDeviceGetComputeRunningProcesses_v2(device, count, buffer); }
    }

    public static final class ComputeRunningProcesses implements DirectCalls.DeviceCountBuffer {
        static native int nvmlDeviceGetComputeRunningProcesses(long device, long count, long buffer);
        @Override public int call(long device, long count, long buffer) { return nvmlDeviceGetComputeRunningProcesses(device, count, buffer); }
    }

    public static final class ProcessUtilization implements DirectCalls.DeviceBufferCountSince {
        static native int nvmlDeviceGetProcessUtilization(long device, long buffer, long count, long lastSeen);
        @Override public int call(long device, long buffer, long count, long lastSeen) { return nvmlDeviceGetProcessUtilization(device, buffer, count, lastSeen); }
    }

    public static final class Samples implements DirectCalls.DeviceSamples {
        static native int nvmlDeviceGetSamples(long device, int type, long lastSeen, long valueType, long count, long samples);
        @Override public int call(long device, int type, long lastSeen, long valueType, long count, long samples) { return nvmlDeviceGetSamples(device, type, lastSeen, valueType, count, samples); }
    }

    public static final class PcieThroughput implements DirectCalls.DeviceTypeOut {
        static native int nvmlDeviceGetPcieThroughput(long device, int counter, long out);
        @Override public int call(long device, int counter, long out) { return nvmlDeviceGetPcieThroughput(device, counter, out); }
    }

    public static final class FieldValues implements DirectCalls.DeviceTypeOut {
        static native int nvmlDeviceGetFieldValues(long device, int count, long values);
        @Override public int call(long device, int count, long values) { return nvmlDeviceGetFieldValues(device, count, values); }
    }

    public static final class GpmQueryDeviceSupport implements DirectCalls.DeviceOut {
        static native int nvmlGpmQueryDeviceSupport(long device, long support);
        @Override public int call(long device, long support) { return nvmlGpmQueryDeviceSupport(device, support); }
    }

    public static final class GpmSampleAlloc implements DirectCalls.Out {
        static native int nvmlGpmSampleAlloc(long sampleOut);
        @Override public int call(long sampleOut) { return nvmlGpmSampleAlloc(sampleOut); }
    }

    public static final class GpmSampleFree implements DirectCalls.Out {
        static native int nvmlGpmSampleFree(long sample);
        @Override public int call(long sample) { return nvmlGpmSampleFree(sample); }
    }

    public static final class GpmSampleGet implements DirectCalls.DeviceOut {
        static native int nvmlGpmSampleGet(long device, long sample);
        @Override public int call(long device, long sample) { return nvmlGpmSampleGet(device, sample); }
    }

    public static final class GpmMetricsGet implements DirectCalls.Out {
        static native int nvmlGpmMetricsGet(long metricsGet);
        @Override public int call(long metricsGet) { return nvmlGpmMetricsGet(metricsGet); }
    }
}
