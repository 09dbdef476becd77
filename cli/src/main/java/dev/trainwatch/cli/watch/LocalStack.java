package dev.trainwatch.cli.watch;

import dev.trainwatch.agent.Agent;
import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.agent.log.LogTailer;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.agent.nvml.NvmlGpuReader;
import dev.trainwatch.agent.nvml.NvmlLibraryResolver;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A collector and an agent in this process, the agent shipping over loopback HTTP as a remote one would (watch, run).
 * {@link #close()} stops the agent (delivering what it holds), then the collector.
 */
public final class LocalStack implements AutoCloseable {

    /**
     * What to start.
     *
     * @param collector        the collector's address, history and alerting
     * @param freePortIfBusy   when the address is taken, listen on a free port instead of failing (the default
     *                         address was not asked for explicitly)
     * @param nvmlLibrary      {@code --nvml-library}, if given
     * @param requireGpus      fail when NVML cannot be used ({@code watch}); else carry on without GPU readings
     * @param attachPid        the run's root process, or null for every compute process of the machine
     * @param runId            the run id, or null to derive one
     * @param spec             the run's spec for the estimate, or null
     * @param log              the run's log to parse for steps, or null
     * @param logFormat        {@code --log-format}
     * @param interval         polling interval
     * @param spoolDir         the agent's spool (its lock keeps two agents apart)
     */
    public record Options(CollectorConfig collector, boolean freePortIfBusy, Optional<Path> nvmlLibrary,
                          boolean requireGpus, Long attachPid, String runId, RunSpec spec, Path log,
                          String logFormat, Duration interval, Path spoolDir) {
    }

    private final CollectorStack collector;
    private final CollectorServer server;
    private final Agent agent;
    private final String gpuProblem;

    private LocalStack(CollectorStack collector, Agent agent, String gpuProblem) {
        this.collector = collector;
        this.server = collector.server();
        this.agent = agent;
        this.gpuProblem = gpuProblem;
    }

    /**
     * Starts both halves: NVML first (so a machine without it fails before anything listens), then the collector,
     * then the agent.
     *
     * @throws GpuUnavailableException when NVML cannot be used and {@code requireGpus} is set
     * @throws CollectorServer.StartException when the collector cannot listen
     * @param log    one-line messages of the collector (alerts raised and resolved, delivery problems)
     * @throws IOException when the agent's spool cannot be used
     */
    public static LocalStack start(Options options, Clock clock, Map<String, String> environment, Consumer<String> log)
            throws GpuUnavailableException, IOException {
        GpuReader gpus;
        String gpuProblem = null;
        try {
            gpus = NvmlGpuReader.open(NvmlLibraryResolver.resolve(options.nvmlLibrary(), environment), clock);
        } catch (GpuUnavailableException e) {
            if (options.requireGpus()) {
                throw e;
            }
            gpuProblem = e.getMessage();
            gpus = new NoGpus(gpuProblem);
        }
        CollectorStack collector = null;
        StepSource steps = null;
        try {
            collector = startCollector(options, clock, log);
            CollectorServer server = collector.server();
            steps = options.log() == null ? null : LogTailer.open(options.log(), options.logFormat(), clock);
            AgentConfig config = new AgentConfig(server.clientUri(), hostName(), options.attachPid(), options.runId(),
                    options.spec(), options.interval(), null, options.spoolDir(), AgentConfig.DEFAULT_SPOOL_MAX_BYTES,
                    Duration.ofSeconds(5));
            Agent agent = Agent.create(config, gpus, steps, LinuxProcSource.system(), clock);
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

    /** The collector as 'trainwatch collector' runs it: history under --data-dir, alert delivery, calibration. */
    private static CollectorStack startCollector(Options options, Clock clock, Consumer<String> log) {
        CollectorConfig config = options.collector().withClock(clock);
        try {
            return CollectorStack.start(config, log);
        } catch (CollectorServer.StartException e) {
            if (!options.freePortIfBusy()) {
                throw e;
            }
            // Most likely another collector already has the default port: watching must not fail for that.
            return CollectorStack.start(config.withListen(config.host(), 0), log);
        }
    }


    public static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    /** The page (and API root). */
    public URI pageUri() {
        return server.clientUri();
    }

    public Fleet fleet() {
        return server.fleet();
    }

    public CollectorServer server() {
        return server;
    }

    public CollectorStack collector() {
        return collector;
    }

    /** Why there are no GPU readings, or null when NVML works. */
    public String gpuProblem() {
        return gpuProblem;
    }

    /** True once the attached run has ended. */
    public boolean attachedRunEnded() {
        return agent.attachedRunEnded();
    }

    /** Polls once now (e.g. right after the run ended, so its last steps reach the collector). */
    public void pollNow() throws IOException {
        agent.pollOnce();
    }

    /** Stops the agent, delivering what it holds to the collector (which keeps running). Idempotent. */
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
