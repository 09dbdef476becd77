package dev.trainwatch.collector.history;

import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One collector per data directory: an exclusive lock on {@code collector.lock} (holding the owner's PID), dropped
 * by the OS when the process dies. A second collector would write over the first one's history; it refuses to start
 * instead, in one line. Not thread-safe; closed once.
 */
public final class DataDirLock implements AutoCloseable {
    private static final String FILE_NAME = "collector.lock";

    private final FileChannel channel;
    /** Only kept reachable: the JVM's lock table holds it weakly, and a second collector in this JVM must meet it. */
    private final FileLock lock;

    private DataDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the lock of {@code dataDir} (which exists); a one-line {@link HistoryException} when it cannot. */
    public static DataDirLock acquire(Path dataDir) {
        Path file = dataDir.resolve(FILE_NAME);
        FileChannel channel = null;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null; // this JVM already holds it: a second collector in one process
            }
            if (lock == null) {
                String owner = owner(file);
                channel.close();
                throw new HistoryException("data directory " + dataDir + " is in use by another collector"
                        + (owner.isEmpty() ? "" : " (pid " + owner + ")")
                        + ": stop that one, or give this one another --data-dir", null);
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)), 0);
            return new DataDirLock(channel, lock);
        } catch (IOException e) {
            Errors.closeQuietly(channel);
            throw new HistoryException("cannot lock data directory " + dataDir + " (" + file + "): " + e.getMessage(),
                    e);
        }
    }

    private static String owner(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    @Override
    public void close() {
        Errors.closeQuietly(channel); // releases the lock
    }
}
