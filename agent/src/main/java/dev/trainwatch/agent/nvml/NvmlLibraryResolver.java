package dev.trainwatch.agent.nvml;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Which NVML library file to load: the {@code --nvml-library} option, else the environment variable
 * {@value #ENV}, else none (the system's {@code libnvidia-ml.so.1}).
 */
public final class NvmlLibraryResolver {

    /** Environment variable naming the library file. */
    public static final String ENV = "TRAINWATCH_NVML_LIBRARY";

    private NvmlLibraryResolver() {
    }

    public static Optional<Path> resolve(Optional<Path> option, Map<String, String> environment) {
        if (option.isPresent()) {
            return option;
        }
        String env = environment.get(ENV);
        return env == null || env.isBlank() ? Optional.empty() : Optional.of(Path.of(env.trim()));
    }
}
