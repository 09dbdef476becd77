package dev.trainwatch.agent.failure;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * A run's last lines for {@link FailureClassifier}: from the last {@link #MAX_BYTES} of a file (a crashed run's log can
 * be gigabytes). {@code \r} frames count as lines; ANSI codes are removed.
 */
public final class OutputTail {

    public static final int MAX_LINES = 200;
    public static final int MAX_BYTES = 64 * 1024;
    private static final int MAX_LINE_CHARS = 2000;

    private OutputTail() {
    }

    public static List<String> read(Path file, int maxLines, int maxBytes) {
        if (!Files.isRegularFile(file)) {
            return List.of(); // a FIFO or a device would block the reader, and holds no tail to read
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long length = f.length();
            long from = Math.max(0, length - maxBytes);
            byte[] buf = new byte[(int) (length - from)];
            f.seek(from);
            f.readFully(buf);
            String text = new String(buf, StandardCharsets.UTF_8);
            if (from > 0) {
                int nl = text.indexOf('\n');
                text = nl >= 0 ? text.substring(nl + 1) : text; // drop the partial first line
            }
            List<String> lines = Arrays.stream(text.split("\r\n|\r|\n", -1)).filter(l -> !l.isEmpty()).toList();
            return lines.subList(Math.max(0, lines.size() - maxLines), lines.size()).stream().map(OutputTail::clean)
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** An over-long line keeps its beginning and end (an OOM names the allocation first, the reserved figures last). */
    private static String clean(String line) {
        String s = line.replaceAll("\u001b\\[[0-9;?]*[A-Za-z]", "");
        int half = MAX_LINE_CHARS / 2;
        return s.length() > MAX_LINE_CHARS ? s.substring(0, half) + " … " + s.substring(s.length() - half) : s;
    }
}
