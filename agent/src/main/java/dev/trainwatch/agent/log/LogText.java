package dev.trainwatch.agent.log;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** ANSI colour codes, a logger's timestamp prefix and a launcher's rank prefix. */
final class LogText {

    /** CSI, OSC and short {@code ESC [intermediates] final} escapes (loggers' colours, tqdm's cursor). */
    private static final Pattern ANSI = Pattern.compile(
            "\u001b(?:\\[[^\\x40-\\x7e]*[\\x40-\\x7e]?|](?:[^\u0007\u001b]|\u001b(?!\\\\))*(?:\u0007|\u001b\\\\)?"
                    + "|[\\x20-\\x2f]*[\\s\\S]?)");

    /**
     * Python logging's {@code 2024-05-01 12:00:00,123}, DiT's and Open-Sora's {@code [%(asctime)s]}, ISO-8601 with an
     * optional offset, accelerate's {@code 05/01/2024 12:00:00}, starting within the line's first 49 characters.
     */
    private static final Pattern TIMESTAMP = Pattern.compile("^.{0,48}?(?:(\\d{4})-(\\d\\d)-(\\d\\d)[ T]"
            + "(\\d\\d):(\\d\\d):(\\d\\d)(?:[,.](\\d+))?(Z|[+-]\\d\\d(?::?\\d\\d)?)?"
            + "|(\\d\\d)/(\\d\\d)/(\\d{4}) (\\d\\d):(\\d\\d):(\\d\\d))", Pattern.DOTALL);

    private static final Pattern RANK_PREFIX = Pattern.compile("\\[(?:rank|default)(\\d+)]:");

    private LogText() {
    }

    static String stripAnsi(String s) {
        return s.indexOf('\u001b') < 0 ? s : ANSI.matcher(s).replaceAll("");
    }

    /** Seconds since the epoch; a stamp without an offset is in {@code zone} (asctime is local). */
    static Double timestamp(String s, ZoneId zone) {
        Matcher m = TIMESTAMP.matcher(s);
        // the prefix counts code points, the limit is in chars
        if (!m.lookingAt() || Math.max(m.start(1), m.start(9)) > 48) {
            return null;
        }
        try {
            if (m.start(1) < 0) {
                return (double) LocalDateTime.of(num(m, 11), num(m, 9), num(m, 10), num(m, 12), num(m, 13), num(m, 14))
                        .atZone(zone).toEpochSecond();
            }
            LocalDateTime local = LocalDateTime.of(num(m, 1), num(m, 2), num(m, 3), num(m, 4), num(m, 5), num(m, 6));
            String digits = m.group(7);
            double fraction = digits == null ? 0 : Double.parseDouble("0." + digits.substring(0, Math.min(9,
                    digits.length())));
            return local.atZone(m.group(8) == null ? zone : ZoneOffset.of(m.group(8))).toEpochSecond() + fraction;
        } catch (DateTimeException e) {
            return null;
        }
    }

    private static int num(Matcher m, int group) {
        return Integer.parseInt(m.group(group));
    }

    /** torchrun's {@code [rank3]:} or {@code [default3]:} ({@code --tee}/{@code --log-line-prefix-template}). */
    static Integer rankPrefix(String s) {
        Matcher m = RANK_PREFIX.matcher(s);
        if (!m.lookingAt() || m.end(1) > 16) {
            return null;
        }
        long r = Long.parseLong(m.group(1));
        return r > Integer.MAX_VALUE ? null : (int) r;
    }
}
