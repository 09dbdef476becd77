package dev.trainwatch.agent.nvml;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads every GPU through NVML: one init when opened, buffers allocated once and struct fields read at their header
 * offsets (JNA Structures copy every field each call). {@link #readAll()} for one thread; events via {@link #drainEvents()}.
 */
public final class NvmlGpuReader implements GpuReader {

    private static final int MEMORY_V2_VERSION = 0x02000028; // sizeof(nvmlMemory_v2_t) | 2 << 24
    private static final int CLOCK_SM = 1;
    private static final int CLOCK_MEM = 2;
    private static final int TEMPERATURE_GPU = 0;
    private static final int SAMPLES_GPU_UTILIZATION = 1;
    private static final int PSTATE_UNKNOWN = 32;
    private static final long VALUE_NOT_AVAILABLE = -1L; // 0xFFFFFFFFFFFFFFFF
    private static final int TEXT_BUFFER = 96;             // NVML_DEVICE_NAME_V2/UUID_V2 buffer sizes
    private static final long MHZ = 1_000_000L;

    final NvmlApi api;
    private final Clock clock;
    private final String driverVersion;
    private final ConcurrentLinkedQueue<AgentEvent> events = new ConcurrentLinkedQueue<>();
    private final AtomicLong failedReads = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Abort lost = new Abort();
    private final Abort uninitialised = new Abort();

    // Poll-thread state. The direct-mapped calls take addresses: each Memory is a field, so it outlives the calls.
    private final Memory scratch = new Memory(16);         // out value @0, count @8, value type @12
    private final long scratchAddr = Pointer.nativeValue(scratch);
    private final long countAddr = scratchAddr + 8;
    private final long valueTypeAddr = scratchAddr + 12;
    private final Pointer countPtr = scratch.share(8, 4);
    private final Memory memoryBuf = new Memory(40);       // nvmlMemory_v2_t / nvmlMemory_t
    private final long memoryAddr = Pointer.nativeValue(memoryBuf);
    private final Memory utilBuf = new Memory(8);          // nvmlUtilization_t
    private final long utilAddr = Pointer.nativeValue(utilBuf);
    private final Memory text = new Memory(TEXT_BUFFER);
    private final Memory pciBuf = new Memory(68);          // nvmlPciInfo_t
    private Entries samples;                               // nvmlSample_t[]
    private long[] sampleTs;
    private double[] sampleRatio;
    private Entries processEntries;                        // process entries, stride per driver
    private List<String> lastReasons = List.of();          // reused while the mask does not change
    private long lastReasonMask;
    private Entries processUtil = Entries.of(32, 32);      // nvmlProcessUtilizationSample_t[]
    boolean memoryV2Usable;                                // false after a driver refused v2
    private List<Gpu> gpus = List.of();
    private boolean acquired;
    private NvmlEventWatcher watcher;
    private final ActivityCounters activity;
    private PcieThroughputWatcher pcieWatcher;
    private final Set<Long> gpmPcie = ConcurrentHashMap.newKeySet();   // devices whose PCIe rates come from GPM

    /**
     * Loads NVML ({@code library}, or the system's {@code libnvidia-ml.so.1}), initialises it once and reads every
     * GPU's identity; GpuUnavailableException, one line naming the cause, when NVML cannot start.
     */
    public static NvmlGpuReader open(Optional<Path> library, Clock clock) throws GpuUnavailableException {
        NvmlApi api;
        try {
            api = NvmlApi.load(library);
        } catch (NvmlApi.NvmlLoadException e) {
            throw new GpuUnavailableException(e.getMessage());
        }
        int rc = api.init.invokeInt(new Object[0]);
        if (rc != NvmlApi.SUCCESS) {
            // A failed init holds nothing: no shutdown follows it.
            String message = initFailure(api, rc);
            api.direct.unregisterAll();
            throw new GpuUnavailableException(message);
        }
        NvmlGpuReader reader = null;
        try {
            reader = new NvmlGpuReader(api, clock, readDriverVersion(api));
            reader.acquired = true;
            reader.gpus = reader.enumerate();
            reader.startWatcher();
            return reader;
        } catch (GpuUnavailableException | RuntimeException | Error e) {
            // Every acquire has exactly one release, also when enumeration throws.
            if (reader != null) {
                reader.close();
            } else {
                api.shutdown.invokeInt(new Object[0]);
                api.direct.unregisterAll();
            }
            throw e;
        }
    }

    private NvmlGpuReader(NvmlApi api, Clock clock, String driverVersion) {
        this.api = api;
        this.clock = clock;
        this.driverVersion = driverVersion;
        this.memoryV2Usable = api.memoryInfoV2 != null;
        this.activity = new ActivityCounters(api, this::check);
        setSampleCapacity(128);
        setProcessCapacity(32);
    }

    static String initFailure(NvmlApi api, int rc) {
        String nvml = "(NVML: " + api.describe(rc) + ")";
        return switch (rc) {
            case NvmlApi.DRIVER_NOT_LOADED -> "NVIDIA driver not loaded " + nvml;
            case NvmlApi.NO_PERMISSION -> "no permission to use the NVIDIA driver " + nvml + ": give the agent's user"
                    + " read and write access to /dev/nvidiactl and /dev/nvidia* (often the video group)";
            case NvmlApi.LIB_RM_VERSION_MISMATCH ->
                    "NVIDIA driver and NVML library versions differ (reboot or reload the driver) " + nvml;
            case NvmlApi.LIBRARY_NOT_FOUND -> "NVML library not found: " + api.source + " " + nvml;
            default -> "NVML cannot start: " + api.describe(rc) + " (code " + rc + ")";
        };
    }

    private static String readDriverVersion(NvmlApi api) {
        if (api.driverVersion == null) {
            return "unknown";
        }
        try (Memory buf = new Memory(80)) {
            int rc = api.driverVersion.invokeInt(new Object[] {buf, 80});
            return rc == NvmlApi.SUCCESS ? buf.getString(0, "US-ASCII") : "unknown";
        }
    }

    @Override
    public String driverVersion() {
        return driverVersion;
    }

    @Override
    public long failedReads() {
        return failedReads.get();
    }

    @Override
    public List<AgentEvent> drainEvents() {
        List<AgentEvent> out = new ArrayList<>();
        for (AgentEvent e; (e = events.poll()) != null; ) {
            out.add(e);
        }
        return out;
    }

    @Override
    public List<GpuSample> readAll() {
        if (closed.get()) {
            throw new IllegalStateException("reader closed");
        }
        double ts = clock.millis() / 1000.0;
        if (!acquired && !reinitialise()) {
            return identityOnly(ts);
        }
        List<GpuSample> out = new ArrayList<>(gpus.size());
        for (Gpu g : gpus) {
            try {
                out.add(read(g, ts));
            } catch (Abort a) {
                if (a == uninitialised) {
                    // Someone shut NVML down under us: our handles are void. Start again next poll.
                    acquired = false;
                    failedReads.incrementAndGet();
                    return identityOnly(ts);
                }
                out.add(lostSample(g, ts));
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        stopWatcher();
        releaseCounters();
        if (acquired) {
            acquired = false;
            api.shutdown.invokeInt(new Object[0]);
        }
        api.direct.unregisterAll();
    }

    private List<Gpu> enumerate() throws GpuUnavailableException {
        int rc = api.getCount.invokeInt(new Object[] {countPtr});
        if (rc != NvmlApi.SUCCESS) {
            // A failure is not "no GPUs": never report an empty node because a call failed.
            throw new GpuUnavailableException("NVML cannot count the GPUs: " + api.describe(rc) + " (code " + rc + ")");
        }
        int n = scratch.getInt(8);
        List<Gpu> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Gpu g = new Gpu(i);
            readIdentity(g);
            list.add(g);
        }
        return List.copyOf(list);
    }

    /** Identity and maxima are read once per init: they do not change while a handle is valid. */
    private void readIdentity(Gpu g) {
        int rc = api.getHandleByIndex.invokeInt(new Object[] {g.index, scratch});
        if (rc != NvmlApi.SUCCESS) {
            g.handle = null;
            if (rc == NvmlApi.GPU_IS_LOST) {
                g.lost = true;
            } else {
                failedReads.incrementAndGet();
            }
            return;
        }
        g.handle = scratch.getPointer(0);
        g.peer = Pointer.nativeValue(g.handle);
        try {
            g.uuid = readText(api.getUuid, g.handle);
            g.name = readText(api.getName, g.handle);
            if (api.getPciInfo != null && check(api.getPciInfo.invokeInt(new Object[] {g.handle, pciBuf}))) {
                g.pciBusId = pciBuf.getString(36, "US-ASCII");
            }
            g.smClockMax = mhz(readUint(api.getMaxClockInfo, g.handle, CLOCK_SM));
            g.memClockMax = mhz(readUint(api.getMaxClockInfo, g.handle, CLOCK_MEM));
        } catch (Abort a) {
            if (a == lost) {
                g.lost = true;
            }
        }
    }

    private boolean reinitialise() {
        stopWatcher();
        releaseCounters(); // samples of the last init: released before handles are read again
        int rc = api.init.invokeInt(new Object[0]);
        if (rc != NvmlApi.SUCCESS) {
            failedReads.incrementAndGet();
            return false;
        }
        acquired = true;
        try {
            gpus = enumerate();
        } catch (GpuUnavailableException e) {
            failedReads.incrementAndGet();
            return true; // keep the old identities; reading them fails cleanly until the count works
        }
        startWatcher();
        return true;
    }

    private void startWatcher() {
        Map<Long, String> byPeer = new HashMap<>();
        List<Pointer> handles = new ArrayList<>();
        for (Gpu g : gpus) {
            if (g.handle != null) {
                byPeer.put(g.peer, g.uuid);
                handles.add(g.handle);
            }
        }
        watcher = NvmlEventWatcher.start(api, handles, byPeer, clock, events::add, failedReads);
        gpmPcie.clear();
        pcieWatcher = PcieThroughputWatcher.start(api, handles, gpmPcie, failedReads);
    }

    private void stopWatcher() {
        if (watcher != null) {
            watcher.stop();
            watcher = null;
        }
        if (pcieWatcher != null) {
            pcieWatcher.stop();
            pcieWatcher = null;
        }
    }

    /** Frees every GPU's GPM samples; each was allocated once and is released exactly once. */
    private void releaseCounters() {
        for (Gpu g : gpus) {
            activity.release(g.counters);
        }
    }

    private GpuSample read(Gpu g, double ts) {
        if (g.handle == null) {
            readIdentity(g);
            if (g.handle == null) {
                return g.lost ? lostSample(g, ts) : identitySample(g, ts, false);
            }
        }
        long dev = g.peer;
        Long total = null;
        Long used = null;
        Long reserved = null;
        Long free = null;
        boolean memoryRead = false;
        if (memoryV2Usable) {
            memoryBuf.setInt(0, MEMORY_V2_VERSION);
            int rc = api.memoryInfoV2.call(dev, memoryAddr);
            if (rc == NvmlApi.ARGUMENT_VERSION_MISMATCH || rc == NvmlApi.FUNCTION_NOT_FOUND) {
                memoryV2Usable = false; // a driver with the symbol but not this struct version: use v1 from now on
            } else if (check(rc)) {
                total = memoryBuf.getLong(8);
                reserved = memoryBuf.getLong(16);
                free = memoryBuf.getLong(24);
                used = memoryBuf.getLong(32);
                memoryRead = true;
            } else if (rc != NvmlApi.NOT_SUPPORTED) {
                memoryRead = true; // a failed read (counted): absent this poll
            }
        }
        if (!memoryRead && api.memoryInfo != null && check(api.memoryInfo.call(dev, memoryAddr))) {
            total = memoryBuf.getLong(0);
            free = memoryBuf.getLong(8);
            used = memoryBuf.getLong(16);
        }

        Double util = null;
        Double memUtil = null;
        if (api.utilizationRates != null && check(api.utilizationRates.call(dev, utilAddr))) {
            util = utilBuf.getInt(0) / 100.0;
            memUtil = utilBuf.getInt(4) / 100.0;
        }
        UtilizationWindow window = readUtilizationWindow(g);

        Long smClock = mhz(readUint(api.clockInfo, dev, CLOCK_SM));
        Long memClock = mhz(readUint(api.clockInfo, dev, CLOCK_MEM));
        List<String> reasons = null;
        if (api.clockEventReasons != null && check(api.clockEventReasons.call(dev, scratchAddr))) {
            long mask = scratch.getLong(0);
            if (mask != lastReasonMask) {
                lastReasonMask = mask;
                lastReasons = ClockEventReasons.names(mask);
            }
            reasons = lastReasons;
        }
        Long powerMw = readUint(api.powerUsage, dev);
        Long limitMw = readUint(api.enforcedPowerLimit, dev);
        Double energy = null;
        if (api.totalEnergy != null && check(api.totalEnergy.call(dev, scratchAddr))) {
            energy = scratch.getLong(0) / 1000.0;
        }
        Long temp = readUint(api.temperature, dev, TEMPERATURE_GPU);
        Integer pstate = null;
        if (api.performanceState != null && check(api.performanceState.call(dev, scratchAddr))) {
            int p = scratch.getInt(0);
            pstate = p >= 0 && p < PSTATE_UNKNOWN ? p : null;
        }
        List<GpuProcess> processes = readProcesses(g, total);
        GpuActivity counters = activity.read(g.counters, dev, ts, pcieWatcher == null ? null : pcieWatcher.latest(dev));
        if (g.counters.gpmPcie) {
            gpmPcie.add(dev);
        } else {
            gpmPcie.remove(dev);
        }

        g.lost = false;
        g.lostReported = false;
        return new GpuSample(ts, g.index, g.uuid, g.name, g.pciBusId, total, used, reserved, free, util, memUtil,
                window, smClock, g.smClockMax, memClock, g.memClockMax, reasons,
                powerMw == null ? null : powerMw / 1000.0, limitMw == null ? null : limitMw / 1000.0, energy,
                temp == null ? null : temp.doubleValue(), pstate, processes, false, counters);
    }

    /** The driver's GPU-utilisation samples newer than the last one seen; null when there are none. */
    private UtilizationWindow readUtilizationWindow(Gpu g) {
        if (api.samples == null) {
            return null;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            scratch.setInt(8, sampleTs.length);
            int rc = api.samples.call(g.peer, SAMPLES_GPU_UTILIZATION, g.lastSampleTs, valueTypeAddr, countAddr,
                    samples.addr());
            if (rc == NvmlApi.INSUFFICIENT_SIZE && attempt == 0) {
                setSampleCapacity(Math.max(scratch.getInt(8), sampleTs.length * 2));
                continue;
            }
            if (rc == NvmlApi.NOT_FOUND || !check(rc)) {
                return null;
            }
            int n = Math.min(scratch.getInt(8), sampleTs.length);
            int type = scratch.getInt(12);
            long newest = g.lastSampleTs;
            for (int i = 0; i < n; i++) {
                long off = 16L * i;
                sampleTs[i] = samples.memory().getLong(off);
                sampleRatio[i] = sampleValue(samples.memory(), off + 8, type) / 100.0;
                newest = Math.max(newest, sampleTs[i]);
            }
            g.lastSampleTs = newest;
            return UtilizationSummary.summarise(sampleTs, sampleRatio, n);
        }
        return null;
    }

    /** Reads an 8-byte {@code nvmlValue_t} union member by its {@code nvmlValueType_t}. */
    private static double sampleValue(Memory m, long off, int type) {
        return switch (type) {
            case 0 -> m.getDouble(off);                              // DOUBLE
            case 1 -> m.getInt(off) & 0xFFFFFFFFL;                   // UNSIGNED_INT
            case 2, 3 -> unsigned(m.getLong(off));                   // UNSIGNED_LONG, UNSIGNED_LONG_LONG
            case 4 -> m.getLong(off);                                // SIGNED_LONG_LONG
            case 5 -> m.getInt(off);                                 // SIGNED_INT
            default -> m.getInt(off) & 0xFFFFFFFFL;
        };
    }

    private static double unsigned(long v) {
        return v >= 0 ? v : (double) (v >>> 1) * 2.0;
    }

    private List<GpuProcess> readProcesses(Gpu g, Long memoryTotal) {
        DirectCalls.DeviceCountBuffer f = api.computeProcesses;
        if (f == null) {
            return null;
        }
        int stride = api.processStride.bytes;
        int n = -1;
        for (int attempt = 0; attempt < 3 && n < 0; attempt++) {
            scratch.setInt(8, processEntries.capacity());
            int rc = f.call(g.peer, countAddr, processEntries.addr());
            if (rc == NvmlApi.INSUFFICIENT_SIZE) {
                setProcessCapacity(scratch.getInt(8) + 8); // room for processes starting meanwhile
                continue;
            }
            if (!check(rc)) {
                return null;
            }
            n = Math.min(scratch.getInt(8), processEntries.capacity());
        }
        if (n < 0) {
            failedReads.incrementAndGet();
            return null;
        }
        if (n == 0) {
            return List.of();
        }
        Map<Long, double[]> perPid = readProcessUtilization(g);
        List<GpuProcess> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long off = (long) stride * i;
            long pid = processEntries.memory().getInt(off) & 0xFFFFFFFFL;
            long mem = processEntries.memory().getLong(off + 8);
            Long memory = mem == VALUE_NOT_AVAILABLE ? null : mem;
            // Sanity check against a wrong stride: a PID of 0 or more memory than the GPU has means garbage.
            if (pid == 0 || (memory != null && memoryTotal != null && Long.compareUnsigned(memory, memoryTotal) > 0)) {
                failedReads.incrementAndGet();
                return null;
            }
            double[] u = perPid == null ? null : perPid.get(pid);
            list.add(new GpuProcess(pid, memory, u == null ? null : u[0] / u[2] / 100.0,
                    u == null ? null : u[1] / u[2] / 100.0));
        }
        return list;
    }

    /** Per-PID mean SM and memory utilisation since the last poll: pid → {sm sum, mem sum, samples}. */
    private Map<Long, double[]> readProcessUtilization(Gpu g) {
        if (api.processUtilization == null) {
            return null;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            scratch.setInt(8, processUtil.capacity());
            int rc = api.processUtilization.call(g.peer, processUtil.addr(), countAddr, g.lastProcessUtilTs);
            if (rc == NvmlApi.INSUFFICIENT_SIZE && attempt == 0) {
                processUtil = Entries.of(32, Math.max(scratch.getInt(8), processUtil.capacity() * 2));
                continue;
            }
            if (rc == NvmlApi.NOT_FOUND || !check(rc)) {
                return null;
            }
            int n = Math.min(scratch.getInt(8), processUtil.capacity());
            Map<Long, double[]> m = new HashMap<>();
            long newest = g.lastProcessUtilTs;
            for (int i = 0; i < n; i++) {
                long off = 32L * i;
                Memory entries = processUtil.memory();
                long pid = entries.getInt(off) & 0xFFFFFFFFL;
                newest = Math.max(newest, entries.getLong(off + 8));
                double[] acc = m.computeIfAbsent(pid, k -> new double[3]);
                acc[0] += entries.getInt(off + 16) & 0xFFFFFFFFL;
                acc[1] += entries.getInt(off + 20) & 0xFFFFFFFFL;
                acc[2]++;
            }
            g.lastProcessUtilTs = newest;
            return m;
        }
        return null;
    }

    /** True on success; NOT_SUPPORTED is an absent reading, a lost GPU aborts its read, the rest count as failed. */
    private boolean check(int rc) {
        switch (rc) {
            case NvmlApi.SUCCESS:
                return true;
            case NvmlApi.NOT_SUPPORTED:
                return false;
            case NvmlApi.GPU_IS_LOST:
                throw lost;
            case NvmlApi.UNINITIALIZED:
                throw uninitialised;
            default:
                failedReads.incrementAndGet();
                return false;
        }
    }

    private Long readUint(DirectCalls.DeviceOut f, long device) {
        return f == null ? null : uintIfRead(f.call(device, scratchAddr));
    }

    private Long readUint(DirectCalls.DeviceTypeOut f, long device, int type) {
        return f == null ? null : uintIfRead(f.call(device, type, scratchAddr));
    }

    private Long readUint(Function f, Pointer handle, int type) {
        return f == null ? null : uintIfRead(f.invokeInt(new Object[] {handle, type, scratch}));
    }

    /** The unsigned int the call wrote to the scratch buffer, when {@link #check} accepts its return code. */
    private Long uintIfRead(int rc) {
        return check(rc) ? Long.valueOf(scratch.getInt(0) & 0xFFFFFFFFL) : null;
    }

    private String readText(Function f, Pointer handle) {
        if (f == null || !check(f.invokeInt(new Object[] {handle, text, TEXT_BUFFER}))) {
            return null;
        }
        return text.getString(0, "US-ASCII");
    }

    private static Long mhz(Long v) {
        return v == null ? null : v * MHZ;
    }

    private GpuSample lostSample(Gpu g, double ts) {
        g.lost = true;
        failedReads.incrementAndGet();
        if (!g.lostReported) {
            g.lostReported = true;
            events.add(new AgentEvent(ts, "gpu_lost", g.uuid, null, null,
                    "GPU " + g.index + (g.uuid == null ? "" : " (" + g.uuid + ")") + " is lost: "
                            + api.describe(NvmlApi.GPU_IS_LOST), null, null, null, null));
        }
        return identitySample(g, ts, true);
    }

    private static GpuSample identitySample(Gpu g, double ts, boolean lost) {
        return new GpuSample(ts, g.index, g.uuid, g.name, g.pciBusId, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, lost, null);
    }

    private List<GpuSample> identityOnly(double ts) {
        return new ArrayList<>(gpus.stream().map(g -> identitySample(g, ts, false)).toList());
    }

    private void setSampleCapacity(int n) {
        samples = Entries.of(16, n);
        sampleTs = new long[n];
        sampleRatio = new double[n];
    }

    private void setProcessCapacity(int n) {
        processEntries = Entries.of(Math.max(api.processStride.bytes, 16), n);
    }

    /** A native array of {@code capacity} entries, held while in use: the direct-mapped calls take its address. */
    private record Entries(Memory memory, long addr, int capacity) {
        static Entries of(int entryBytes, int capacity) {
            Memory memory = new Memory((long) entryBytes * capacity);
            return new Entries(memory, Pointer.nativeValue(memory), capacity);
        }
    }

    /** One GPU as known since the last init. */
    private static final class Gpu {
        final int index;
        Pointer handle;
        long peer;
        String uuid;
        String name;
        String pciBusId;
        Long smClockMax;
        Long memClockMax;
        long lastSampleTs;       // newest utilisation sample seen, unix µs
        long lastProcessUtilTs;  // newest per-process sample seen, unix µs
        boolean lost;
        boolean lostReported;
        final ActivityCounters.PerGpu counters = new ActivityCounters.PerGpu();

        Gpu(int index) {
            this.index = index;
        }
    }

    /** Unwinds one GPU's read; preallocated and without a stack trace, it costs nothing on the hot path. */
    private static final class Abort extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Abort() {
            super(null, null, false, false);
        }
    }
}
