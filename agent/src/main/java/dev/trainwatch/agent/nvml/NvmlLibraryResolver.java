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
        return option.or(() -> Optional.ofNullable(environment.get(ENV)).filter(env -> !env.isBlank())
                .map(env -> Path.of(env.trim())));
    }
}
