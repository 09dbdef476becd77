package dev.trainwatch.agent;

import dev.trainwatch.agent.ship.ClientTls;
import dev.trainwatch.protocol.RunSpec;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * What the agent is told. Immutable.
 *
 * @param collector     base URL of the collector
 * @param host          this node's name (batches carry it)
 * @param attachPid     the process to watch with its descendants, or null for every compute process of the node
 * @param runId         the run id to use instead of finding one, or null
 * @param runSpec       the run's spec to send to the collector ({@code PUT /v1/runs/{id}}), or null
 * @param interval      polling interval (at least {@link #MIN_INTERVAL})
 * @param tokenFile     file holding the collector's bearer token, or null for none
 * @param spoolDir      where unsent shipments and the agent's identity live
 * @param spoolMaxBytes bound on the spool
 * @param flushTimeout  how long shutdown may spend delivering what is queued before spooling it
 * @param shipEvery     how often a batch goes to the collector: every poll (equal to {@code interval}), or the
 *                      readings of several polls together, at most {@link #MAX_SHIP_EVERY} (events, a run that
 *                      appears or ends, and a non-finite loss are sent at once whatever this says)
 * @param tls           the CAs to trust and the agent's certificate for an {@code https://} collector;
 *                      {@link ClientTls#NONE} for the JDK's defaults
 * @param otherCollectors collectors beyond the first ({@code --collector} repeated), each sent every batch too, with
 *                      its own spool (under {@code spoolDir}, see {@code FanOutShipper}); empty for one collector
 */
public record AgentConfig(URI collector, String host, Long attachPid, String runId, RunSpec runSpec, Duration interval,
                          Path tokenFile, Path spoolDir, long spoolMaxBytes, Duration flushTimeout,
                          Duration shipEvery, ClientTls tls, List<URI> otherCollectors) {

    /** Every collector the agent ships to, the first first. */
    public List<URI> collectors() {
        return Stream.concat(Stream.of(collector), otherCollectors.stream()).toList();
    }

    public static final Duration MIN_INTERVAL = Duration.ofMillis(100);
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);
    /** The longest wait before readings are sent: more would eat into the collector's 30 s lost and 20 s hang windows. */
    public static final Duration MAX_SHIP_EVERY = Duration.ofSeconds(10);

    /** An agent shipping every poll's readings at once to one collector, with the JDK's TLS defaults. */
    public AgentConfig(URI collector, String host, Long attachPid, String runId, RunSpec runSpec, Duration interval,
                       Path tokenFile, Path spoolDir, long spoolMaxBytes, Duration flushTimeout) {
        this(collector, host, attachPid, runId, runSpec, interval, tokenFile, spoolDir, spoolMaxBytes, flushTimeout,
                interval, ClientTls.NONE, List.of());
    }

    /** Default spool bound: an 8-GPU batch is ~1.5 KB gzipped, so ~6 MB an hour at 1 Hz (docs/AGENT.md). */
    public static final long DEFAULT_SPOOL_MAX_BYTES = 256L << 20;

    public AgentConfig {
        tls = tls == null ? ClientTls.NONE : tls;
        if (interval.compareTo(MIN_INTERVAL) < 0) {
            throw new IllegalArgumentException("interval " + interval.toMillis() + "ms is below the minimum of 100ms");
        }
        checkShipEvery(interval, shipEvery);
        otherCollectors = otherCollectors == null ? List.of() : List.copyOf(otherCollectors);
        if (spoolMaxBytes <= 0) {
            throw new IllegalArgumentException("spool bound must be positive");
        }
    }

    /**
     * How often batches may be sent: not more often than readings are taken, and, when readings are held, at most
     * every {@link #MAX_SHIP_EVERY}.
     *
     * @throws IllegalArgumentException saying which, in a line fit for a user
     */
    public static void checkShipEvery(Duration interval, Duration shipEvery) {
        if (shipEvery.compareTo(interval) < 0) {
            throw new IllegalArgumentException(Durations.text(shipEvery) + " is shorter than the polling interval ("
                    + Durations.text(interval) + "); readings cannot be sent more often than they are taken");
        }
        if (shipEvery.compareTo(interval) > 0 && shipEvery.compareTo(MAX_SHIP_EVERY) > 0) {
            throw new IllegalArgumentException(Durations.text(shipEvery)
                    + " is above the maximum of 10s (the collector calls an agent lost after 30s without a batch)");
        }
    }

    /** {@code $XDG_STATE_HOME/trainwatch/spool}, else {@code ~/.local/state/trainwatch/spool}. */
    public static Path defaultSpoolDir() {
        String state = System.getenv("XDG_STATE_HOME");
        Path base = state != null && !state.isBlank() ? Path.of(state)
                : Path.of(System.getProperty("user.home"), ".local", "state");
        return base.resolve("trainwatch").resolve("spool");
    }
}
