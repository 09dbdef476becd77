package dev.trainwatch.agent.ship;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Shipments the collector has not taken yet, on disk, one file per shipment, replayed in ordinal order. The file
 * name carries the ordinal, method and path ({@code 00000000000000000042-POST-%2Fv1%2Fsamples.json.gz}), the
 * content is the gzip body exactly as it will be sent. Files are written to a temporary name and renamed, so a
 * crash leaves either the whole shipment or nothing.
 *
 * <p>Bounded by bytes: when an append would exceed the bound, the oldest shipments are deleted and counted in
 * {@link #droppedBatches()} (the newest data is the most useful once the collector is back). Thread-safe.
 */
public final class Spool {

    private static final System.Logger LOG = System.getLogger(Spool.class.getName());
    private static final Pattern NAME = Pattern.compile("(\\d{20})-(POST|PUT)-(.+)\\.json\\.gz");
    private static final String TEMP_PREFIX = ".tmp-";

    private record Entry(Path file, String method, String path, long bytes) {
    }

    private final Path dir;
    private final long maxBytes;
    private final TreeMap<Long, Entry> entries = new TreeMap<>();
    private long bytes;
    private long dropped;

    /**
     * Opens (and creates) the spool in {@code dir}, taking over what a previous agent left there.
     *
     * @param maxBytes the bound on the bytes of all spooled bodies
     * @throws IOException when the directory cannot be created or listed
     */
    public Spool(Path dir, long maxBytes) throws IOException {
        this.dir = dir;
        this.maxBytes = maxBytes;
        Files.createDirectories(dir);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                if (name.startsWith(TEMP_PREFIX)) {
                    Files.deleteIfExists(file);
                    continue;
                }
                Matcher m = NAME.matcher(name);
                if (m.matches()) {
                    long size = Files.size(file);
                    entries.put(Long.parseLong(m.group(1)), new Entry(file, m.group(2),
                            URLDecoder.decode(m.group(3), StandardCharsets.UTF_8), size));
                    bytes += size;
                }
            }
        }
    }

    /**
     * Adds a shipment, dropping the oldest ones while the spool would exceed its bound.
     *
     * @throws IOException when the file cannot be written (the shipment is then not in the spool)
     */
    public synchronized void append(Shipment shipment) throws IOException {
        if (entries.containsKey(shipment.ordinal())) {
            return;
        }
        long size = shipment.gzipBody().length;
        while (!entries.isEmpty() && bytes + size > maxBytes) {
            Map.Entry<Long, Entry> oldest = entries.firstEntry();
            if (oldest.getKey() > shipment.ordinal()) {
                break;
            }
            remove(oldest.getKey());
            dropped++;
        }
        if (bytes + size > maxBytes) {
            dropped++;
            LOG.log(System.Logger.Level.WARNING, "spool full ({0} bytes): dropped {1}", bytes, shipment.what());
            return;
        }
        String name = String.format("%020d-%s-%s.json.gz", shipment.ordinal(), shipment.method(),
                URLEncoder.encode(shipment.path(), StandardCharsets.UTF_8));
        Path temp = dir.resolve(TEMP_PREFIX + name);
        Path file = dir.resolve(name);
        Files.write(temp, shipment.gzipBody());
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        entries.put(shipment.ordinal(), new Entry(file, shipment.method(), shipment.path(), size));
        bytes += size;
    }

    /** The oldest shipment, read from disk, or null when the spool is empty. */
    public synchronized Shipment oldest() {
        while (!entries.isEmpty()) {
            Map.Entry<Long, Entry> first = entries.firstEntry();
            Entry entry = first.getValue();
            try {
                return new Shipment(first.getKey(), entry.method(), entry.path(), Files.readAllBytes(entry.file()),
                        "spooled " + entry.method() + " " + entry.path() + " #" + first.getKey());
            } catch (NoSuchFileException e) {
                // Deleted behind our back: nothing to replay.
                entries.remove(first.getKey());
                bytes -= entry.bytes();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read spooled shipment " + entry.file(), e);
            }
        }
        return null;
    }

    /** Removes a shipment (delivered or refused); no-op when it is not there any more. */
    public synchronized void remove(long ordinal) {
        Entry entry = entries.remove(ordinal);
        if (entry != null) {
            bytes -= entry.bytes();
            try {
                Files.deleteIfExists(entry.file());
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "cannot delete spooled file {0}: {1}", entry.file(), e.getMessage());
            }
        }
    }

    public synchronized boolean isEmpty() {
        return entries.isEmpty();
    }

    /** Shipments in the spool. */
    public synchronized int depth() {
        return entries.size();
    }

    /** Bytes of the spooled bodies. */
    public synchronized long bytes() {
        return bytes;
    }

    /** Shipments dropped because the spool was full, since it was opened. */
    public synchronized long droppedBatches() {
        return dropped;
    }

    /** The largest ordinal in the spool, or -1 when empty. */
    public synchronized long maxOrdinal() {
        return entries.isEmpty() ? -1 : entries.lastKey();
    }
}
