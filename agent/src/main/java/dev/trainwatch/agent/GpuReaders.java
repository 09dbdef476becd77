package dev.trainwatch.agent;

import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.agent.nvml.NvmlGpuReader;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

/** Opens the production GPU reader; the one place the command line meets the NVML package. */
public final class GpuReaders {

    /** Environment variable naming the NVML library file. */
    public static final String NVML_LIBRARY_ENV = "TRAINWATCH_NVML_LIBRARY";

    private GpuReaders() {
    }

    /**
     * NVML from {@code library}, else {@value #NVML_LIBRARY_ENV} in {@code environment}, else the system's
     * {@code libnvidia-ml.so.1}.
     *
     * @throws GpuUnavailableException with one line naming the cause (no library, driver not loaded, no permission)
     */
    public static GpuReader openNvml(Path library, Map<String, String> environment, Clock clock)
            throws GpuUnavailableException {
        return NvmlGpuReader.open(nvmlLibrary(library, environment), clock);
    }

    /** The library file {@link #openNvml} loads; empty for the system's. */
    public static Optional<Path> nvmlLibrary(Path library, Map<String, String> environment) {
        return Optional.ofNullable(library).or(() -> Optional.ofNullable(environment.get(NVML_LIBRARY_ENV))
                .filter(env -> !env.isBlank()).map(env -> Path.of(env.trim())));
    }
}
