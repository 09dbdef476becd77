package dev.trainwatch.agent.ship;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.JsonStreams;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Shipments not yet taken, on disk, one gzip body per file named by ordinal, method and path, written by rename and
 * replayed in order; bounded by bytes, oldest dropped first. An unreadable, corrupt or oversized entry is moved to
 * {@code rejected/} with one line; an unwritable directory degrades the spool to memory (at most
 * {@value #MEMORY_MAX_BYTES} bytes), the disk retried every {@value #DISK_RETRY_SECONDS} s. Thread-safe.
 */
public final class Spool {

    private static final System.Logger LOG = System.getLogger(Spool.class.getName());
    private static final String TEMP_PREFIX = ".tmp-";

    /** Folder (inside the spool) where entries that cannot be replayed are moved. */
    public static final String REJECTED_DIR = "rejected";
    /** Largest entry replayed; the agent's requests are a few kilobytes. */
    public static final long MAX_ENTRY_BYTES = 8L << 20;
    /** Largest decompressed body accepted from an entry. */
    static final long MAX_BODY_BYTES = 64L << 20;
    static final int MAX_REJECTED = 20;
    /** Most bytes kept in memory while the directory cannot be written. */
    public static final long MEMORY_MAX_BYTES = 8L << 20;
    static final long DISK_RETRY_SECONDS = 30;

    private record Entry(Path file, String method, String path, long bytes) {
    }

    private final Path dir;
    private final long maxBytes;
    private final TreeMap<Long, Entry> entries = new TreeMap<>();
    private final TreeMap<Long, Shipment> inMemory = new TreeMap<>();
    private long bytes;
    private long memoryBytes;
    private long dropped;
    private long rejected;
    private boolean memoryOnly;
    private long diskRetryAtNanos;
    private String memoryReason;
    private boolean warnedMemoryFull;

    /**
     * Opens (and creates) the spool in {@code dir}, taking over what a previous agent left; an unusable directory is one
     * line and a spool in memory. {@code maxBytes} bounds the bytes of all spooled bodies.
     */
    public Spool(Path dir, long maxBytes) {
        this.dir = dir;
        this.maxBytes = maxBytes;
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                for (Path file : files) {
                    String name = file.getFileName().toString();
                    if (name.startsWith(TEMP_PREFIX)) {
                        try {
                            Files.deleteIfExists(file);
                        } catch (IOException e) {
                            // Not ours to worry about: it is never replayed.
                        }
                        continue;
                    }
                    String[] m = parseName(name);
                    if (m != null) {
                        long size = sizeOf(file);
                        entries.put(Long.parseLong(m[0]), new Entry(file, m[1],
                                URLDecoder.decode(m[2], StandardCharsets.UTF_8), size));
                        bytes += size;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            toMemory(e);
        }
    }

    private static final Pattern NAME = Pattern.compile("(\\d{20})-(POST|PUT)-(.+)\\.json\\.gz");

    /** Ordinal, method and encoded path of a spool file's name, or null. */
    static String[] parseName(String name) {
        Matcher m = NAME.matcher(name);
        return m.matches() ? new String[] {m.group(1), m.group(2), m.group(3)} : null;
    }

    private static long sizeOf(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isRegularFile() ? a.size() : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    public Path dir() {
        return dir;
    }

    /** Adds a shipment, the oldest dropped beyond the bound; true when it is on disk (a restart would replay it). */
    public synchronized boolean append(Shipment shipment) {
        if (entries.containsKey(shipment.ordinal()) || inMemory.containsKey(shipment.ordinal())) {
            return !inMemory.containsKey(shipment.ordinal());
        }
        long size = shipment.gzipBody().length;
        if (memoryOnly && System.nanoTime() - diskRetryAtNanos >= 0) {
            memoryOnly = false; // try the disk again with this one
        }
        if (!memoryOnly) {
            try {
                boolean written = appendToDisk(shipment, size);
                shipment.settle(); // on disk, or dropped from a full spool: either way settled
                if (written) {
                    if (memoryReason != null) {
                        LOG.log(System.Logger.Level.INFO, "spool directory " + dir + " can be written again");
                        memoryReason = null;
                    }
                    return true;
                }
                return false;
            } catch (IOException | RuntimeException e) {
                toMemory(e);
            }
        }
        appendToMemory(shipment, size);
        return false;
    }

    private boolean appendToDisk(Shipment shipment, long size) throws IOException {
        while (!entries.isEmpty() && bytes + memoryBytes + size > maxBytes) {
            Map.Entry<Long, Entry> oldest = entries.firstEntry();
            if (oldest.getKey() > shipment.ordinal()) {
                break;
            }
            remove(oldest.getKey());
            dropped++;
        }
        if (bytes + memoryBytes + size > maxBytes) {
            dropped++;
            LOG.log(System.Logger.Level.WARNING, "spool full ({0} bytes): dropped {1}", bytes, shipment.what());
            return false;
        }
        String name = String.format("%020d-%s-%s.json.gz", shipment.ordinal(), shipment.method(),
                URLEncoder.encode(shipment.path(), StandardCharsets.UTF_8));
        Path temp = dir.resolve(TEMP_PREFIX + name);
        Path file = dir.resolve(name);
        try {
            Files.write(temp, shipment.gzipBody());
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException | RuntimeException ignored) {
                // The directory is the problem; the next start removes temporary files.
            }
            throw e;
        }
        entries.put(shipment.ordinal(), new Entry(file, shipment.method(), shipment.path(), size));
        bytes += size;
        return true;
    }

    private void appendToMemory(Shipment shipment, long size) {
        long bound = Math.min(maxBytes, MEMORY_MAX_BYTES);
        while (!inMemory.isEmpty() && memoryBytes + size > bound && inMemory.firstKey() < shipment.ordinal()) {
            Shipment oldest = inMemory.pollFirstEntry().getValue();
            memoryBytes -= oldest.gzipBody().length;
            dropped++;
            oldest.settle();
        }
        if (memoryBytes + size > bound) {
            dropped++;
            shipment.settle();
            return;
        }
        if (memoryBytes + size > bound / 2 && !warnedMemoryFull) {
            warnedMemoryFull = true;
            LOG.log(System.Logger.Level.WARNING, "the in-memory spool is half full; the oldest shipments will be "
                    + "dropped when it is full");
        }
        inMemory.put(shipment.ordinal(), shipment);
        memoryBytes += size;
    }

    /** Switches to memory, saying so once per streak, naming the directory and the cause. */
    private void toMemory(Exception cause) {
        memoryOnly = true;
        diskRetryAtNanos = System.nanoTime() + DISK_RETRY_SECONDS * 1_000_000_000L;
        if (memoryReason == null) {
            memoryReason = Errors.reason(cause);
            LOG.log(System.Logger.Level.ERROR, "cannot write the spool directory " + dir + " (" + memoryReason
                    + "): shipments wait in memory (at most " + (Math.min(maxBytes, MEMORY_MAX_BYTES) >> 20)
                    + " MiB) until it can be written; check the disk");
        }
    }

    /** The oldest shipment, or null when the spool is empty. Entries that cannot be replayed are moved aside. */
    public synchronized Shipment oldest() {
        while (!entries.isEmpty() || !inMemory.isEmpty()) {
            if (!inMemory.isEmpty() && (entries.isEmpty() || inMemory.firstKey() < entries.firstKey())) {
                return inMemory.firstEntry().getValue();
            }
            Map.Entry<Long, Entry> first = entries.firstEntry();
            Entry entry = first.getValue();
            try {
                if (Files.isDirectory(entry.file(), LinkOption.NOFOLLOW_LINKS)) {
                    throw new IOException("a directory, not a file");
                }
                long size = Files.size(entry.file());
                if (size > MAX_ENTRY_BYTES) {
                    throw new IOException(size + " bytes, more than any request the agent writes ("
                            + MAX_ENTRY_BYTES + ")");
                }
                byte[] body = Files.readAllBytes(entry.file());
                checkBody(body);
                return new Shipment(first.getKey(), entry.method(), entry.path(), body,
                        "spooled " + entry.method() + " " + entry.path() + " #" + first.getKey());
            } catch (NoSuchFileException e) {
                // Deleted behind our back: nothing to replay.
                entries.remove(first.getKey());
                bytes -= entry.bytes();
            } catch (IOException | RuntimeException | OutOfMemoryError e) {
                reject(first.getKey(), entry, e instanceof OutOfMemoryError ? "too big to read" : Errors.reason(e));
            }
        }
        return null;
    }

    /** A body is replayed only when it is a complete gzip stream of one JSON value. */
    static void checkBody(byte[] body) throws IOException {
        try (InputStream in = new LimitedInput(new GZIPInputStream(new ByteArrayInputStream(body)), MAX_BODY_BYTES);
             JsonParser parser = JsonStreams.FACTORY.createParser(in)) {
            // One JSON value and nothing after it, read token by token (jackson-core alone, no tree).
            if (parser.nextToken() == null) {
                throw new IOException("not JSON (no value)");
            }
            parser.skipChildren();
            JsonToken trailing = parser.nextToken();
            if (trailing != null) {
                throw new IOException("not JSON (more after the value: " + trailing + ")");
            }
        } catch (ZipException | EOFException e) {
            throw new IOException("not a complete gzip stream (" + e.getMessage() + ")");
        } catch (JacksonException e) {
            throw new IOException("not JSON (" + e.getOriginalMessage() + ")");
        }
    }

    /** Moves an entry that cannot be replayed to {@code rejected/}, says so in one line, and forgets it. */
    private void reject(long ordinal, Entry entry, String why) {
        entries.remove(ordinal);
        bytes -= entry.bytes();
        rejected++;
        Path aside = dir.resolve(REJECTED_DIR).resolve(entry.file().getFileName());
        String where;
        try {
            Files.createDirectories(aside.getParent());
            Files.move(entry.file(), aside, StandardCopyOption.REPLACE_EXISTING);
            where = "moved to " + aside;
            pruneRejected(aside.getParent());
        } catch (IOException | RuntimeException moveFailed) {
            try {
                Files.deleteIfExists(entry.file());
                where = "deleted";
            } catch (IOException | RuntimeException deleteFailed) {
                where = "skipped (it cannot be moved or deleted)";
            }
        }
        LOG.log(System.Logger.Level.WARNING, "spooled " + entry.method() + " " + entry.path() + " #" + ordinal
                + " cannot be replayed: " + why + "; " + where + ", going on with the next");
    }

    private static void pruneRejected(Path rejectedDir) throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(rejectedDir)) {
            all.forEach(files::add);
        }
        if (files.size() <= MAX_REJECTED) {
            return;
        }
        files.sort(Comparator.comparing(p -> p.getFileName().toString()));
        for (Path old : files.subList(0, files.size() - MAX_REJECTED)) {
            if (Files.isDirectory(old, LinkOption.NOFOLLOW_LINKS)) {
                continue; // a directory moved aside is left for a person to look at
            }
            Files.deleteIfExists(old);
        }
    }

    /** Removes a shipment (delivered or refused); no-op when it is not there any more. */
    public synchronized void remove(long ordinal) {
        Shipment held = inMemory.remove(ordinal);
        if (held != null) {
            memoryBytes -= held.gzipBody().length;
            return;
        }
        Entry entry = entries.remove(ordinal);
        if (entry != null) {
            bytes -= entry.bytes();
            try {
                Files.deleteIfExists(entry.file());
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "cannot delete spooled file {0}: {1}", entry.file(), Errors.reason(e));
            }
        }
    }

    public synchronized boolean isEmpty() {
        return entries.isEmpty() && inMemory.isEmpty();
    }

    /** Shipments in the spool (on disk and, while the disk cannot be written, in memory). */
    public synchronized int depth() {
        return entries.size() + inMemory.size();
    }

    /** Bytes of the spooled bodies. */
    public synchronized long bytes() {
        return bytes + memoryBytes;
    }

    /** Shipments dropped because the spool was full, since it was opened. */
    public synchronized long droppedBatches() {
        return dropped;
    }

    /** Entries moved aside because they could not be replayed, since it was opened. */
    public synchronized long rejectedEntries() {
        return rejected;
    }

    /** True while the directory cannot be written and shipments wait in memory. */
    public synchronized boolean inMemory() {
        return memoryReason != null;
    }

    /** Why the directory cannot be written, or null. */
    public synchronized String memoryReason() {
        return memoryReason;
    }

    /** The largest ordinal in the spool, or -1 when empty. */
    public synchronized long maxOrdinal() {
        long disk = entries.isEmpty() ? -1 : entries.lastKey();
        long memory = inMemory.isEmpty() ? -1 : inMemory.lastKey();
        return Math.max(disk, memory);
    }

    /** Reads at most {@code limit} bytes, then fails: a gzip bomb in the spool cannot exhaust the heap. */
    private static final class LimitedInput extends FilterInputStream {
        private long left;

        LimitedInput(InputStream in, long limit) {
            super(in);
            this.left = limit;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0 && --left < 0) {
                throw new IOException("more than " + MAX_BODY_BYTES + " bytes once decompressed");
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n > 0 && (left -= n) < 0) {
                throw new IOException("more than " + MAX_BODY_BYTES + " bytes once decompressed");
            }
            return n;
        }
    }
}
