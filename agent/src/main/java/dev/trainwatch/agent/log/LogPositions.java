package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.wire.WireCodec;
import io.avaje.json.JsonDataException;
import io.avaje.json.JsonReader;
import io.avaje.json.stream.JsonStream;
import io.avaje.jsonb.Json;
import io.avaje.jsonb.JsonType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What the agent has shipped from each log file, in {@code log-positions.json} beside its spool, so a restart resumes
 * after the last line shipped. A file is known by device, inode and a hash of its first line (an inode reused, or a
 * file truncated and written anew, has another); the newest {@value #MAX_FILES} are kept, so a symlink swapped back
 * resumes. Written to a temporary name and renamed; an unreadable file is one line and an empty start. Through the
 * adapters avaje-jsonb generates from the records: the agent loads no databind. Thread-safe.
 */
public final class LogPositions {

    private static final System.Logger LOG = System.getLogger(LogPositions.class.getName());

    public static final String FILE_NAME = "log-positions.json";
    static final int MAX_FILES = 16;
    private static final JsonStream JSON = JsonStream.builder().build();
    private static final JsonType<List<FileState>> STATES = WireCodec.type(FileState.class).list();

    /** {@code ts} may read back a neighbour of a 16–17 digit double (avaje-jsonb); only step intervals use it. */
    @Json(naming = Json.Naming.LowerUnderscore)
    public record RankStep(int rank, long step, double ts) {
    }

    /** {@code position}: just after the last line consumed; {@code midLine}: inside a skipped over-long line. */
    @Json(naming = Json.Naming.LowerUnderscore)
    public record FileState(String fileKey, String head, String path, long position, boolean midLine, int stretch,
                            List<RankStep> ranks, long updated) {
    }

    private final Path file;
    private String lastProblem;
    private List<FileState> lastWritten = List.of();

    public LogPositions(Path dir) {
        this.file = dir.resolve(FILE_NAME);
    }

    /** The saved states, newest first; empty when there are none or they cannot be read (logged once). */
    public synchronized List<FileState> load() {
        try {
            byte[] bytes = Files.readAllBytes(file);
            List<FileState> valid = parse(bytes).stream()
                    .filter(s -> s != null && s.fileKey() != null && s.position() >= 0)
                    .map(s -> s.ranks() != null ? s : new FileState(s.fileKey(), s.head(), s.path(), s.position(),
                            s.midLine(), s.stretch(), List.of(), s.updated())).toList();
            lastWritten = valid;
            return valid;
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read " + file + " (" + Errors.reason(e)
                    + "); the log's recent past will be read again");
            return List.of();
        }
    }

    /** Keeps the first {@value #MAX_FILES}; a failure is logged once per streak and leaves the previous content. */
    public synchronized boolean save(List<FileState> states) {
        List<FileState> kept = states.size() > MAX_FILES ? states.subList(0, MAX_FILES) : states;
        if (kept.equals(lastWritten)) {
            return true;
        }
        Path temp = file.resolveSibling("." + FILE_NAME + ".tmp");
        try {
            Files.write(temp, WireCodec.toBytes(kept));
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            lastWritten = List.copyOf(kept);
            if (lastProblem != null) {
                LOG.log(System.Logger.Level.INFO, "log positions are written to " + file + " again");
                lastProblem = null;
            }
            return true;
        } catch (IOException | RuntimeException e) {
            String problem = "cannot write " + file + " (" + Errors.reason(e) + "); after a restart the log's recent "
                    + "past is read again";
            if (lastProblem == null) {
                LOG.log(System.Logger.Level.WARNING, problem);
            }
            lastProblem = problem;
            return false;
        }
    }

    /**
     * The generated reader stops after the array and takes a null rank: both are refused here (a stray {@code ,} or
     * {@code ]} after the array is not).
     */
    static List<FileState> parse(byte[] bytes) {
        try (JsonReader reader = JSON.reader(bytes)) {
            List<FileState> states = STATES.fromJson(reader);
            if (reader.hasNextStreamElement()) {
                throw new JsonDataException("more after the array " + reader.location());
            }
            if (states.stream().anyMatch(s -> s != null && s.ranks() != null && s.ranks().contains(null))) {
                throw new JsonDataException("a rank is null");
            }
            return states;
        }
    }
}
