package dev.trainwatch.agent;

import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.agent.nvml.NvmlGpuReader;
import dev.trainwatch.agent.nvml.NvmlLibraryResolver;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

/** Opens the production GPU reader; the one place the command line meets the NVML package. */
public final class GpuReaders {

    private GpuReaders() {
    }

    /**
     * NVML from {@code library}, else {@code TRAINWATCH_NVML_LIBRARY} in {@code environment}, else the system's
     * {@code libnvidia-ml.so.1}.
     *
     * @throws GpuUnavailableException with one line naming the cause (no library, driver not loaded, no permission)
     */
    public static GpuReader openNvml(Path library, Map<String, String> environment, Clock clock)
            throws GpuUnavailableException {
        return NvmlGpuReader.open(NvmlLibraryResolver.resolve(Optional.ofNullable(library), environment), clock);
    }
}
