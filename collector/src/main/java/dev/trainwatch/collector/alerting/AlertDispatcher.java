package dev.trainwatch.collector.alerting;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Delivers alert notices to every receiver without blocking the caller: a bounded lane and a daemon thread per
 * receiver, which retries with exponential backoff and re-sends active alerts where needed (Alertmanager); a receiver
 * that is down delays only its own lane. Thread-safe; constructed running, {@link #close()} stops the threads.
 */
public final class AlertDispatcher implements AutoCloseable {

    /** Defaults: retries from 1 s doubling to 60 s; re-sends every 60 s (Alertmanager resolves after 5 min). */
    public record Settings(Duration initialBackoff, Duration maxBackoff, Duration resendInterval, int maxQueued) {
        public static Settings defaults() {
            return new Settings(Duration.ofSeconds(1), Duration.ofSeconds(60), Duration.ofSeconds(60), 10_000);
        }
    }

    private final List<Lane> lanes = new ArrayList<>();
    private final Map<String, AtomicLong> outcomes = Map.of("ok", new AtomicLong(), "retry", new AtomicLong(),
            "failed", new AtomicLong());
    private final Consumer<String> log;
    private final Clock clock;
    private volatile Consumer<String> outcomeListener = outcome -> { };

    public AlertDispatcher(List<AlertSink> sinks, Settings settings, Clock clock, Consumer<String> log) {
        this.log = log;
        this.clock = clock;
        for (AlertSink sink : sinks) {
            Lane lane = new Lane(sink, settings);
            lanes.add(lane);
            lane.thread.start();
        }
    }

    /** Queues a notice for every receiver. Never blocks; drops the oldest queued notice of a full lane. */
    public void publish(AlertNotice notice) {
        for (Lane lane : lanes) {
            lane.offer(notice);
        }
    }

    /** Queues a notice sent before a restart, only for receivers that need re-sends (Alertmanager). */
    public void republish(AlertNotice notice) {
        for (Lane lane : lanes) {
            if (lane.sink.needsResend()) {
                lane.offer(notice);
            }
        }
    }

    public Map<String, Long> outcomes() {
        return outcomes.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()));
    }

    public int queued() {
        return lanes.stream().mapToInt(Lane::queued).sum();
    }

    @Override
    public void close() {
        for (Lane lane : lanes) {
            lane.stop();
        }
        for (Lane lane : lanes) {
            try {
                lane.thread.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Once per notice, from the delivery threads. */
    public void onOutcome(Consumer<String> listener) {
        this.outcomeListener = listener;
    }

    private void count(String outcome, int n) {
        outcomes.get(outcome).addAndGet(n);
        Consumer<String> listener = outcomeListener;
        for (int i = 0; i < n; i++) {
            listener.accept(outcome);
        }
    }

    private final class Lane implements Runnable {
        private final AlertSink sink;
        private final Settings settings;
        private final Deque<AlertNotice> pending = new ArrayDeque<>();
        private final Map<String, AlertNotice> active = new LinkedHashMap<>();
        private final Thread thread;
        private boolean stopped;
        private Instant nextResend;

        Lane(AlertSink sink, Settings settings) {
            this.sink = sink;
            this.settings = settings;
            this.thread = new Thread(this, "trainwatch-alerts-" + sink.name());
            this.thread.setDaemon(true);
        }

        synchronized void offer(AlertNotice notice) {
            if (pending.size() >= settings.maxQueued()) {
                pending.pollFirst();
                count("failed", 1);
            }
            pending.addLast(notice);
            notifyAll();
        }

        synchronized int queued() {
            return pending.size();
        }

        synchronized void stop() {
            stopped = true;
            notifyAll();
        }

        @Override
        public void run() {
            Duration backoff = settings.initialBackoff();
            while (true) {
                List<AlertNotice> batch;
                boolean resend = false;
                synchronized (this) {
                    while (!stopped && pending.isEmpty() && !resendDue()) {
                        waitMillis(millisUntilResend());
                    }
                    if (stopped) {
                        return;
                    }
                    if (!pending.isEmpty()) {
                        batch = new ArrayList<>();
                        while (!pending.isEmpty() && batch.size() < sink.maxBatch()) {
                            batch.add(pending.pollFirst());
                        }
                    } else {
                        batch = new ArrayList<>(active.values());
                        resend = true;
                    }
                }
                try {
                    sink.deliver(batch);
                    count("ok", batch.size());
                    backoff = settings.initialBackoff();
                    synchronized (this) {
                        if (!resend) {
                            for (AlertNotice notice : batch) {
                                if (notice.firing()) {
                                    active.put(notice.key(), notice);
                                } else {
                                    active.remove(notice.key());
                                }
                            }
                        }
                        nextResend = sink.needsResend() && !active.isEmpty()
                                ? clock.instant().plus(settings.resendInterval()) : null;
                    }
                } catch (DeliveryException e) {
                    if (e.retryable()) {
                        count("retry", batch.size());
                        log.accept("trainwatch: alert delivery to " + sink.name() + " failed, retrying in "
                                + backoff.toMillis() + " ms: " + e.getMessage());
                        synchronized (this) {
                            if (!resend) {
                                for (int i = batch.size() - 1; i >= 0; i--) {
                                    pending.addFirst(batch.get(i));
                                }
                            }
                            long deadline = System.nanoTime() + backoff.toNanos();
                            long left;
                            while (!stopped && (left = deadline - System.nanoTime()) > 0) {
                                waitMillis(Math.max(1, left / 1_000_000));
                            }
                        }
                        Duration doubled = backoff.multipliedBy(2);
                        backoff = doubled.compareTo(settings.maxBackoff()) > 0 ? settings.maxBackoff() : doubled;
                    } else {
                        count("failed", batch.size());
                        log.accept("trainwatch: alert delivery to " + sink.name() + " refused, dropped "
                                + batch.size() + " notice(s): " + e.getMessage());
                    }
                } catch (RuntimeException e) {
                    count("failed", batch.size());
                    log.accept("trainwatch: alert delivery to " + sink.name() + " failed: " + e);
                }
            }
        }

        private boolean resendDue() {
            return nextResend != null && !active.isEmpty() && !clock.instant().isBefore(nextResend);
        }

        private long millisUntilResend() {
            if (nextResend == null || active.isEmpty()) {
                return 0; // wait until notified
            }
            return Math.max(1, Duration.between(clock.instant(), nextResend).toMillis());
        }

        private void waitMillis(long millis) {
            try {
                if (millis <= 0) {
                    wait();
                } else {
                    wait(millis);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stopped = true;
            }
        }
    }
}
