package dev.trainwatch.agent.ship;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSteps;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPInputStream;

/**
 * Delivers shipments to the collector on its own thread, in submission order. A failure that may pass (unreachable,
 * timeout, 5xx, 408, 429, 401/403) sends it and all behind it to the {@link Spool}, retried with backoff; any other
 * 4xx drops the shipment (logged, counted). Thread-safe: {@link #submit} from the poller, {@link #close} from any.
 */
public final class Shipper implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Shipper.class.getName());

    /** Shipments kept in memory before newer ones go straight to disk (a collector slower than the poll). */
    static final int MEMORY_LIMIT = 16;

    private enum Outcome { DELIVERED, REJECTED, RETRY }

    private final Transport transport;
    private final Spool spool;
    private final Backoff backoff;
    private final Sleeper sleeper;
    private final Object lock = new Object();
    private final Deque<Shipment> memory = new ArrayDeque<>();
    private final Thread thread;

    private long nextOrdinal;
    private long delivered;
    private long rejected;
    private int consecutiveFailures;
    private boolean closing;
    private long flushDeadlineNanos;
    private boolean sleeping;
    private String lastProblem;

    public Shipper(Transport transport, Spool spool, Backoff backoff, Sleeper sleeper) {
        this.transport = transport;
        this.spool = spool;
        this.backoff = backoff;
        this.sleeper = sleeper;
        this.nextOrdinal = spool.maxOrdinal() + 1;
        this.thread = new Thread(this::run, "trainwatch-shipper");
        this.thread.setDaemon(true);
    }

    /** Starts the delivery thread; shipments left in the spool by a previous agent go first. */
    public void start() {
        thread.start();
    }

    /** Queues a payload behind everything submitted before. Never blocks on the network. */
    public void submit(Payload payload) {
        submit(payload, null);
    }

    /**
     * As {@link #submit(Payload)}; {@code settled} runs once when the payload is taken, refused, spooled or dropped.
     * It must be quick and must not call back into the shipper.
     */
    public void submit(Payload payload, Runnable settled) {
        synchronized (lock) {
            Shipment shipment = new Shipment(nextOrdinal++, payload.method(), payload.path(), payload.gzipBody(),
                    payload.what(), new AtomicReference<>(settled),
                    payload.carriesSteps());
            memory.addLast(shipment);
            // Once anything waits on disk, newer shipments go to disk too (order); a backlog in memory is bounded.
            if (!spool.isEmpty() || memory.size() > MEMORY_LIMIT) {
                spillMemory();
            }
            lock.notifyAll();
        }
    }

    /** Shipments waiting (memory and spool). */
    public long pending() {
        synchronized (lock) {
            return memory.size() + (long) spool.depth() + resend.size();
        }
    }

    public long spoolBytes() {
        return spool.bytes();
    }

    /** Shipments lost: dropped from a full spool, refused by the collector as bad (4xx), or not writable to disk. */
    public long dropped() {
        synchronized (lock) {
            return spool.droppedBatches() + rejected;
        }
    }

    /** True while the delivery thread runs (it ends only after {@link #close}). */
    public boolean alive() {
        return thread.isAlive();
    }

    /** Unexpected errors the delivery thread caught and survived, since start. */
    public long deliveryErrors() {
        synchronized (lock) {
            return deliveryErrors;
        }
    }

    /** Spool entries moved aside because they could not be replayed. */
    public long rejectedSpoolEntries() {
        return spool.rejectedEntries();
    }

    /** True while the spool directory cannot be written and shipments wait in memory. */
    public boolean spoolInMemory() {
        return spool.inMemory();
    }

    /** The current delivery problem, one line, or null. */
    public String problem() {
        synchronized (lock) {
            if (lastProblem != null) {
                return lastProblem;
            }
            String memory = spool.memoryReason();
            return memory == null ? null : "cannot write the spool directory " + spool.dir() + " (" + memory + ")";
        }
    }

    /** True once the collector's latest batch answer said it takes steps in batches ({@code steps_accepted}). */
    public boolean collectorTakesSteps() {
        return takesSteps;
    }

    /** Step reports the collector refused in batches ({@code steps_refused}), since start. */
    public long refusedBatchSteps() {
        synchronized (lock) {
            return refusedBatchSteps;
        }
    }

    private volatile boolean takesSteps;
    private long refusedBatchSteps;

    /**
     * What a batch's answer says about its steps. An answer without {@code steps_accepted} is an older collector's: the
     * steps are sent in their own requests and the batch settles after the last of them. Caller holds the lock.
     */
    private void samplesAnswered(Shipment batch, String answer) {
        boolean takes = answer != null && answer.contains("\"steps_accepted\"");
        takesSteps = takes;
        if (takes) {
            int refused = answer.indexOf("\"steps_refused\"");
            if (refused >= 0) {
                refusedBatchSteps++;
                String why;
                try {
                    why = Json.MAPPER.readTree(answer).path("steps_refused").asText();
                } catch (IOException | RuntimeException cut) {
                    why = answer.substring(refused); // the answer's start only
                }
                LOG.log(System.Logger.Level.ERROR, "collector refused the steps in " + batch.what() + ": " + why
                        + " (dropped; the readings were taken)");
            }
            return;
        }
        if (!batch.mayCarrySteps()) {
            return;
        }
        List<RunSteps> groups;
        String agentId;
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(batch.gzipBody()))) {
            JsonNode body = Json.MAPPER.readTree(in);
            JsonNode carried = body == null ? null : body.get("run_steps");
            if (carried == null || !carried.isArray()) {
                return; // a batch without steps (most spooled ones)
            }
            groups = Arrays.asList(Json.MAPPER.treeToValue(carried, RunSteps[].class));
            agentId = body.path("agent_id").asText(null);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot read the steps back from " + batch.what() + " ("
                    + Errors.oneLine(e) + "); they are lost");
            return;
        }
        if (groups == null || groups.isEmpty()) {
            return;
        }
        Runnable settled = batch.settled().getAndSet(null);
        List<Payload> again = groups.stream()
                .filter(g -> g != null && g.runId() != null && g.steps() != null && !g.steps().isEmpty())
                .map(g -> Payload.steps(g.runId(), g.steps(), agentId)).toList();
        if (!olderCollectorLogged) {
            olderCollectorLogged = true;
            LOG.log(System.Logger.Level.INFO, "the collector does not take steps in batches (an older version): "
                    + "sending them in their own requests");
        }
        // Sent next, before anything queued after the batch: the collector counts a log's steps in order, and would
        // drop these as old if a later step of the same log came first. They take the batch's place in the order.
        for (int i = 0; i < again.size(); i++) {
            Payload p = again.get(i);
            resend.addLast(new Shipment(batch.ordinal(), p.method(), p.path(), p.gzipBody(), p.what()
                    + " (again: the collector ignored them in " + batch.what() + ")",
                    new AtomicReference<>(i == again.size() - 1 ? settled : null), false));
        }
        if (again.isEmpty() && settled != null) {
            settled.run();
        }
    }

    /** Steps an older collector ignored in a batch, sent before anything else (see {@link #samplesAnswered}). */
    private final Deque<Shipment> resend = new ArrayDeque<>();

    private boolean olderCollectorLogged;

    /** Shipments the collector took. */
    public long delivered() {
        synchronized (lock) {
            return delivered;
        }
    }

    /** Tries to deliver what is queued for up to {@code flush}, then spools the rest. Idempotent. */
    @Override
    public void close() {
        close(Duration.ofSeconds(5));
    }

    public void close(Duration flush) {
        synchronized (lock) {
            if (!closing) {
                closing = true;
                flushDeadlineNanos = System.nanoTime() + flush.toNanos();
            }
            if (sleeping) {
                thread.interrupt();
            }
            lock.notifyAll();
        }
        try {
            thread.join(Math.max(1, flush.toMillis() + 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (lock) {
            spillMemory();
        }
    }

    /** The delivery thread: anything unexpected is caught, counted, logged once per kind, and the loop goes on. */
    private void run() {
        while (true) {
            try {
                if (deliverUntilClosed()) {
                    return;
                }
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof OutOfMemoryError)
                        && !(e instanceof StackOverflowError)) {
                    throw e; // the JVM itself is broken: nothing sane to go on with
                }
                Duration pause;
                synchronized (lock) {
                    deliveryErrors++;
                    pause = backoff.delay((int) Math.min(deliveryErrors, 10));
                    String kind = e.getClass().getName();
                    if (!kind.equals(lastErrorKind)) {
                        lastErrorKind = kind;
                        LOG.log(System.Logger.Level.ERROR, "delivery hit an unexpected error (" + e
                                + "); going on (errors so far: " + deliveryErrors + ")");
                    }
                    if (closing) {
                        try {
                            spillMemory();
                        } catch (RuntimeException | Error ignored) {
                            // Closing: what cannot be spooled is lost with the process.
                        }
                        return;
                    }
                }
                try {
                    sleeper.sleep(pause);
                } catch (InterruptedException interrupted) {
                    // close() cut the pause short; the loop sees closing.
                }
            }
        }
    }

    private long deliveryErrors;
    private String lastErrorKind;
    /** The body of the last answer that took a shipment (its start: see {@link Transport.Response}). */
    private String lastAnswer;

    /** The delivery loop proper; returns true when closed. */
    private boolean deliverUntilClosed() {
        while (true) {
            Shipment next;
            boolean fromSpool;
            synchronized (lock) {
                while (memory.isEmpty() && spool.isEmpty() && resend.isEmpty() && !closing) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        // Only close() interrupts, and it sets closing first.
                    }
                }
                if (closing && (System.nanoTime() > flushDeadlineNanos || consecutiveFailures > 0
                        || (memory.isEmpty() && spool.isEmpty() && resend.isEmpty()))) {
                    spillMemory();
                    return true;
                }
                fromSpool = resend.isEmpty() && !spool.isEmpty();
                // Entries that cannot be replayed are moved aside by the spool itself; this never gives up.
                next = !resend.isEmpty() ? resend.peekFirst() : fromSpool ? spool.oldest() : memory.peekFirst();
                if (next == null) {
                    continue;
                }
            }
            Outcome outcome = deliver(next);
            Duration wait = null;
            boolean sleep = false;
            synchronized (lock) {
                switch (outcome) {
                    case DELIVERED -> {
                        delivered++;
                        if (Payload.SAMPLES_PATH.equals(next.path())) {
                            samplesAnswered(next, lastAnswer);
                        }
                        next.settle();
                        if (consecutiveFailures > 0) {
                            LOG.log(System.Logger.Level.INFO, "collector reachable again; replaying "
                                    + spool.depth() + " spooled shipments");
                        }
                        consecutiveFailures = 0;
                        lastProblem = null;
                        forget(next, fromSpool);
                    }
                    case REJECTED -> {
                        rejected++;
                        next.settle();
                        forget(next, fromSpool);
                    }
                    case RETRY -> {
                        consecutiveFailures++;
                        spillMemory();
                        wait = backoff.delay(consecutiveFailures);
                        sleep = !closing;
                        sleeping = sleep;
                    }
                }
            }
            if (sleep) {
                try {
                    sleeper.sleep(wait);
                } catch (InterruptedException e) {
                    // close() cut the backoff short.
                }
                synchronized (lock) {
                    sleeping = false;
                    Thread.interrupted();
                }
            }
        }
    }

    private void forget(Shipment shipment, boolean fromSpool) {
        if (resend.peekFirst() == shipment) {
            resend.removeFirst();
        } else if (!fromSpool && memory.peekFirst() == shipment) {
            memory.removeFirst();
        } else {
            // From the spool, or spilled there from memory while it was in flight (a backlog): not again.
            spool.remove(shipment.ordinal());
        }
    }

    private Outcome deliver(Shipment shipment) {
        Transport.Response response;
        try {
            response = transport.send(shipment);
        } catch (IOException | RuntimeException e) {
            // A RuntimeException from the HTTP client (a malformed answer, a closed client) is a failed attempt too.
            problem("collector unreachable (" + Errors.oneLine(e) + "); spooling until it is back");
            return Outcome.RETRY;
        } catch (InterruptedException e) {
            return Outcome.RETRY;
        }
        int status = response.status();
        if (status >= 200 && status < 300) {
            lastAnswer = response.body();
            return Outcome.DELIVERED;
        }
        if (status == 401 || status == 403) {
            // 403: the client certificate names another node than --host says (the answer says which).
            problem(status == 401 ? "collector refused the token (HTTP 401); check --token-file; spooling meanwhile"
                    : "collector refused this node (HTTP 403): " + response.body() + "; spooling meanwhile");
            return Outcome.RETRY;
        }
        if (status >= 400 && status < 500 && status != 408 && status != 429) {
            LOG.log(System.Logger.Level.ERROR, "collector refused " + shipment.what() + " with HTTP " + status + ": "
                    + response.body() + " (dropped)");
            return Outcome.REJECTED;
        }
        problem("collector answered HTTP " + status + refusal(response.body()) + "; spooling and retrying");
        return Outcome.RETRY;
    }

    /**
     * A collector's refusal as " (GPU limit 4,096 reached)": its {@code error} up to the first colon (the rest changes
     * from answer to answer); empty when unreadable.
     */
    static String refusal(String body) {
        if (body == null || !body.contains("\"error\"")) {
            return "";
        }
        try {
            String error = Json.MAPPER.readTree(body).path("error").asText("");
            int colon = error.indexOf(':');
            String head = (colon > 0 ? error.substring(0, colon) : error).strip();
            return head.isEmpty() || head.length() > 120 ? "" : " (" + head + ")";
        } catch (IOException | RuntimeException e) {
            return ""; // a truncated body (only its start is kept) or not JSON
        }
    }

    /** Logs a delivery problem once per streak, not once per retry. */
    private void problem(String message) {
        synchronized (lock) {
            if (!message.equals(lastProblem)) {
                lastProblem = message;
                LOG.log(System.Logger.Level.WARNING, message);
            }
        }
    }

    /** Moves every shipment waiting in memory to the spool, oldest first. Caller holds the lock. */
    private void spillMemory() {
        if (closing) {
            // Steps to send again take their batch's place in the spool (one run's steps per batch).
            Set<Long> places = new HashSet<>();
            while (!resend.isEmpty()) {
                Shipment again = resend.pollFirst();
                if (places.add(again.ordinal())) {
                    spool.append(again);
                } else {
                    LOG.log(System.Logger.Level.ERROR, "not kept for the next agent: " + again.what());
                    again.settle();
                }
            }
        }
        while (!memory.isEmpty()) {
            spool.append(memory.pollFirst());
        }
    }

    /** Waits until nothing is pending or the timeout passes; for tests and orderly shutdown. */
    public boolean awaitEmpty(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (pending() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
