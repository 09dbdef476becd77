package dev.trainwatch.agent.ship;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Delivers every payload to each of several collectors, one {@link Shipper} and {@link Spool} each, so one away gets
 * its backlog replayed while the other is served. Delivery figures add up over the collectors; steps go in batches
 * only when every collector takes them. Thread-safe as {@link Shipper} is.
 */
public final class FanOutShipper {

    private final List<Shipper> shippers;
    private final List<String> names;

    /**
     * @param shippers one per collector, in the order of {@code --collector}
     * @param names    each collector as the agent's problem lines name it (its URL)
     */
    public FanOutShipper(List<Shipper> shippers, List<String> names) {
        if (shippers.isEmpty() || shippers.size() != names.size()) {
            throw new IllegalArgumentException("one name per shipper, at least one shipper");
        }
        this.shippers = List.copyOf(shippers);
        this.names = List.copyOf(names);
    }

    /** The spool of the collector at {@code index}: the first keeps {@code spoolDir}, the others {@code collector-N}. */
    public static Path spoolDir(Path spoolDir, int index) {
        return index == 0 ? spoolDir : spoolDir.resolve("collector-" + (index + 1));
    }

    public void start() {
        shippers.forEach(Shipper::start);
    }

    /** Queues the payload for every collector. */
    public void submit(Payload payload) {
        shippers.forEach(s -> s.submit(payload));
    }

    /** As {@link Shipper#submit(Payload, Runnable)}: {@code settled} runs once the payload is settled for all. */
    public void submit(Payload payload, Runnable settled) {
        AtomicInteger left = new AtomicInteger(shippers.size());
        Runnable each = () -> {
            if (left.decrementAndGet() == 0) {
                settled.run();
            }
        };
        shippers.forEach(s -> s.submit(payload, each));
    }

    public long pending() {
        return shippers.stream().mapToLong(Shipper::pending).sum();
    }

    public long spoolBytes() {
        return shippers.stream().mapToLong(Shipper::spoolBytes).sum();
    }

    public long dropped() {
        return shippers.stream().mapToLong(Shipper::dropped).sum();
    }

    public boolean alive() {
        return shippers.stream().allMatch(Shipper::alive);
    }

    public long deliveryErrors() {
        return shippers.stream().mapToLong(Shipper::deliveryErrors).sum();
    }

    public long rejectedSpoolEntries() {
        return shippers.stream().mapToLong(Shipper::rejectedSpoolEntries).sum();
    }

    public boolean spoolInMemory() {
        return shippers.stream().anyMatch(Shipper::spoolInMemory);
    }

    /** Steps go in batches only when every collector said it takes them there. */
    public boolean collectorTakesSteps() {
        return shippers.stream().allMatch(Shipper::collectorTakesSteps);
    }

    /** The first collector's delivery problem, naming it when there are several; null when none has one. */
    public String problem() {
        for (int i = 0; i < shippers.size(); i++) {
            String problem = shippers.get(i).problem();
            if (problem != null) {
                return shippers.size() == 1 ? problem : names.get(i) + ": " + problem;
            }
        }
        return null;
    }

    /** Closes every shipper, each with up to {@code flush} to deliver what it holds (together, not one by one). */
    public void close(Duration flush) {
        List<Thread> closing = new ArrayList<>();
        for (Shipper s : shippers) {
            Thread t = new Thread(() -> s.close(flush), "trainwatch-shipper-close");
            t.start();
            closing.add(t);
        }
        for (Thread t : closing) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
