package dev.trainwatch.agent.ship;

import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * The agent's id (host plus a random suffix) and batch sequence, kept in its spool directory so the collector's
 * de-duplication by (agent_id, seq) holds across restarts. The sequence is leased in blocks of {@value #LEASE},
 * persisted before use (numbers may be skipped, never reused); the directory is locked. Thread-safe.
 */
public final class AgentIdentity implements AutoCloseable {

    static final long LEASE = 1000;
    private static final String ID_FILE = "agent-id";
    private static final String SEQ_FILE = "seq-lease";
    private static final String LOCK_FILE = "lock";

    private static final System.Logger LOG = System.getLogger(AgentIdentity.class.getName());
    private final Path dir;
    private final String host;
    private String agentId;
    private boolean memoryOnly;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private long next;
    private long leasedUntil;

    private AgentIdentity(Path dir, String agentId, FileChannel lockChannel, FileLock lock, long next) {
        this.dir = dir;
        this.host = agentId.contains("-") ? agentId.substring(0, agentId.lastIndexOf('-')) : agentId;
        this.memoryOnly = dir == null;
        this.agentId = agentId;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.next = next;
        this.leasedUntil = next;
    }

    /** Opens the identity in {@code dir}, created on first use; IllegalStateException when another agent holds it. */
    public static AgentIdentity open(Path dir, String host) throws IOException {
        Files.createDirectories(dir);
        FileChannel channel = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        if (lock == null) {
            channel.close();
            throw new IllegalStateException("spool directory " + dir + " is in use by another trainwatch agent");
        }
        try {
            Path idFile = dir.resolve(ID_FILE);
            String id;
            if (Files.exists(idFile)) {
                id = Files.readString(idFile, StandardCharsets.UTF_8).strip();
            } else {
                id = newId(host);
                writeAtomically(idFile, id + "\n");
            }
            long next = 0;
            Path seqFile = dir.resolve(SEQ_FILE);
            if (Files.exists(seqFile)) {
                next = Long.parseLong(Files.readString(seqFile, StandardCharsets.UTF_8).strip());
            }
            return new AgentIdentity(dir, id, channel, lock, next);
        } catch (IOException | RuntimeException e) {
            lock.release();
            channel.close();
            if (e instanceof NumberFormatException) {
                throw new IOException("corrupt " + SEQ_FILE + " in " + dir + "; delete it to start a new sequence", e);
            }
            throw e;
        }
    }

    /** As {@link #open}, but an unusable directory is one line and a new id for this process only, never persisted. */
    public static AgentIdentity openOrInMemory(Path dir, String host) {
        try {
            return open(dir, host);
        } catch (IllegalStateException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            AgentIdentity memory = new AgentIdentity(null, newId(host), null, null, 0);
            LOG.log(System.Logger.Level.ERROR, "cannot keep the agent's identity in " + dir + " (" + Errors.reason(e)
                    + "): running as " + memory.agentId + " for this process only");
            return memory;
        }
    }

    /**
     * A new id: the host and eight random hex digits. They tell agents apart (the collector's de-duplication and its
     * clash notice), they are no secret: a generator seeded from the clocks, not SecureRandom and its providers.
     */
    private static String newId(String host) {
        return host + "-" + HexFormat.of().toHexDigits(new SplittableRandom().nextInt());
    }

    public synchronized String agentId() {
        return agentId;
    }

    /** True when the identity is not persisted (its directory cannot be written). */
    public synchronized boolean inMemory() {
        return memoryOnly;
    }

    /**
     * The next sequence number. When the lease cannot be persisted the agent goes on under a new in-memory id (one
     * line): the old id without a lease could reuse numbers after a restart.
     */
    public synchronized long nextSeq() {
        if (!memoryOnly && next >= leasedUntil) {
            try {
                writeAtomically(dir.resolve(SEQ_FILE), Long.toString(next + LEASE) + "\n");
                leasedUntil = next + LEASE;
            } catch (IOException | RuntimeException e) {
                String old = agentId;
                memoryOnly = true;
                agentId = newId(host);
                next = 0;
                LOG.log(System.Logger.Level.ERROR, "cannot write " + dir.resolve(SEQ_FILE) + " (" + Errors.reason(e)
                        + "): going on as " + agentId + " (instead of " + old + ") for this process only");
            }
        }
        return next++;
    }

    private static void writeAtomically(Path file, String content) throws IOException {
        Path temp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(temp, content, StandardCharsets.UTF_8);
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public synchronized void close() {
        if (lock != null) {
            Errors.closeQuietly(lockChannel); // releases the lock; closing a lock file cannot lose data
        }
    }
}
