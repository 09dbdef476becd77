package dev.trainwatch.agent;

import dev.trainwatch.agent.attribution.Attributor;
import dev.trainwatch.agent.attribution.ProcSource;
import dev.trainwatch.agent.export.NodeReadings;
import dev.trainwatch.agent.failure.FailureClassifier;
import dev.trainwatch.agent.failure.OutputTail;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.log.BackgroundStepSource;
import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.agent.ship.AgentIdentity;
import dev.trainwatch.agent.ship.Backoff;
import dev.trainwatch.agent.ship.FanOutShipper;
import dev.trainwatch.agent.ship.HttpTransport;
import dev.trainwatch.agent.ship.Payload;
import dev.trainwatch.agent.ship.Shipper;
import dev.trainwatch.agent.ship.Sleeper;
import dev.trainwatch.agent.ship.Spool;
import dev.trainwatch.agent.ship.TokenFile;
import dev.trainwatch.agent.ship.Transport;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunEnding;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.ShipUrgency;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SSLSocketFactory;

/**
 * The agent's loop: every interval, read the GPUs, NVML events and the log's new steps, attribute GPUs to runs, and
 * hand one batch to the {@link Shipper} (its own thread, or the spool). Owns what it is given; {@link #pollOnce()}
 * runs on the poll thread (or a test), {@link #close()} from any thread.
 */
public final class Agent implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Agent.class.getName());

    /** Steps kept while no run is known to send them to. */
    static final int MAX_PENDING_STEPS = 10_000;

    private final AgentConfig config;
    private final GpuReader gpus;
    private StepSource steps;
    private final Attributor attributor;
    private final AgentIdentity identity;
    private final FanOutShipper shipper;
    private final Clock clock;
    private final Thread pollThread;
    private final Deque<StepEvent> pendingSteps = new ArrayDeque<>();
    private final Set<String> specSentFor = new HashSet<>();
    private final NodeReadings readings;

    private String stepRunId;
    private String lastStepProblem;
    private boolean warnedAmbiguousSteps;
    private long pollFailures;
    private boolean closed;

    /**
     * One transport per {@link AgentConfig#collectors()}, in order; {@code steps} null when no log is followed.
     * IllegalStateException when another agent holds the spool.
     */
    public Agent(AgentConfig config, GpuReader gpus, StepSource steps, ProcSource proc, List<Transport> transports,
                 Backoff backoff, Sleeper sleeper, Clock clock) throws IOException {
        this.config = config;
        this.pollsPerBatch = pollsPerBatch(config);
        this.urgency = new ShipUrgency(config.interval().toNanos(), pollsPerBatch > 1);
        this.gpus = gpus;
        this.steps = steps;
        this.clock = clock;
        this.attributor = new Attributor(proc, config.host(), config.attachPid(), config.runId());
        this.readings = new NodeReadings(config.host());
        this.proc = proc;
        // A spool directory that cannot be written is one line and the agent goes on in memory: a full disk must
        // not leave a node unmonitored. Only another agent holding the directory stops it.
        this.identity = AgentIdentity.openOrInMemory(config.spoolDir(), config.host());
        try {
            List<Shipper> shippers = new ArrayList<>();
            List<String> names = new ArrayList<>();
            List<URI> collectors = config.collectors();
            for (int i = 0; i < transports.size(); i++) {
                Spool spool = new Spool(FanOutShipper.spoolDir(config.spoolDir(), i), config.spoolMaxBytes());
                shippers.add(new Shipper(transports.get(i), spool, backoff, sleeper));
                names.add(i < collectors.size() ? String.valueOf(collectors.get(i)) : "collector " + (i + 1));
            }
            this.shipper = new FanOutShipper(shippers, names);
            if (steps != null && !identity.inMemory()) {
                steps.keepPositionsIn(config.spoolDir());
            }
        } catch (RuntimeException e) {
            identity.close();
            throw e;
        }
        this.pollThread = new Thread(this::pollLoop, "trainwatch-poll");
        this.pollThread.setDaemon(true);
    }

    /** The production agent: HTTP to the collector, bearer token from the configured file. */
    public static Agent create(AgentConfig config, GpuReader gpus, StepSource steps, ProcSource proc, Clock clock)
            throws IOException {
        TokenFile token = config.tokenFile() != null ? TokenFile.read(config.tokenFile()) : null;
        List<Transport> transports = new ArrayList<>();
        SSLSocketFactory tls = config.tls().configured() ? config.tls().socketFactory() : null;
        for (URI collector : config.collectors()) {
            transports.add(new HttpTransport(collector, token, Duration.ofSeconds(10), clock, tls));
        }
        Backoff backoff = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30),
                () -> ThreadLocalRandom.current().nextDouble());
        return new Agent(config, gpus, steps, proc, transports, backoff, Sleeper.system(), clock);
    }

    /** The node's newest readings, for its own exporter ({@code --listen}); updated after every poll. */
    public NodeReadings readings() {
        return readings;
    }

    public String agentId() {
        return identity.agentId();
    }

    /** Starts delivering (a previous agent's spool first), reading the log on its own thread, and polling. */
    public void start() {
        shipper.start();
        synchronized (this) {
            if (steps != null && !(steps instanceof BackgroundStepSource)) {
                // The log is read on a thread of its own: a FIFO, a hung mount or a slow disk never holds up the GPUs.
                BackgroundStepSource background = new BackgroundStepSource(steps, config.interval(),
                        config.interval().multipliedBy(5).compareTo(STUCK_READ_MIN) > 0
                                ? config.interval().multipliedBy(5) : STUCK_READ_MIN);
                background.start();
                steps = background;
            }
        }
        pollThread.start();
    }

    /**
     * Polls on the interval's grid until {@link #close()}; missed polls are skipped, not made up. A thread of its own,
     * not a ScheduledThreadPoolExecutor, whose never-returning worker loop the JVM ran interpreted for 90 minutes.
     */
    private void pollLoop() {
        long period = config.interval().toNanos();
        long next = System.nanoTime();
        while (!stopPolling) {
            next = pollAt(next, period);
        }
    }

    /** Waits for {@code next}, polls, and returns when the one after is due. */
    private long pollAt(long next, long period) {
        long wait;
        while ((wait = next - System.nanoTime()) > 0 && !stopPolling) {
            // An interrupt status left set (a library restoring one it caught) would make every park return at
            // once and the loop spin; nothing interrupts this thread on purpose (close() unparks it).
            Thread.interrupted();
            LockSupport.parkNanos(this, wait);
        }
        if (stopPolling) {
            return next;
        }
        pollSafely();
        long after = next + period;
        long now = System.nanoTime();
        if (now - after > period) {
            after = now; // overran by more than an interval: on from now, the missed polls skipped
        }
        return after;
    }

    private volatile boolean stopPolling;

    /** A log read that has not returned after this long is reported (and released, for a FIFO). */
    static final Duration STUCK_READ_MIN = Duration.ofSeconds(5);

    private void pollSafely() {
        try {
            pollOnce();
        } catch (RuntimeException | IOException | OutOfMemoryError | StackOverflowError | LinkageError e) {
            // A throwing poll would end the poll thread: log and keep polling.
            synchronized (this) {
                pollFailures++;
            }
            LOG.log(System.Logger.Level.ERROR, "poll failed: " + e);
        }
    }

    public synchronized void pollOnce() throws IOException {
        if (closed) {
            return;
        }
        long startNanos = System.nanoTime();
        commitShippedSteps();
        double ts = clock.millis() / 1000.0;
        List<GpuSample> samples = gpus.readAll();
        List<AgentEvent> events = new ArrayList<>(gpus.drainEvents());
        Attributor.Update update = attributor.update(samples, ts);
        List<StepEvent> newSteps = steps != null ? steps.poll() : List.of();
        Object readUpTo = steps != null ? steps.checkpoint() : null;
        reportStepProblem();
        if (steps != null) {
            String phaseRun = config.runId() != null ? config.runId() : stepRunId;
            for (AgentEvent e : steps.drainEvents()) {
                if (phaseRun != null) {
                    events.add(e.withRunId(phaseRun));
                }
            }
        }
        for (AgentEvent event : update.events()) {
            if (!Attributor.RUN_ENDED.equals(event.kind()) || event.runId() == null) {
                events.add(event);
                continue;
            }
            Path log = steps != null && steps.file() != null
                    && event.runId().equals(config.runId() != null ? config.runId() : stepRunId) ? steps.file() : null;
            List<String> tail = log != null ? OutputTail.read(log, ATTACHED_TAIL_LINES, OutputTail.MAX_BYTES) : List.of();
            Optional<RunFailure> failure = attachedFailure(tail);
            List<String> outputs = event.ending() == null ? List.of() : event.ending().outputs().stream()
                    .filter(o -> log == null || !Path.of(o).equals(log.toAbsolutePath().normalize()))
                    .toList();
            String last = tail.isEmpty() ? null : tail.get(tail.size() - 1);
            events.add(new AgentEvent(event.ts(), event.kind(), event.gpuUuid(), event.xid(), event.runId(),
                    event.message(), null, new RunEnding(
                            log == null ? null : log.toAbsolutePath().normalize().toString(), failure.isPresent(),
                            last == null ? null : last.length() <= 500 ? last : last.substring(0, 499) + "…",
                            outputs), null, null));
            failure.ifPresent(f -> events.add(new AgentEvent(ts, "run_failed", null, null, event.runId(), f.summary(),
                    f, null, null, null)));
        }
        double pollSeconds = (System.nanoTime() - startNanos) / 1e9;
        lastPollSeconds = pollSeconds;
        holdSteps(newSteps);
        if (readUpTo != null) {
            uncommitted = readUpTo; // committed only once the held steps are safe (commitShippedSteps)
        }
        HostMemory memory = hostMemory(ts);
        if (readings.served()) {
            readings.update(samples, update.runs(), memory, events); // the node's own /metrics (--listen)
        }

        // Readings of several polls travel together (--ship-every), but never across a change of which GPUs belong
        // to which run: the collector applies a batch's attribution to all its readings.
        List<String> shape = shape(update.runs());
        if (heldPolls > 0 && (!shape.equals(heldShape) || heldSamples.size() + samples.size() > MAX_HELD_READINGS)) {
            flush();
        }
        heldSamples.addAll(samples);
        heldEvents.addAll(events);
        if (memory != null) {
            heldHostMemory = memory;
        }
        heldRuns = update.runs();
        heldShape = shape;
        heldPolls++;
        // The first poll goes at once, as do a run that appears, moves or ends, an event, and what ShipUrgency finds
        // (hardware slowdown, a NaN loss, data starvation, a larger bucket): holding them would delay their verdicts.
        boolean urgentReadings = urgency.urgent(samples, newSteps); // every poll: it follows the reports
        boolean urgent = urgentReadings || !events.isEmpty() || !shape.equals(shippedShape);
        if (urgent || heldPolls >= pollsPerBatch) {
            flush();
        }
    }

    /** Readings one batch carries at most: half the collector's default limit of 4,096 per batch. */
    static final int MAX_HELD_READINGS = 2048;

    /** The polls whose readings one batch carries: {@code shipEvery / interval}, at least one. */
    static int pollsPerBatch(AgentConfig config) {
        return (int) Math.max(1, Math.round(config.shipEvery().toNanos() / (double) config.interval().toNanos()));
    }

    private final int pollsPerBatch;
    /** What in a poll's readings and step reports goes at once. */
    private final ShipUrgency urgency;
    private final List<GpuSample> heldSamples = new ArrayList<>();
    private final List<AgentEvent> heldEvents = new ArrayList<>();
    private List<RunAttribution> heldRuns = List.of();
    private List<String> heldShape = List.of();
    /** The shape of the runs in the last batch sent, null before the first. */
    private List<String> shippedShape;
    private HostMemory heldHostMemory;
    private int heldPolls;
    private double lastPollSeconds;

    /** Which GPUs belong to which run and whether it ended: what the collector attributes readings by. */
    private static List<String> shape(List<RunAttribution> runs) {
        if (runs.isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>(runs.size());
        for (RunAttribution run : runs) {
            out.add(run.runId() + '\n' + run.gpuUuids() + '\n' + Boolean.TRUE.equals(run.ended()));
        }
        out.sort(null);
        return out;
    }

    /** Sends one batch of what the polls since the last one read, then the run's spec when new, then the steps. */
    private void flush() throws IOException {
        if (heldPolls == 0) {
            return;
        }
        String problem = currentProblem();
        AgentHealth health = new AgentHealth(lastPollSeconds, gpus.failedReads() + pollFailures, shipper.pending(),
                shipper.spoolBytes(), shipper.dropped(), Durations.seconds(config.interval()), shipper.alive(),
                shipper.spoolInMemory() || identity.inMemory(), shipper.rejectedSpoolEntries(),
                shipper.deliveryErrors(), steps == null ? null : steps.problem() == null, problem);
        // A collector that takes steps in batches gets the run's steps in this batch: one request, judged once.
        List<RunSteps> carried = null;
        if (!pendingSteps.isEmpty() && shipper.collectorTakesSteps() && stepRun(heldRuns) != null) {
            carried = List.of(new RunSteps(stepRunId, List.copyOf(pendingSteps)));
            pendingSteps.clear();
        }
        AgentBatch batch = new AgentBatch(config.host(), identity.agentId(), identity.nextSeq(),
                List.copyOf(heldSamples), heldRuns, List.copyOf(heldEvents), health, heldHostMemory,
                clock.millis() / 1000.0, carried);
        heldSamples.clear();
        heldEvents.clear();
        heldHostMemory = null;
        heldPolls = 0;
        shippedShape = heldShape;
        if (carried != null) {
            unsettledSteps.incrementAndGet();
            shipper.submit(Payload.samples(batch), unsettledSteps::decrementAndGet);
        } else {
            shipper.submit(Payload.samples(batch));
        }
        shipSpec(heldRuns);
        shipSteps(heldRuns);
    }

    private String currentProblem() {
        String delivery = shipper.problem();
        return delivery != null || steps == null ? delivery : steps.problem();
    }

    /** Step shipments submitted and not yet delivered, refused, written to disk or dropped. */
    private final AtomicInteger unsettledSteps = new AtomicInteger();
    /** Where the log stood after the steps last taken from it, until it is committed. */
    private Object uncommitted;

    /**
     * Commits where the log stood once every step read up to there is delivered or spooled, so a restarted agent
     * resumes after them (lines read again after a crash are de-duplicated by the collector).
     */
    private void commitShippedSteps() {
        if (uncommitted != null && steps != null && pendingSteps.isEmpty() && unsettledSteps.get() == 0) {
            steps.commit(uncommitted);
            uncommitted = null;
        }
    }

    private final ProcSource proc;
    private double lastHostMemoryTs = Double.NEGATIVE_INFINITY;

    /** The node's memory, read at most every 5 s (a trend needs no more; meminfo is one small file). */
    private HostMemory hostMemory(double ts) {
        if (ts - lastHostMemoryTs < HOST_MEMORY_EVERY_SECONDS) {
            return null;
        }
        lastHostMemoryTs = ts;
        return proc.hostMemory(ts).orElse(null);
    }

    static final double HOST_MEMORY_EVERY_SECONDS = 5;

    /** Lines at the end of an attached run's log that may explain its end: a crash prints its cause last. */
    static final int ATTACHED_TAIL_LINES = 60;

    /**
     * Why an attached run whose processes vanished failed, when the end of its log names a cause: without an exit
     * status, a log that ends without an error is a finished run.
     */
    static Optional<RunFailure> attachedFailure(Path log) {
        return attachedFailure(OutputTail.read(log, ATTACHED_TAIL_LINES, OutputTail.MAX_BYTES));
    }

    private static Optional<RunFailure> attachedFailure(List<String> tail) {
        if (tail.isEmpty()) {
            return Optional.empty();
        }
        try {
            RunFailure f = FailureClassifier.classify(tail, null);
            return "unknown".equals(f.cause()) ? Optional.empty() : Optional.of(f);
        } catch (RuntimeException bug) {
            // The post-mortem must never cost the batch that carries the run's end.
            return Optional.empty();
        }
    }

    /** Reads a run's spec from its trainer's command line when the agent was given none (null: never). */
    public synchronized void readSpecsFrom(CommandLineSpecs specs) {
        this.commandLineSpecs = specs;
    }

    private CommandLineSpecs commandLineSpecs;
    /** Runs whose processes' command lines were read, once each. */
    private final Set<String> specRead = new HashSet<>();

    private void shipSpec(List<RunAttribution> runs) {
        if (config.runSpec() == null) {
            runs.forEach(this::specFromCommandLine);
            return;
        }
        for (RunAttribution run : runs) {
            if (!Boolean.TRUE.equals(run.ended()) && (config.runId() == null || config.runId().equals(run.runId()))
                    && specSentFor.add(run.runId())) {
                shipper.submit(Payload.runSpec(run.runId(), config.runSpec()));
            }
        }
        if (config.runId() != null && specSentFor.add(config.runId())) {
            shipper.submit(Payload.runSpec(config.runId(), config.runSpec()));
        }
    }

    private void specFromCommandLine(RunAttribution run) {
        if (Boolean.TRUE.equals(run.ended())) {
            specRead.remove(run.runId());
            return;
        }
        if (commandLineSpecs == null || !specRead.add(run.runId())) {
            return;
        }
        for (long pid : run.pids()) {
            List<String> argv = proc.commandLine(pid);
            Optional<CommandLineSpecs.Found> found = argv.isEmpty() ? Optional.empty()
                    : commandLineSpecs.read(argv, proc.cwd(pid).orElse(Path.of("/")), proc.environment(pid));
            if (found.isEmpty()) {
                continue;
            }
            String notes = found.get().notes().isEmpty() ? "" : " (" + String.join("; ", found.get().notes()) + ")";
            if (found.get().spec() == null || found.get().spec().model() == null) {
                LOG.log(System.Logger.Level.WARNING, "run " + run.runId() + ": no prediction from the command line of"
                        + " process " + pid + notes);
            } else {
                LOG.log(System.Logger.Level.INFO, "run " + run.runId() + ": spec read from the command line of process "
                        + pid + notes);
                specSentFor.add(run.runId());
                List<String> said = found.get().spec().notes();
                // the collector takes 32 notes of 500 characters: a longer path must not cost the spec
                shipper.submit(Payload.runSpec(run.runId(), found.get().spec().withNotes(said == null ? null
                        : said.stream().limit(32).map(n -> n.length() <= 500 ? n : n.substring(0, 499) + "…").toList())));
            }
            return;
        }
    }

    /**
     * Steps go to the --run-id run, else the attached run, else the node's only run; while none qualifies they wait
     * (bounded), so steps logged before the run touched a GPU are not lost.
     */
    private void holdSteps(List<StepEvent> newSteps) {
        pendingSteps.addAll(newSteps);
        while (pendingSteps.size() > MAX_PENDING_STEPS) {
            pendingSteps.removeFirst();
        }
    }

    private void shipSteps(List<RunAttribution> runs) {
        if (stepRun(runs) != null && !pendingSteps.isEmpty()) {
            unsettledSteps.incrementAndGet();
            shipper.submit(Payload.steps(stepRunId, List.copyOf(pendingSteps), identity.agentId()),
                    unsettledSteps::decrementAndGet);
            pendingSteps.clear();
        }
    }

    /** The run the log's steps go to ({@link #holdSteps}), remembered in {@code stepRunId}; null while none. */
    private String stepRun(List<RunAttribution> runs) {
        String runId = config.runId();
        if (runId == null) {
            // A loop, not a stream: this runs on every poll and batch, and C1 compiles a stream's pipeline poorly.
            int live = 0;
            String only = null;
            for (RunAttribution r : runs) {
                if (!Boolean.TRUE.equals(r.ended())) {
                    live++;
                    only = r.runId();
                }
            }
            if (live == 1) {
                runId = only;
            } else if (live > 1 && config.attachPid() == null && !pendingSteps.isEmpty()
                    && !warnedAmbiguousSteps) {
                warnedAmbiguousSteps = true;
                LOG.log(System.Logger.Level.WARNING, live + " runs on this node; pass --attach PID or "
                        + "--run-id ID to say which one the log belongs to (steps are held until then)");
            }
        }
        if (runId != null) {
            stepRunId = runId;
        }
        return stepRunId;
    }

    private void reportStepProblem() {
        if (steps == null) {
            return;
        }
        String problem = steps.problem();
        if (problem != null && !problem.equals(lastStepProblem)) {
            LOG.log(System.Logger.Level.WARNING, problem);
        }
        lastStepProblem = problem;
    }

    public long pending() {
        return shipper.pending();
    }

    public long dropped() {
        return shipper.dropped();
    }

    /** True once the attached run has ended (never without --attach). */
    public synchronized boolean attachedRunEnded() {
        return attributor.attachedRunEnded();
    }

    /** Stops polling, delivers or spools what is queued (within the flush timeout), releases everything. */
    @Override
    public void close() {
        stopPolling = true;
        LockSupport.unpark(pollThread);
        if (pollThread.isAlive() && Thread.currentThread() != pollThread) {
            try {
                pollThread.join(config.interval().toMillis() + 5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                flush(); // what the last polls read goes with the rest
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "the last readings could not be queued: " + e);
            }
        }
        try {
            shipper.close(config.flushTimeout());
            synchronized (this) {
                commitShippedSteps();
            }
        } finally {
            identity.close();
            try {
                gpus.close();
            } finally {
                if (steps != null) {
                    steps.close();
                }
            }
        }
    }
}
