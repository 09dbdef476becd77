package dev.trainwatch.cli;

import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.cli.watch.LocalStack;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** The options {@code watch} and {@code run} share: where the embedded collector listens and how the agent polls. */
public final class WatchOptions {

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = CollectorConfig.DEFAULT_HOST + ":"
            + CollectorConfig.DEFAULT_PORT,
            description = "Address of the page, API and /metrics (default: ${DEFAULT-VALUE}; when it is taken and "
                    + "was not given explicitly, a free port is used).")
    String listen;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Keep the collector's history here (default: none).")
    Path dataDir;

    @Option(names = "--run-id", paramLabel = "ID", description = "Run id (default: from TORCHELASTIC_RUN_ID, "
            + "SLURM_JOB_ID, or the host and root PID).")
    String runId;

    @Option(names = "--log-format", paramLabel = "FORMAT", defaultValue = "auto",
            description = "auto, pixart, sana, dit, opensora, accelerate, or a regular expression (default: ${DEFAULT-VALUE}).")
    String logFormat;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "1s",
            description = "GPU polling interval, e.g. 500ms or 2s (default: ${DEFAULT-VALUE}, at least 100ms).")
    String interval;

    @Mixin
    EstimateOptions estimate;

    @Option(names = "--nvml-library", paramLabel = "PATH",
            description = "libnvidia-ml.so.1 to use (default: the system's, or $TRAINWATCH_NVML_LIBRARY).")
    Path nvmlLibrary;

    /**
     * The run's spec from the estimate options, or null when none was given. A spec that names a model and a GPU
     * is priced here first, so a typo fails at once with the estimator's one-line message instead of leaving the
     * run without a prediction.
     *
     * @throws InvalidSpecException (a usage error) when the config cannot be read or the spec cannot be priced
     */
    public RunSpec runSpec() {
        if (estimate.isEmpty()) {
            return null;
        }
        RunSpec spec = estimate.toRunSpec();
        if (spec.model() != null && spec.gpu() != null) {
            estimate.catalog.estimator().estimate(spec);
        }
        return spec;
    }

    /** The stack's options; {@code command} tells whether {@code --listen} was given explicitly. */
    public LocalStack.Options options(CommandSpec command, boolean requireGpus, Long attachPid, String runId,
                                      RunSpec spec, Path log, Path spoolDir) {
        CollectorConfig config;
        try {
            config = CollectorConfig.defaults().withListen(listen);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(command.commandLine(), "--listen: " + e.getMessage());
        }
        if (dataDir != null) {
            config = config.withDataDir(dataDir);
        }
        config = config.withCatalogFiles(estimate.catalog.files());
        boolean explicitListen = command.commandLine().getParseResult() != null
                && command.commandLine().getParseResult().hasMatchedOption("--listen");
        return new LocalStack.Options(config, !explicitListen, nvmlLibrary, requireGpus, attachPid,
                runId, spec, log, logFormat, UserError.duration("--interval", interval, AgentConfig.MIN_INTERVAL, null,
                        message -> new CommandLine.ParameterException(command.commandLine(), message)), spoolDir);
    }
}
