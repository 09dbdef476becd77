package dev.trainwatch.agent.log;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the agent has shipped from each log file it followed, kept in one small JSON file beside its spool
 * ({@code log-positions.json}), so a restarted agent resumes after the last line it shipped instead of reading the
 * file's recent past again. A file is known by its identity, not its path: device and inode, and a hash of its
 * first line (an inode reused by a new file, or a file truncated and written anew, has another first line). The
 * newest {@value #MAX_FILES} files are kept, so a symlink swapped back to a file read before resumes where it was.
 *
 * <p>Written to a temporary name and renamed: a crash leaves the previous or the new content, never a mix. A file
 * that cannot be read or parsed is one line and an empty start (the log's recent past is read again, as before this
 * file existed). Thread-safe.
 */
public final class LogPositions {

    private static final System.Logger LOG = System.getLogger(LogPositions.class.getName());

    /** The file's name in the spool directory. */
    public static final String FILE_NAME = "log-positions.json";
    static final int MAX_FILES = 16;

    /** One rank's last step line. */
    public record RankStep(int rank, long step, double ts) {
    }

    /**
     * Where reading of one file stands.
     *
     * @param fileKey  device and inode, as the JDK prints a file key
     * @param head     hash of the file's first line (null while it had none)
     * @param path     the path it was read through (for people reading this file)
     * @param position offset just after the last line consumed
     * @param midLine  true when {@code position} is inside an over-long line being skipped
     * @param stretch  the file's current stretch (see {@link dev.trainwatch.protocol.StepEvent#source()})
     * @param ranks    each rank's last step line, to time the next one and to notice a counter going back
     * @param updated  unix milliseconds of the last change (the oldest are forgotten first)
     */
    public record FileState(String fileKey, String head, String path, long position, boolean midLine, int stretch,
                            List<RankStep> ranks, long updated) {
    }

    private final Path file;
    private String lastProblem;
    private List<FileState> lastWritten = List.of();

    /** The store in {@code dir} (nothing is read or written until asked). */
    public LogPositions(Path dir) {
        this.file = dir.resolve(FILE_NAME);
    }

    public Path file() {
        return file;
    }

    /** The saved states, newest first; empty when there are none or they cannot be read (logged once). */
    public synchronized List<FileState> load() {
        try {
            byte[] bytes = Files.readAllBytes(file);
            List<FileState> states = Json.MAPPER.readValue(bytes, new TypeReference<List<FileState>>() { });
            List<FileState> valid = new ArrayList<>();
            for (FileState s : states) {
                if (s != null && s.fileKey() != null && s.position() >= 0) {
                    valid.add(s.ranks() == null ? new FileState(s.fileKey(), s.head(), s.path(), s.position(),
                            s.midLine(), s.stretch(), List.of(), s.updated()) : s);
                }
            }
            lastWritten = List.copyOf(valid);
            return valid;
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read " + file + " (" + oneLine(e)
                    + "); the log's recent past will be read again");
            return List.of();
        }
    }

    /**
     * Saves {@code states} (newest first; only the first {@value #MAX_FILES} are kept). A failure is logged once
     * per streak and leaves the previous content.
     *
     * @return whether the states are on disk
     */
    public synchronized boolean save(List<FileState> states) {
        List<FileState> kept = states.size() > MAX_FILES ? states.subList(0, MAX_FILES) : states;
        if (kept.equals(lastWritten)) {
            return true;
        }
        Path temp = file.resolveSibling("." + FILE_NAME + ".tmp");
        try {
            Files.write(temp, Json.MAPPER.writeValueAsBytes(kept));
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            lastWritten = List.copyOf(kept);
            if (lastProblem != null) {
                LOG.log(System.Logger.Level.INFO, "log positions are written to " + file + " again");
                lastProblem = null;
            }
            return true;
        } catch (IOException | RuntimeException e) {
            String problem = "cannot write " + file + " (" + oneLine(e) + "); after a restart the log's recent "
                    + "past is read again";
            if (lastProblem == null) {
                LOG.log(System.Logger.Level.WARNING, problem);
            }
            lastProblem = problem;
            return false;
        }
    }

    static String oneLine(Exception e) {
        String m = e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null ? fse.getReason()
                : e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m.lines().findFirst().orElse("");
    }

    /** The ranks of an extractor state, as saved. */
    static List<RankStep> ranks(StepExtractor.State state) {
        List<RankStep> out = new ArrayList<>();
        for (Map.Entry<Integer, StepExtractor.Seen> e : state.lastByRank().entrySet()) {
            out.add(new RankStep(e.getKey(), e.getValue().step(), e.getValue().ts()));
        }
        out.sort(java.util.Comparator.comparingInt(RankStep::rank));
        return out;
    }

    /** The extractor state a saved file state continues. */
    static StepExtractor.State extractorState(FileState state) {
        Map<Integer, StepExtractor.Seen> ranks = new java.util.HashMap<>();
        for (RankStep r : state.ranks()) {
            ranks.put(r.rank(), new StepExtractor.Seen(r.step(), r.ts()));
        }
        return new StepExtractor.State(ranks, state.stretch());
    }
}
