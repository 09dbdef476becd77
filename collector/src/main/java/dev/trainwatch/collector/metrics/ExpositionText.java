package dev.trainwatch.collector.metrics;

import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.TextFormatUtil;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders a scrape's snapshots as text, byte for byte what client_java's own writer (the one Micrometer uses) would
 * write, at a fraction of the cost for the bulk of a large fleet's series.
 *
 * <p>client_java's text writers push every name, label and value through a {@code BufferedWriter} over an
 * {@code OutputStreamWriter} (a synchronized call and a copy per piece, then a charset encoder): at 82,000 series
 * that was half of a scrape's CPU. Here the library still writes every family's header ({@code # TYPE}, {@code #
 * UNIT}, {@code # HELP}) and first sample, so names, suffixes and metadata stay the library's; only the remaining
 * samples of plain gauge, counter and info families are written straight into bytes, in the one shape those lines
 * have: {@code name{label="value",...} value}. Anything else — summaries, histograms, state sets, samples with
 * timestamps or exemplars, names that would need quoting, a family whose first sample the library wrote as more
 * than one line — the library writes whole. {@code ExpositionTextTest} compares both on every family shape.
 *
 * <p>Not thread-safe: one instance per scrape at a time (the exporter serialises scrapes).
 */
final class ExpositionText {

    private static final byte[] EOF = "# EOF\n".getBytes(StandardCharsets.US_ASCII);

    private final ExpositionFormatWriter library;
    private final boolean openMetrics;
    /** Scratch for the library's output of one family. */
    private final ByteArrayOutputStream scratch = new ByteArrayOutputStream(4096);
    /** Label names (as Prometheus writes them) already checked to need no quoting, with their bytes. */
    private final Map<String, byte[]> labelNames = new HashMap<>();
    private final String[] lastNames = new String[8];
    private final byte[][] lastBytes = new byte[8][];

    /**
     * @param library     the writer Micrometer's registry uses for this format
     * @param openMetrics whether that writer is OpenMetrics text (ends with {@code # EOF})
     */
    ExpositionText(ExpositionFormatWriter library, boolean openMetrics) {
        this.library = library;
        this.openMetrics = openMetrics;
    }

    /** The exposition of {@code snapshots}, UTF-8. */
    byte[] write(MetricSnapshots snapshots) {
        Bytes out = new Bytes(64 * 1024);
        for (MetricSnapshot family : TextFormatUtil.mergeDuplicates(snapshots)) {
            List<? extends DataPointSnapshot> points = family.getDataPoints();
            if (points.isEmpty()) {
                continue;
            }
            if (!plain(family)) {
                byLibrary(family, out);
                continue;
            }
            byte[] head = libraryBytes(firstOnly(family));
            int dataLine = lastLineStart(head);
            int nameEnd = nameEnd(head, dataLine);
            if (dataLine < 0 || nameEnd < 0 || head[dataLine] == '#' || sampleLines(head) != 1) {
                byLibrary(family, out);
                continue;
            }
            out.append(head, 0, head.length);
            byte[] name = Arrays.copyOfRange(head, dataLine, nameEnd);
            for (int i = 1; i < points.size(); i++) {
                DataPointSnapshot point = points.get(i);
                out.append(name, 0, name.length);
                labels(point.getLabels(), out);
                out.put((byte) ' ');
                if (family instanceof InfoSnapshot) {
                    out.put((byte) '1');
                } else {
                    value(point instanceof GaugeSnapshot.GaugeDataPointSnapshot gauge ? gauge.getValue()
                            : ((CounterSnapshot.CounterDataPointSnapshot) point).getValue(), out);
                }
                out.put((byte) '\n');
            }
        }
        if (openMetrics) {
            out.append(EOF, 0, EOF.length);
        }
        return out.toByteArray();
    }

    /** Whether every sample after the first can be written here: the three plain kinds, no timestamps or exemplars. */
    private boolean plain(MetricSnapshot family) {
        if (!(family instanceof GaugeSnapshot || family instanceof CounterSnapshot || family instanceof InfoSnapshot)) {
            return false;
        }
        for (DataPointSnapshot point : family.getDataPoints()) {
            if (point.hasScrapeTimestamp() || point.hasCreatedTimestamp()) {
                return false;
            }
            if (point instanceof GaugeSnapshot.GaugeDataPointSnapshot gauge && gauge.getExemplar() != null) {
                return false;
            }
            if (point instanceof CounterSnapshot.CounterDataPointSnapshot counter && counter.getExemplar() != null) {
                return false;
            }
            Labels labels = point.getLabels();
            for (int i = 0; i < labels.size(); i++) {
                if (labelName(i, labels.getPrometheusName(i)) == null) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The bytes of a label name that needs no quoting, or null when it would need it. Samples of one family mostly
     * share their label names' very strings, so the last string seen at each position answers first.
     */
    private byte[] labelName(int position, String name) {
        if (position < lastNames.length && lastNames[position] == name) {
            return lastBytes[position];
        }
        byte[] bytes = labelName(name);
        if (position < lastNames.length) {
            lastNames[position] = name;
            lastBytes[position] = bytes;
        }
        return bytes;
    }

    private byte[] labelName(String name) {
        byte[] bytes = labelNames.get(name);
        if (bytes == null && PrometheusNaming.isValidLegacyLabelName(name)) {
            bytes = name.getBytes(StandardCharsets.UTF_8);
            labelNames.put(name, bytes);
        }
        return bytes;
    }

    private void labels(Labels labels, Bytes out) {
        if (labels.isEmpty()) {
            return;
        }
        out.put((byte) '{');
        for (int i = 0; i < labels.size(); i++) {
            if (i > 0) {
                out.put((byte) ',');
            }
            byte[] name = labelName(i, labels.getPrometheusName(i));
            out.append(name, 0, name.length);
            out.put((byte) '=');
            out.put((byte) '"');
            escaped(labels.getValue(i), out);
            out.put((byte) '"');
        }
        out.put((byte) '}');
    }

    /** A label value as the text formats escape it: backslash, double quote and newline; UTF-8 otherwise. */
    static void escaped(String value, Bytes out) {
        int n = value.length();
        out.reserve(n);
        for (int i = 0; i < n; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                switch (c) {
                    case '\\' -> out.ascii("\\\\");
                    case '"' -> out.ascii("\\\"");
                    case '\n' -> out.ascii("\\n");
                    default -> out.put((byte) c);
                }
            } else {
                // Rare: the rest of the value through the JDK's encoder (surrogate pairs and all), then escaped.
                byte[] rest = escapeAscii(value.substring(i)).getBytes(StandardCharsets.UTF_8);
                out.append(rest, 0, rest.length);
                return;
            }
        }
    }

    private static String escapeAscii(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /**
     * A sample value as client_java writes it: {@code +Inf}, {@code -Inf}, else {@link Double#toString(double)}
     * (whole numbers below ten million written directly, which is what that method prints for them).
     */
    static void value(double d, Bytes out) {
        if (d == Double.POSITIVE_INFINITY) {
            out.ascii("+Inf");
        } else if (d == Double.NEGATIVE_INFINITY) {
            out.ascii("-Inf");
        } else if (d == (long) d && Math.abs(d) < 1e7 && !(d == 0 && 1 / d < 0)) {
            long v = (long) d;
            if (v < 0) {
                out.put((byte) '-');
                v = -v;
            }
            out.digits(v);
            out.ascii(".0");
        } else {
            out.ascii(Double.toString(d));
        }
    }

    private void byLibrary(MetricSnapshot family, Bytes out) {
        byte[] bytes = libraryBytes(MetricSnapshots.of(family));
        out.append(bytes, 0, bytes.length);
    }

    /** What the library writes for these snapshots, without OpenMetrics' closing {@code # EOF}. */
    private byte[] libraryBytes(MetricSnapshots snapshots) {
        scratch.reset();
        try {
            library.write(scratch, snapshots);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] bytes = scratch.toByteArray();
        if (openMetrics && endsWith(bytes, EOF)) {
            return Arrays.copyOf(bytes, bytes.length - EOF.length);
        }
        return bytes;
    }

    private static MetricSnapshots firstOnly(MetricSnapshot family) {
        if (family instanceof GaugeSnapshot gauge) {
            return MetricSnapshots.of(new GaugeSnapshot(gauge.getMetadata(), List.of(gauge.getDataPoints().get(0))));
        }
        if (family instanceof CounterSnapshot counter) {
            return MetricSnapshots.of(
                    new CounterSnapshot(counter.getMetadata(), List.of(counter.getDataPoints().get(0))));
        }
        InfoSnapshot info = (InfoSnapshot) family;
        return MetricSnapshots.of(new InfoSnapshot(info.getMetadata(), List.of(info.getDataPoints().get(0))));
    }

    private static boolean endsWith(byte[] bytes, byte[] suffix) {
        return bytes.length >= suffix.length && Arrays.equals(bytes, bytes.length - suffix.length, bytes.length,
                suffix, 0, suffix.length);
    }

    /** Where the last line of {@code text} (which ends with a newline) starts, or -1. */
    private static int lastLineStart(byte[] text) {
        if (text.length == 0 || text[text.length - 1] != '\n') {
            return -1;
        }
        int i = text.length - 2;
        while (i >= 0 && text[i] != '\n') {
            i--;
        }
        return i + 1;
    }

    /** How many lines of {@code text} are samples (do not start with '#'). */
    private static int sampleLines(byte[] text) {
        int lines = 0;
        boolean lineStart = true;
        for (byte b : text) {
            if (lineStart && b != '#') {
                lines++;
            }
            lineStart = b == '\n';
        }
        return lines;
    }

    /** The end of the plain metric name that starts the line at {@code from} (before '{' or ' '), or -1. */
    private static int nameEnd(byte[] text, int from) {
        if (from < 0) {
            return -1;
        }
        for (int i = from; i < text.length; i++) {
            byte b = text[i];
            if (b == '{' || b == ' ') {
                return i > from ? i : -1;
            }
            if (!(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == ':')) {
                return -1;
            }
        }
        return -1;
    }

    /** A growable byte buffer without locks. */
    static final class Bytes {
        private byte[] buf;
        private int size;

        Bytes(int capacity) {
            buf = new byte[capacity];
        }

        void reserve(int more) {
            if (size + more > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
            }
        }

        void put(byte b) {
            if (size == buf.length) {
                reserve(1);
            }
            buf[size++] = b;
        }

        void append(byte[] bytes, int from, int length) {
            reserve(length);
            System.arraycopy(bytes, from, buf, size, length);
            size += length;
        }

        /** Text known to be ASCII. */
        void ascii(String s) {
            int n = s.length();
            reserve(n);
            for (int i = 0; i < n; i++) {
                buf[size++] = (byte) s.charAt(i);
            }
        }

        /** A non-negative whole number in decimal. */
        void digits(long v) {
            reserve(20);
            int start = size;
            do {
                buf[size++] = (byte) ('0' + v % 10);
                v /= 10;
            } while (v > 0);
            for (int i = start, j = size - 1; i < j; i++, j--) {
                byte t = buf[i];
                buf[i] = buf[j];
                buf[j] = t;
            }
        }

        int size() {
            return size;
        }

        byte[] toByteArray() {
            return Arrays.copyOf(buf, size);
        }
    }
}
