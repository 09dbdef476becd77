package dev.trainwatch.collector.state;

import dev.trainwatch.protocol.Errors;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What the fleet has applied, so nothing is applied twice, across restarts too: each agent's applied batch
 * {@code seq}s ({@link AppliedSeqs}) and each step source's last step ({@code run, source, rank}). With a data
 * directory every change is appended to {@code applied.log} before the request is answered; the file is rewritten
 * from memory when it has doubled (at least {@value #COMPACT_BYTES} bytes) and at every start. A torn last line is
 * skipped; a failed write is one line, and de-duplication goes on in memory. Bounded to {@value #MAX_AGENTS} agents
 * and {@value #MAX_ENTRIES} sources. Only used under the {@link Fleet}'s lock.
 */
public final class AppliedLedger implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);
    /** The file's name in the data directory. */
    public static final String FILE_NAME = "applied.log";
    static final long COMPACT_BYTES = 4L << 20;
    static final int MAX_ENTRIES = 200_000;
    /** Agents remembered: above the 65,536 GPUs' worth of nodes a collector holds, at about 200 bytes each. */
    static final int MAX_AGENTS = 100_000;

    private final Path file;
    private final Map<String, AppliedSeqs> seqs = lru(MAX_AGENTS, false);
    private final Map<String, Long> steps = lru(MAX_ENTRIES, false);
    private FileChannel channel;
    private long written;
    /** Size of the file as last rewritten: appends up to as much again before the next rewrite. */
    private long compactedBytes;
    private String writeProblem;

    private AppliedLedger(Path file) {
        this.file = file;
    }

    /** A map that drops its eldest entry beyond {@code max} (in access order, else insertion order). */
    static <V> Map<String, V> lru(int max, boolean accessOrder) {
        return new LinkedHashMap<>(16, 0.75f, accessOrder) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > max;
            }
        };
    }

    /** A ledger kept in memory only (no data directory). */
    public static AppliedLedger inMemory() {
        return new AppliedLedger(null);
    }

    /** The ledger of {@code dataDir}, with what earlier runs applied; a file that cannot be used is one line. */
    public static AppliedLedger open(Path dataDir) {
        AppliedLedger ledger = new AppliedLedger(dataDir.resolve(FILE_NAME));
        ledger.load();
        ledger.compact();
        return ledger;
    }

    private void load() {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split("\t", -1);
                try {
                    if (f.length == 3 && f[0].equals("a")) {
                        seqsOf(f[1]).add(Long.parseLong(f[2]));
                    } else if (f.length == 3 && f[0].equals("w")) {
                        seqsOf(f[1]).decode(f[2]);
                    } else if (f.length == 3 && f[0].equals("s")) {
                        steps.remove(f[1]);
                        steps.put(f[1], Long.parseLong(f[2]));
                    }
                } catch (IllegalArgumentException torn) {
                    // The last line of a crash: the request it belonged to was never answered either.
                }
            }
        } catch (NoSuchFileException e) {
            // First start with this data directory.
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read " + file + " (" + e.getMessage()
                    + "): batches and steps applied before this start may be applied again if they are re-sent");
        }
    }

    /** Whether the batch {@code seq} of this agent was applied (a replay), as far as the ledger remembers. */
    public boolean applied(String agentKey, long seq) {
        AppliedSeqs applied = seqs.get(agentKey);
        return applied != null && applied.applied(seq);
    }

    /** Records an applied batch. */
    public void recordApplied(String agentKey, long seq) {
        seqsOf(agentKey).add(seq);
        append("a", agentKey, seq);
    }

    /** The agent's windows, made the most recently changed. */
    private AppliedSeqs seqsOf(String agentKey) {
        AppliedSeqs applied = Objects.requireNonNullElseGet(seqs.remove(agentKey), AppliedSeqs::new);
        seqs.put(agentKey, applied);
        return applied;
    }

    /** The last step applied from a source of a run's rank, or null. */
    public Long lastStep(String runId, String source, int rank) {
        return steps.get(stepKey(runId, source, rank));
    }

    /** Records an applied step of a source. */
    public void appliedStep(String runId, String source, int rank, long step) {
        String key = stepKey(runId, source, rank);
        steps.remove(key);
        steps.put(key, step);
        append("s", key, step);
    }

    /** Forgets a deleted run's sources (its id may be used again for another run). */
    public void forgetRun(String runId) {
        String prefix = runId + "|";
        if (steps.keySet().removeIf(k -> k.startsWith(prefix))) {
            compact();
        }
    }

    private static String stepKey(String runId, String source, int rank) {
        return runId + "|" + source + "|" + rank;
    }

    private void append(String kind, String key, long value) {
        if (file == null || key.indexOf('\t') >= 0 || key.indexOf('\n') >= 0 || key.indexOf('\r') >= 0) {
            return;
        }
        byte[] line = (kind + "\t" + key + "\t" + value + "\n").getBytes(StandardCharsets.UTF_8);
        try {
            if (channel == null) {
                channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND);
            }
            ByteBuffer buffer = ByteBuffer.wrap(line);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            written += line.length;
            if (writeProblem != null) {
                LOG.log(System.Logger.Level.INFO, "writing " + file + " again");
                writeProblem = null;
            }
        } catch (IOException | RuntimeException e) {
            problem(e);
            closeChannel();
            return;
        }
        if (written > Math.max(COMPACT_BYTES, compactedBytes)) {
            compact();
        }
    }

    /** Rewrites the file with what is in memory (one line per agent and source). */
    private void compact() {
        if (file == null) {
            return;
        }
        closeChannel();
        Path temp = file.resolveSibling("." + FILE_NAME + ".tmp");
        StringBuilder text = new StringBuilder(64 * steps.size() + 320 * seqs.size() + 16);
        seqs.forEach((k, v) -> v.encode().forEach(w -> text.append("w\t").append(k).append('\t').append(w)
                .append('\n')));
        steps.forEach((k, v) -> text.append("s\t").append(k).append('\t').append(v).append('\n'));
        try {
            Files.writeString(temp, text, StandardCharsets.UTF_8);
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            written = 0;
            compactedBytes = text.length();
        } catch (IOException | RuntimeException e) {
            problem(e);
            try {
                Files.deleteIfExists(temp);
            } catch (IOException | RuntimeException ignored) {
                // A full disk: the temporary file may not even exist.
            }
        }
    }

    private void problem(Exception e) {
        String message = Errors.reason(e);
        if (writeProblem == null) {
            LOG.log(System.Logger.Level.WARNING, "cannot write " + file + " (" + message + "): replays are still "
                    + "dropped until the collector restarts, after that they may be applied again");
        }
        writeProblem = message;
    }

    private void closeChannel() {
        Errors.closeQuietly(channel); // appends are written through: a failed close loses nothing
        channel = null;
    }

    @Override
    public void close() {
        closeChannel();
    }
}
