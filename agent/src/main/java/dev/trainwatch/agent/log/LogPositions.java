package dev.trainwatch.agent.log;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.JsonStreams;
import dev.trainwatch.protocol.wire.WireCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What the agent has shipped from each log file, in {@code log-positions.json} beside its spool, so a restart resumes
 * after the last line shipped. A file is known by device, inode and a hash of its first line (an inode reused, or a
 * file truncated and written anew, has another); the newest {@value #MAX_FILES} are kept, so a symlink swapped back
 * resumes. Written to a temporary name and renamed; an unreadable file is one line and an empty start. Streaming
 * jackson-core, not databind: the agent loads no databind. Thread-safe.
 */
public final class LogPositions {

    private static final System.Logger LOG = System.getLogger(LogPositions.class.getName());

    public static final String FILE_NAME = "log-positions.json";
    static final int MAX_FILES = 16;

    public record RankStep(int rank, long step, double ts) {
    }

    /** {@code position}: just after the last line consumed; {@code midLine}: inside a skipped over-long line. */
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
            Files.write(temp, toJson(kept));
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

    static byte[] toJson(List<FileState> states) {
        return WireCodec.toBytes(states.stream().map(s -> s == null ? null : stateJson(s)).toList());
    }

    private static Map<String, Object> stateJson(FileState s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("file_key", s.fileKey());
        m.put("head", s.head());
        m.put("path", s.path());
        m.put("position", s.position());
        m.put("mid_line", s.midLine());
        m.put("stretch", s.stretch());
        if (s.ranks() != null) {
            m.put("ranks", s.ranks().stream().map(r -> r == null ? null : rankJson(r)).toList());
        }
        m.put("updated", s.updated());
        return m;
    }

    private static Map<String, Object> rankJson(RankStep r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rank", r.rank());
        m.put("step", r.step());
        m.put("ts", r.ts());
        return m;
    }

    static List<FileState> parse(byte[] bytes) throws IOException {
        try (JsonParser p = JsonStreams.FACTORY.createParser(bytes)) {
            expect(p, p.nextToken(), JsonToken.START_ARRAY, "an array");
            List<FileState> states = new ArrayList<>();
            JsonToken t;
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                if (t == JsonToken.VALUE_NULL) {
                    states.add(null);
                    continue;
                }
                expect(p, t, JsonToken.START_OBJECT, "an object");
                String fileKey = null;
                String head = null;
                String path = null;
                long position = 0;
                boolean midLine = false;
                int stretch = 0;
                List<RankStep> ranks = null;
                long updated = 0;
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    JsonToken v = p.nextToken();
                    switch (name) {
                        case "file_key" -> fileKey = text(p, v);
                        case "head" -> head = text(p, v);
                        case "path" -> path = text(p, v);
                        case "position" -> position = number(p, v).longValue();
                        case "mid_line" -> midLine = flag(p, v);
                        case "stretch" -> stretch = number(p, v).intValue();
                        case "ranks" -> ranks = rankSteps(p, v);
                        case "updated" -> updated = number(p, v).longValue();
                        default -> p.skipChildren();
                    }
                }
                expect(p, p.currentToken(), JsonToken.END_OBJECT, "a field name");
                states.add(new FileState(fileKey, head, path, position, midLine, stretch, ranks, updated));
            }
            if (p.nextToken() != null) {
                throw new IOException("more after the array");
            }
            return states;
        }
    }

    private static List<RankStep> rankSteps(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        expect(p, t, JsonToken.START_ARRAY, "an array of ranks");
        List<RankStep> out = new ArrayList<>();
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            expect(p, t, JsonToken.START_OBJECT, "a rank object");
            int rank = 0;
            long step = 0;
            double ts = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "rank" -> rank = number(p, v).intValue();
                    case "step" -> step = number(p, v).longValue();
                    case "ts" -> ts = number(p, v).doubleValue();
                    default -> p.skipChildren();
                }
            }
            expect(p, p.currentToken(), JsonToken.END_OBJECT, "a field name");
            out.add(new RankStep(rank, step, ts));
        }
        return out;
    }

    private static String text(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        expect(p, t, JsonToken.VALUE_STRING, "a string");
        return p.getText();
    }

    private static Number number(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.VALUE_NUMBER_INT && t != JsonToken.VALUE_NUMBER_FLOAT) {
            throw new IOException("expected a number for " + p.currentName() + ", found " + t);
        }
        return p.getNumberValue();
    }

    private static boolean flag(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.VALUE_TRUE && t != JsonToken.VALUE_FALSE) {
            throw new IOException("expected true or false for " + p.currentName() + ", found " + t);
        }
        return t == JsonToken.VALUE_TRUE;
    }

    private static void expect(JsonParser p, JsonToken t, JsonToken wanted, String what) throws IOException {
        if (t != wanted) {
            throw new IOException("expected " + what + " at " + p.currentLocation().getCharOffset() + ", found "
                    + (t == null ? "the end" : t.asString() != null ? t.asString() : t.toString()));
        }
    }

    static List<RankStep> ranks(StepExtractor.State state) {
        return state.lastByRank().entrySet().stream()
                .map(e -> new RankStep(e.getKey(), e.getValue().step(), e.getValue().ts()))
                .sorted(Comparator.comparingInt(RankStep::rank)).toList();
    }

    static StepExtractor.State extractorState(FileState state) {
        return new StepExtractor.State(state.ranks().stream().collect(Collectors.toMap(RankStep::rank,
                r -> new StepExtractor.Seen(r.step(), r.ts()), (first, last) -> last)), state.stretch());
    }
}
