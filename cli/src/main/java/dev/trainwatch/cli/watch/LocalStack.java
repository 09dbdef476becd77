package dev.trainwatch.cli.watch;

import dev.trainwatch.agent.Agent;
import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.agent.CommandLineSpecs;
import dev.trainwatch.agent.GpuReaders;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.agent.log.LogTailer;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.config.TrainerCommandLine;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The embedded default of {@code watch} and {@code run}: a collector and an agent in this process, the agent
 * shipping over loopback HTTP as a remote one would. {@link #close()} stops the agent (delivering), then the
 * collector.
 */
public final class LocalStack implements AutoCloseable {

    /**
     * What to start: {@code freePortIfBusy} listens on a free port when the default address is taken,
     * {@code requireGpus} fails without NVML ({@code watch}); a null {@code nvmlLibrary} is the environment's or the
     * system's, a null {@code attachPid} watches every compute process.
     */
    public record Options(CollectorConfig collector, boolean freePortIfBusy, Path nvmlLibrary,
                          boolean requireGpus, Long attachPid, String runId, RunSpec spec, Path log,
                          String logFormat, Duration interval, Path spoolDir) {
    }

    private final CollectorStack collector;
    private final Agent agent;
    private final String gpuProblem;

    private LocalStack(CollectorStack collector, Agent agent, String gpuProblem) {
        this.collector = collector;
        this.agent = agent;
        this.gpuProblem = gpuProblem;
    }

    /** NVML first (a machine without it fails before anything listens), then the collector, then the agent. */
    public static LocalStack start(Options options, Clock clock, Map<String, String> environment, Consumer<String> log)
            throws GpuUnavailableException, IOException {
        GpuReader gpus;
        String gpuProblem = null;
        try {
            gpus = GpuReaders.openNvml(options.nvmlLibrary(), environment, clock);
        } catch (GpuUnavailableException e) {
            if (options.requireGpus()) {
                throw e;
            }
            gpuProblem = e.getMessage();
            gpus = new NoGpus();
        }
        CollectorStack collector = null;
        StepSource steps = null;
        try {
            collector = startCollector(options.collector().withClock(clock), options.freePortIfBusy(), log);
            CollectorServer server = collector.server();
            steps = options.log() == null ? null : LogTailer.open(options.log(), options.logFormat(), clock);
            AgentConfig config = new AgentConfig(server.clientUri(), hostName(), options.attachPid(), options.runId(),
                    options.spec(), options.interval(), null, options.spoolDir(), AgentConfig.DEFAULT_SPOOL_MAX_BYTES,
                    Duration.ofSeconds(5));
            Agent agent = Agent.create(config, gpus, steps, LinuxProcSource.system(), clock);
            agent.readSpecsFrom(trainerSpecs());
            agent.start();
            return new LocalStack(collector, agent, gpuProblem);
        } catch (IOException | RuntimeException e) {
            if (steps != null) {
                steps.close();
            }
            gpus.close();
            if (collector != null) {
                collector.close();
            }
            throw e;
        }
    }

    /** The collector on {@code config}'s address, or on a free port when that is taken and {@code freePortIfBusy}. */
    public static CollectorStack startCollector(CollectorConfig config, boolean freePortIfBusy, Consumer<String> log) {
        try {
            return CollectorStack.start(config, log);
        } catch (CollectorServer.StartException e) {
            if (!freePortIfBusy) {
                throw e;
            }
            return CollectorStack.start(config.withListen(config.host(), 0), log);
        }
    }


    /** The trainers' command lines read by the estimator's config readers (the bundled catalog's model ids). */
    public static CommandLineSpecs trainerSpecs() {
        return (argv, cwd, env) -> TrainerCommandLine.read(argv, cwd, env, () -> BundledCatalog.CATALOG)
                .map(read -> new CommandLineSpecs.Found(read.spec(), read.notes()));
    }

    /** Loaded on the first trainer's command line read. */
    private static final class BundledCatalog {
        static final Catalog CATALOG = Catalog.bundled();
    }

    /** Without NVML: no readings at all (never "idle" or "0 bytes"); the log and processes are still watched. */
    private static final class NoGpus implements GpuReader {
        @Override
        public List<GpuSample> readAll() {
            return List.of();
        }

        @Override
        public String driverVersion() {
            return "unavailable";
        }
    }

    /** This node's name in batches: the resolver's, else $HOSTNAME, else localhost. */
    public static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            String env = System.getenv("HOSTNAME");
            return env != null && !env.isBlank() ? env : "localhost";
        }
    }

    public URI pageUri() {
        return collector.server().clientUri();
    }

    public Fleet fleet() {
        return collector.server().fleet();
    }

    public CollectorServer server() {
        return collector.server();
    }

    /** Null when NVML works. */
    public String gpuProblem() {
        return gpuProblem;
    }

    public boolean attachedRunEnded() {
        return agent.attachedRunEnded();
    }

    /** Polls once now (right after the run ended, so its last steps arrive). */
    public void pollNow() throws IOException {
        agent.pollOnce();
    }

    /** Stops the agent, delivering what it holds; the collector keeps running. Idempotent. */
    public void stopAgent() {
        agent.close();
    }

    @Override
    public void close() {
        try {
            agent.close();
        } finally {
            collector.close();
        }
    }
}
