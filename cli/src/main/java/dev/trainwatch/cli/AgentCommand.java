package dev.trainwatch.cli;

import dev.trainwatch.protocol.MonotonicClock;
import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.agent.Agent;
import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.agent.export.NodeExporter;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.agent.Durations;
import dev.trainwatch.agent.GpuReaders;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.attribution.RunIds;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.agent.log.LogTailer;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.agent.ship.SpoolReplay;
import dev.trainwatch.agent.ship.TokenFile;
import dev.trainwatch.agent.ship.ClientTls;
import dev.trainwatch.cli.watch.LocalStack;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code trainwatch agent}: polls the node's GPUs, attributes them to runs, follows a run's log and ships batches
 * to a collector until stopped (SIGTERM or Ctrl-C deliver or spool what is queued first), or until the attached run
 * has ended. {@code --once} prints one sample of every GPU and exits.
 */
@Command(name = "agent", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Polls this node's GPUs through NVML, finds which runs use them, reads step times from a "
                + "run's log, and ships everything to a collector; spools to disk while the collector is away.",
                "With --once, prints one sample of every GPU and exits."})
final class AgentCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--collector", paramLabel = "URL",
            description = "The collector, e.g. http://127.0.0.1:9477. Repeat it to ship to a pair of collectors"
                    + " (both judge the same runs; each has its own spool while it is away).")
    List<String> collector;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Serve this node's per-GPU and host series on http://HOST:PORT/metrics (the collector's"
                    + " names and labels), one Prometheus target per node as dcgm-exporter is; e.g. 0.0.0.0:9478."
                    + " Default: no listener.")
    String listen;

    @Option(names = "--attach", paramLabel = "PID", converter = PidConverter.class,
            description = "Watch this process and its descendants (e.g. torchrun's PID); exit when they have all "
                    + "exited. Default: every compute process on the node.")
    Long attachPid;

    /** The defaults of the options below, also what {@link AgentFastPath} sets when an option is not given. */
    static final String DEFAULT_LOG_FORMAT = "auto";
    static final String DEFAULT_INTERVAL = "1s";
    static final String DEFAULT_SPOOL_MAX_MB = "256";
    static final String DEFAULT_LOG_TIME = "read";

    @Option(names = "--log", paramLabel = "FILE", description = "The run's log to read step times from.")
    Path log;

    @Option(names = "--log-format", paramLabel = "FORMAT", defaultValue = DEFAULT_LOG_FORMAT,
            description = "auto, pixart, sana, dit, opensora, accelerate, or a regular expression with named groups "
                    + "(step required). Default: ${DEFAULT-VALUE}.")
    String logFormat;

    @Option(names = "--run-id", paramLabel = "ID",
            description = "The run's id. Default: TORCHELASTIC_RUN_ID or SLURM_JOB_ID of the run's processes, else "
                    + "derived from the root process.")
    String runId;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = DEFAULT_INTERVAL,
            description = "Polling interval, at least 100ms (e.g. 500ms, 1s, 2.5s). Default: ${DEFAULT-VALUE}.")
    String interval;

    @Option(names = "--ship-every", paramLabel = "DURATION",
            description = "Send the readings to the collector this often, up to 10s (e.g. 5s: five 1-Hz readings "
                    + "per GPU in one batch, a fifth of the requests). XID and other events, a run that starts or "
                    + "ends, and a loss that turns NaN or inf are sent at once. Default: every poll.")
    String shipEvery;

    @Option(names = "--nvml-library", paramLabel = "PATH",
            description = "The NVML library file. Default: $TRAINWATCH_NVML_LIBRARY, else the system's "
                    + "libnvidia-ml.so.1.")
    Path nvmlLibrary;

    @Option(names = "--token-file", paramLabel = "FILE", description = "File holding the collector's bearer token.")
    Path tokenFile;

    @Option(names = "--ca-file", paramLabel = "FILE",
            description = "With an https:// collector: PEM certificates of the CAs its certificate must chain to."
                    + " Default: the JDK's trusted CAs.")
    Path caFile;

    @Option(names = "--cert-file", paramLabel = "FILE",
            description = "With an https:// collector that asks for client certificates (mutual TLS): this agent's"
                    + " PEM certificate chain. Needs --key-file.")
    Path certFile;

    @Option(names = "--key-file", paramLabel = "FILE",
            description = "The PEM private key (PKCS#8) of --cert-file.")
    Path keyFile;

    @Option(names = "--spool-dir", paramLabel = "DIR",
            description = "Where batches wait while the collector is away, and the agent's id. "
                    + "Default: $XDG_STATE_HOME/trainwatch/spool or ~/.local/state/trainwatch/spool.")
    Path spoolDir;

    @Option(names = "--spool-max-mb", paramLabel = "MB", defaultValue = DEFAULT_SPOOL_MAX_MB,
            description = "Bound of the spool; the oldest batches are dropped beyond it. Default: ${DEFAULT-VALUE}.")
    long spoolMaxMb;

    @Option(names = "--host", paramLabel = "NAME", description = "This node's name in batches. Default: the host name.")
    String host;

    @Option(names = "--log-time", paramLabel = "SOURCE", defaultValue = DEFAULT_LOG_TIME,
            description = "Where a step's time comes from: read (when the agent read the line; the log's own time "
                    + "stamps give only the intervals between lines, so a log in another time zone or from a machine "
                    + "with another clock is fine) or log (the line's own time stamp, for replaying a log whose times "
                    + "are right). Default: ${DEFAULT-VALUE}.")
    String logTime;

    @Option(names = "--once", description = "Print one sample of every GPU and exit.")
    boolean once;

    @Option(names = "--json", description = "With --once: print the samples as a JSON array (the 'gpus' of a batch).")
    boolean json;

    @Option(names = "--replay-spool", paramLabel = "DIR",
            description = "Send the batches an agent left in DIR (its --spool-dir, e.g. brought back from a machine "
                    + "without network) to --collector, in order, and exit; delivered entries are deleted from DIR.")
    Path replaySpool;

    /** How long {@code --replay-spool} waits for the collector to take the whole spool. */
    static final Duration REPLAY_TIMEOUT = Duration.ofMinutes(2);

    /** The launcher's one-off run that makes the class-data sharing archive (see {@link AgentClassTraining}). */
    @Option(names = "--cds-training", hidden = true)
    boolean cdsTraining;

    @Override
    public Integer call() throws InterruptedException {
        if (cdsTraining) {
            try {
                return AgentClassTraining.run(nvmlLibrary);
            } catch (IOException e) {
                throw new UserError(ExitCodes.FAILURE, "--cds-training: " + e.getMessage());
            }
        }
        Duration pollInterval = UserError.duration("--interval", interval, AgentConfig.MIN_INTERVAL, null,
                message -> new UserError(ExitCodes.USAGE, message));
        Duration sendInterval = parseShipEvery(pollInterval);
        if (log != null) {
            LogFormats.check(logFormat);
        }
        if (replaySpool != null) {
            return replay(parseCollectors().get(0));
        }
        if (once) {
            try (GpuReader reader = openGpus(nvmlLibrary)) {
                printOnce(out(), reader.readAll());
            }
            return ExitCodes.OK;
        }
        // Taken first thing: a SIGTERM while the agent starts (NVML, the spool) is an orderly stop too, exit 0.
        CountDownLatch stopped = new CountDownLatch(1);
        StopSignals.install(stopped::countDown);
        List<URI> collectorUris = parseCollectors();
        LogTailer.LineTime lineTime = parseLogTime();
        if (attachPid != null && ProcessHandle.of(attachPid).isEmpty()) {
            throw new UserError(ExitCodes.USAGE, "--attach: no process with PID " + attachPid);
        }
        if (runId != null && !runId.equals(RunIds.safe(runId))) {
            throw new UserError(ExitCodes.USAGE, "--run-id: '" + runId + "' is not a run id the collector takes"
                    + " (A-Z a-z 0-9 _ . : -, at most 128 characters, not . or ..); for example " + RunIds.safe(runId));
        }
        if (spoolMaxMb <= 0) {
            throw new UserError(ExitCodes.USAGE, "--spool-max-mb must be positive");
        }
        checkTokenFile();
        AgentConfig config = new AgentConfig(collectorUris.get(0), host != null ? host : LocalStack.hostName(), attachPid,
                runId, null, pollInterval, tokenFile, spoolDir != null ? spoolDir : AgentConfig.defaultSpoolDir(),
                spoolMaxMb << 20, Duration.ofSeconds(5), sendInterval, clientTls(collectorUris),
                collectorUris.subList(1, collectorUris.size()));
        Clock clock = MonotonicClock.system();
        GpuReader reader = openGpus(nvmlLibrary);
        StepSource steps = null;
        Agent agent;
        try {
            steps = log != null ? LogTailer.open(log, logFormat, clock, LogTailer.DEFAULT_HISTORY_BYTES, lineTime)
                    : null;
            agent = Agent.create(config, reader, steps, LinuxProcSource.system(), clock);
            agent.readSpecsFrom(LocalStack.trainerSpecs());
        } catch (IllegalArgumentException e) {
            closeQuietly(reader, steps);
            throw new UserError(ExitCodes.USAGE, "--log-format: " + e.getMessage());
        } catch (IOException | IllegalStateException e) {
            closeQuietly(reader, steps);
            throw new UserError(ExitCodes.FAILURE, e.getMessage());
        }
        return runUntilStopped(agent, pollInterval, sendInterval, stopped);
    }

    /** {@code --replay-spool}: the spool delivered through the agent's own shipper, one line on the outcome. */
    private int replay(URI collectorUri) throws InterruptedException {
        checkTokenFile();
        SpoolReplay.Outcome outcome;
        try {
            TokenFile token = tokenFile != null ? TokenFile.read(tokenFile) : null;
            outcome = SpoolReplay.replay(replaySpool, collectorUri, token, REPLAY_TIMEOUT);
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--replay-spool: " + e.getMessage());
        } catch (IOException e) {
            throw new UserError(ExitCodes.USAGE, "--token-file: " + e.getMessage());
        }
        String counts = outcome.delivered() + " of " + outcome.shipments() + " shipments delivered to " + collectorUri
                + (outcome.dropped() > 0 ? ", " + outcome.dropped() + " refused" : "");
        if (!outcome.complete()) {
            throw new UserError(ExitCodes.FAILURE, "--replay-spool: " + counts + "; the rest was not taken within "
                    + REPLAY_TIMEOUT.toSeconds() + " s" + (outcome.problem() != null ? ": " + outcome.problem() : ""));
        }
        PrintWriter out = out();
        out.println("replayed " + counts);
        out.flush();
        return outcome.dropped() > 0 ? ExitCodes.FAILURE : ExitCodes.OK;
    }

    /** Standard output: picocli's, or System.out when {@link AgentFastPath} set the command up (spec null). */
    private PrintWriter out() {
        return spec != null ? spec.commandLine().getOut() : new PrintWriter(System.out, true);
    }

    private void checkTokenFile() {
        if (tokenFile != null && !Files.isReadable(tokenFile)) {
            throw new UserError(ExitCodes.USAGE, "--token-file: cannot read " + tokenFile);
        }
    }

    /** {@code --ca-file}, {@code --cert-file}, {@code --key-file}: for an https:// collector only, checked now. */
    private ClientTls clientTls(List<URI> collectorUris) {
        if (caFile == null && certFile == null && keyFile == null) {
            return ClientTls.NONE;
        }
        for (URI collectorUri : collectorUris) {
            if (!"https".equalsIgnoreCase(collectorUri.getScheme())) {
                throw new UserError(ExitCodes.USAGE, "--ca-file, --cert-file and --key-file are for https:// collectors;"
                        + " --collector " + collectorUri + " is not");
            }
        }
        try {
            ClientTls tls = new ClientTls(caFile, certFile, keyFile);
            tls.socketFactory();
            return tls;
        } catch (IllegalArgumentException | IOException e) {
            throw new UserError(ExitCodes.USAGE, e.getMessage());
        }
    }

    private LogTailer.LineTime parseLogTime() {
        return switch (logTime.strip().toLowerCase(Locale.ROOT)) {
            case "read" -> LogTailer.LineTime.READ;
            case "log" -> LogTailer.LineTime.LOG;
            default -> throw new UserError(ExitCodes.USAGE, "--log-time: '" + logTime + "' is neither read nor log");
        };
    }

    /**
     * Runs the agent until SIGTERM/SIGINT or the attached run's end. The signals are taken from the JVM so the agent
     * stops in order and exits 0; under -Xrs the shutdown hook still stops it.
     */
    private int runUntilStopped(Agent agent, Duration pollInterval, Duration sendInterval, CountDownLatch stopped)
            throws InterruptedException {
        Thread hook = new Thread(() -> {
            agent.close();
            stopped.countDown();
        }, "trainwatch-agent-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        NodeExporter exporter = null;
        try {
            if (stopped.getCount() == 0) {
                return ExitCodes.OK; // stopped while starting: nothing polled yet, nothing to deliver
            }
            exporter = startExporter(agent);
            agent.start();
            System.getLogger(AgentCommand.class.getName()).log(System.Logger.Level.INFO,
                    "agent " + agent.agentId() + " polling every " + pollInterval.toMillis() + "ms, shipping to "
                            + String.join(" and ", collector) + (sendInterval.equals(pollInterval) ? "" : " every "
                            + Durations.text(sendInterval)));
            // Only an attached run's end needs looking at every interval; otherwise the signal handler (or the
            // shutdown hook) counts the latch down and this thread need not wake every second.
            long checkMillis = attachPid != null ? pollInterval.toMillis() : 60_000;
            while (!stopped.await(checkMillis, TimeUnit.MILLISECONDS)) {
                if (agent.attachedRunEnded()) {
                    System.getLogger(AgentCommand.class.getName()).log(System.Logger.Level.INFO,
                            "the attached run has ended; stopping");
                    break;
                }
            }
        } finally {
            if (exporter != null) {
                exporter.close();
            }
            agent.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // The JVM is already shutting down: the hook runs (and closing twice is harmless).
            }
        }
        return ExitCodes.OK;
    }

    /** The node's own exporter when {@code --listen} names an address, else null; plain HTTP, read-only. */
    private NodeExporter startExporter(Agent agent) {
        if (listen == null) {
            return null;
        }
        CollectorConfig address = CollectorConfig.defaults().withListen(listen); // the one HOST:PORT parser
        try {
            NodeExporter exporter = NodeExporter.start(new InetSocketAddress(address.host(), address.port()),
                    agent.readings(), null);
            System.getLogger(AgentCommand.class.getName()).log(System.Logger.Level.INFO,
                    "serving this node's series on http://" + listen.strip() + "/metrics");
            return exporter;
        } catch (IOException e) {
            throw new UserError(ExitCodes.FAILURE, "--listen " + listen + ": cannot listen there (" + e.getMessage()
                    + ")");
        }
    }

    /** Opens NVML, or says in one line why it cannot be used (exit status 3). */
    static GpuReader openGpus(Path library) {
        try {
            return GpuReaders.openNvml(library, System.getenv(), MonotonicClock.system());
        } catch (GpuUnavailableException e) {
            throw new UserError(ExitCodes.NVML_UNAVAILABLE, e.getMessage());
        }
    }

    /** {@code --ship-every}: at least the polling interval, at most {@link AgentConfig#MAX_SHIP_EVERY}. */
    private Duration parseShipEvery(Duration pollInterval) {
        if (shipEvery == null) {
            return pollInterval;
        }
        try {
            Duration parsed = Durations.parse(shipEvery);
            AgentConfig.checkShipEvery(pollInterval, parsed);
            return parsed;
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--ship-every: " + e.getMessage());
        }
    }

    /** Every {@code --collector}, in order; at least one. */
    private List<URI> parseCollectors() {
        if (collector == null || collector.isEmpty()) {
            throw new UserError(ExitCodes.USAGE, "--collector URL is required (or --once to print one sample)");
        }
        List<URI> uris = new ArrayList<>();
        for (String one : collector) {
            URI uri = parseCollector(one);
            if (uris.contains(uri)) {
                throw new UserError(ExitCodes.USAGE, "--collector " + one + " is given twice");
            }
            uris.add(uri);
        }
        return uris;
    }

    private static URI parseCollector(String collector) {
        if (collector == null || collector.isBlank()) {
            throw new UserError(ExitCodes.USAGE, "--collector URL is required (or --once to print one sample)");
        }
        return CollectorOptions.url("--collector", collector);
    }

    private void printOnce(PrintWriter out, List<GpuSample> samples) {
        if (json) {
            try {
                out.println(Json.MAPPER.writeValueAsString(samples));
            } catch (JsonProcessingException e) {
                throw new UserError(ExitCodes.FAILURE, "cannot write the samples as JSON: " + e.getOriginalMessage());
            }
            out.flush();
            return;
        }
        if (samples.isEmpty()) {
            out.println("no GPUs");
        }
        out.printf("%-3s %-28s %19s %6s %8s %6s %s%n", "GPU", "NAME", "MEMORY USED/TOTAL", "UTIL", "POWER", "TEMP",
                "PROCESSES");
        for (GpuSample gpu : samples) {
            if (Boolean.TRUE.equals(gpu.lost())) {
                out.printf("%-3d %-28s lost%n", gpu.index(), gpu.name());
                continue;
            }
            String memory = gib(gpu.memoryUsedBytes()) + "/" + gib(gpu.memoryTotalBytes()) + " GiB";
            String util = gpu.utilizationRatio() == null ? "-" : Math.round(gpu.utilizationRatio() * 100) + "%";
            String power = gpu.powerWatts() == null ? "-" : String.format(Locale.ROOT, "%.0f W", gpu.powerWatts());
            String temp = gpu.temperatureCelsius() == null ? "-"
                    : String.format(Locale.ROOT, "%.0f C", gpu.temperatureCelsius());
            String processes = gpu.processes() == null ? "?" : gpu.processes().stream()
                    .map(p -> Long.toString(p.pid())).reduce((a, b) -> a + "," + b).orElse("-");
            out.printf("%-3d %-28s %19s %6s %8s %6s %s%n", gpu.index(), gpu.name(), memory, util, power, temp,
                    processes);
        }
        out.flush();
    }

    private static String gib(Long bytes) {
        return bytes == null ? "-" : String.format(Locale.ROOT, "%.1f", bytes / (double) (1L << 30));
    }


    private static void closeQuietly(GpuReader reader, StepSource steps) {
        try {
            reader.close();
        } finally {
            if (steps != null) {
                steps.close();
            }
        }
    }
}
