package dev.trainwatch.agent.nvml;

import com.sun.jna.Function;
import com.sun.jna.Library;
import com.sun.jna.NativeLibrary;
import dev.trainwatch.protocol.Errors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The NVML symbols this agent uses, each bound on its own (versioned names first): a missing optional symbol is a
 * null field and a skipped reading, never a failed load as with {@code Native.register}.
 */
final class NvmlApi {

    /** The name drivers install; loadable through both the loader cache and {@code LD_LIBRARY_PATH}. */
    static final String SYSTEM_LIBRARY = "libnvidia-ml.so.1";

    // return codes (nvmlReturn_t)
    static final int SUCCESS = 0;
    static final int UNINITIALIZED = 1;
    static final int NOT_SUPPORTED = 3;
    static final int NO_PERMISSION = 4;
    static final int NOT_FOUND = 6;
    static final int INSUFFICIENT_SIZE = 7;
    static final int DRIVER_NOT_LOADED = 9;
    static final int TIMEOUT = 10;
    static final int LIBRARY_NOT_FOUND = 12;
    static final int FUNCTION_NOT_FOUND = 13;
    static final int GPU_IS_LOST = 15;
    static final int LIB_RM_VERSION_MISMATCH = 18;
    static final int ARGUMENT_VERSION_MISMATCH = 25;

    final String source;
    final NativeLibrary library;

    // lifecycle and enumeration (required)
    final Function init;
    final Function shutdown;
    final Function getCount;
    final Function getHandleByIndex;
    // optional
    final Function errorString;
    final Function driverVersion;
    final Function getName;
    final Function getUuid;
    final Function getPciInfo;
    final Function getMaxClockInfo;
    // per poll, direct-mapped (see DirectCalls); null when the driver lacks the symbol
    final DirectCalls direct;
    final DirectCalls.DeviceOut memoryInfoV2;
    final DirectCalls.DeviceOut memoryInfo;
    final DirectCalls.DeviceOut utilizationRates;
    final DirectCalls.DeviceSamples samples;
    final DirectCalls.DeviceTypeOut clockInfo;
    final DirectCalls.DeviceOut clockEventReasons;
    final String clockEventReasonsSymbol;
    final DirectCalls.DeviceOut powerUsage;
    final DirectCalls.DeviceOut enforcedPowerLimit;
    final DirectCalls.DeviceOut totalEnergy;
    final DirectCalls.DeviceTypeOut temperature;
    final DirectCalls.DeviceOut performanceState;
    final DirectCalls.DeviceBufferCountSince processUtilization;
    final DirectCalls.DeviceCountBuffer computeProcesses;
    final ProcessStride processStride;
    final DirectCalls.DeviceTypeOut pcieThroughput;
    final DirectCalls.DeviceTypeOut fieldValues;
    /** GPM: all five symbols or none (null). */
    final Gpm gpm;
    final Function eventSetCreate;
    final Function registerEvents;
    final Function eventSetWait;
    final Function eventSetFree;

    private NvmlApi(String source, NativeLibrary lib) throws NvmlLoadException {
        this.source = source;
        this.library = lib;
        init = probe("nvmlInit_v2", "nvmlInit");
        shutdown = probe("nvmlShutdown");
        getCount = probe("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
        getHandleByIndex = probe("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
        if (init == null || shutdown == null || getCount == null || getHandleByIndex == null) {
            throw new NvmlLoadException("not an NVML library (no nvmlInit/nvmlDeviceGetCount): " + source);
        }
        errorString = probe("nvmlErrorString");
        driverVersion = probe("nvmlSystemGetDriverVersion");
        getName = probe("nvmlDeviceGetName");
        getUuid = probe("nvmlDeviceGetUUID");
        getPciInfo = probe("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo");
        getMaxClockInfo = probe("nvmlDeviceGetMaxClockInfo");
        direct = new DirectCalls(lib);
        memoryInfoV2 = direct.bind(DirectSymbols.MemoryInfoV2.class, DirectCalls.DeviceOut.class);
        memoryInfo = direct.bind(DirectSymbols.MemoryInfo.class, DirectCalls.DeviceOut.class);
        utilizationRates = direct.bind(DirectSymbols.UtilizationRates.class, DirectCalls.DeviceOut.class);
        samples = direct.bind(DirectSymbols.Samples.class, DirectCalls.DeviceSamples.class);
        clockInfo = direct.bind(DirectSymbols.ClockInfo.class, DirectCalls.DeviceTypeOut.class);
        DirectCalls.DeviceOut reasons = direct.bind(DirectSymbols.ClocksEventReasons.class, DirectCalls.DeviceOut.class);
        String reasonsSymbol = "nvmlDeviceGetCurrentClocksEventReasons";
        if (reasons == null) {
            reasons = direct.bind(DirectSymbols.ClocksThrottleReasons.class, DirectCalls.DeviceOut.class);
            reasonsSymbol = reasons == null ? null : "nvmlDeviceGetCurrentClocksThrottleReasons";
        }
        clockEventReasons = reasons;
        clockEventReasonsSymbol = reasonsSymbol;
        powerUsage = direct.bind(DirectSymbols.PowerUsage.class, DirectCalls.DeviceOut.class);
        enforcedPowerLimit = direct.bind(DirectSymbols.EnforcedPowerLimit.class, DirectCalls.DeviceOut.class);
        totalEnergy = direct.bind(DirectSymbols.TotalEnergyConsumption.class, DirectCalls.DeviceOut.class);
        temperature = direct.bind(DirectSymbols.Temperature.class, DirectCalls.DeviceTypeOut.class);
        performanceState = direct.bind(DirectSymbols.PerformanceState.class, DirectCalls.DeviceOut.class);
        processUtilization = direct.bind(DirectSymbols.ProcessUtilization.class,
                DirectCalls.DeviceBufferCountSince.class);
        processStride = ProcessStride.choose(
                has("nvmlDeviceGetComputeRunningProcesses_v3"),
                has("nvmlDeviceGetComputeRunningProcesses_v2"),
                has("nvmlDeviceGetComputeRunningProcesses"),
                has("nvmlDeviceGetConfComputeMemSizeInfo"),
                has("nvmlDeviceGetRunningProcessDetailList"));
        computeProcesses = switch (processStride) {
            case V3_32, V3_24 -> direct.bind(DirectSymbols.ComputeRunningProcessesV3.class,
                    DirectCalls.DeviceCountBuffer.class);
            case V2_24 -> direct.bind(DirectSymbols.ComputeRunningProcessesV2.class,
                    DirectCalls.DeviceCountBuffer.class);
            case V1_16 -> direct.bind(DirectSymbols.ComputeRunningProcesses.class,
                    DirectCalls.DeviceCountBuffer.class);
            case NONE -> null;
        };
        pcieThroughput = direct.bind(DirectSymbols.PcieThroughput.class, DirectCalls.DeviceTypeOut.class);
        fieldValues = direct.bind(DirectSymbols.FieldValues.class, DirectCalls.DeviceTypeOut.class);
        gpm = Gpm.bind(direct);
        eventSetCreate = probe("nvmlEventSetCreate");
        registerEvents = probe("nvmlDeviceRegisterEvents");
        eventSetWait = probe("nvmlEventSetWait_v2", "nvmlEventSetWait");
        eventSetFree = probe("nvmlEventSetFree");
    }

    /**
     * Loads the library file, or the system's {@code libnvidia-ml.so.1} when none is given.
     *
     * @throws NvmlLoadException with a one-line cause when it cannot be loaded
     */
    static NvmlApi load(Optional<Path> file) throws NvmlLoadException {
        String name = file.map(p -> p.toAbsolutePath().toString()).orElse(SYSTEM_LIBRARY);
        if (file.isPresent() && !Files.exists(file.get())) {
            throw new NvmlLoadException("NVML library not found: " + name);
        }
        NativeLibrary lib;
        try {
            // RTLD_LAZY without RTLD_GLOBAL: NVML's symbols need not be visible to other libraries, and two NVML
            // files (tests load several fake variants) must not interpose on each other.
            lib = NativeLibrary.getInstance(name, Map.of(Library.OPTION_OPEN_FLAGS, 1));
        } catch (UnsatisfiedLinkError e) {
            throw new NvmlLoadException(file.isPresent()
                    ? "NVML library cannot be loaded: " + name + " (" + Errors.oneLine(e) + ")"
                    : "NVML library not found: " + name + " (is the NVIDIA driver installed?)");
        }
        return new NvmlApi(name, lib);
    }

    private Function probe(String... names) {
        for (String n : names) {
            try {
                return library.getFunction(n);
            } catch (UnsatisfiedLinkError missing) {
                // older driver: try the next name
            }
        }
        return null;
    }

    private boolean has(String name) {
        return probe(name) != null;
    }

    String describe(int code) {
        if (errorString != null) {
            try {
                String s = (String) errorString.invoke(String.class, new Object[] {code});
                if (s != null) {
                    return s;
                }
            } catch (RuntimeException e) {
                // fall through to the number
            }
        }
        return "error " + code;
    }

    /** NVML's GPU performance monitoring calls (NVML 12, driver R520 on); a driver lacking one has none. */
    record Gpm(DirectCalls.DeviceOut querySupport, DirectCalls.Out sampleAlloc, DirectCalls.Out sampleFree,
               DirectCalls.DeviceOut sampleGet, DirectCalls.Out metricsGet) {

        static Gpm bind(DirectCalls direct) {
            DirectCalls.DeviceOut support = direct.bind(DirectSymbols.GpmQueryDeviceSupport.class,
                    DirectCalls.DeviceOut.class);
            DirectCalls.Out alloc = direct.bind(DirectSymbols.GpmSampleAlloc.class, DirectCalls.Out.class);
            DirectCalls.Out free = direct.bind(DirectSymbols.GpmSampleFree.class, DirectCalls.Out.class);
            DirectCalls.DeviceOut get = direct.bind(DirectSymbols.GpmSampleGet.class, DirectCalls.DeviceOut.class);
            DirectCalls.Out metrics = direct.bind(DirectSymbols.GpmMetricsGet.class, DirectCalls.Out.class);
            return support == null || alloc == null || free == null || get == null || metrics == null ? null
                    : new Gpm(support, alloc, free, get, metrics);
        }
    }

    /** The library could not be loaded or is not NVML. */
    static final class NvmlLoadException extends Exception {
        private static final long serialVersionUID = 1L;

        NvmlLoadException(String message) {
            super(message);
        }
    }
}
