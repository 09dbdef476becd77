package dev.trainwatch.agent;

import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The spec a trainer's command line names, for a run watched without one (the estimator's config readers, wired in
 * by the command that starts the agent: the agent does not depend on the estimator).
 */
@FunctionalInterface
public interface CommandLineSpecs {

    /** @param spec the spec, notes included; null when the trainer was recognised but its model was not */
    record Found(RunSpec spec, List<String> notes) {
    }

    /** Empty when the program is no trainer the reader knows. */
    Optional<Found> read(List<String> argv, Path cwd, Map<String, String> env);
}
