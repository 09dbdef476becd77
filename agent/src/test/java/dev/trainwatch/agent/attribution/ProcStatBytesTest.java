package dev.trainwatch.agent.attribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@link ProcStat#parse(byte[], int)}, which scans the fields without a regex, reads every stat line as a plain split
 * on runs of spaces would ({@link #reference}, the parser it replaced), and refuses what that refuses.
 */
class ProcStatBytesTest {

    /** {@code pid (comm) rest...}, the rest stripped and split on {@code " +"}: fields 4, 22, 14, 15, 24, 3. */
    private static ProcStat reference(String line) {
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        if (open <= 0 || close < open) {
            throw new IllegalArgumentException("not a stat line");
        }
        String[] rest = line.substring(close + 1).strip().split(" +");
        if (rest.length < 22) {
            throw new IllegalArgumentException("short");
        }
        return new ProcStat(Long.parseLong(line.substring(0, open).strip()), line.substring(open + 1, close),
                Long.parseLong(rest[1]), Long.parseLong(rest[19]), Long.parseLong(rest[11]), Long.parseLong(rest[12]),
                Long.parseLong(rest[21]), rest[0].charAt(0));
    }

    private static ProcStat bytes(String line) {
        byte[] raw = (line + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] padded = new byte[raw.length + 7];
        System.arraycopy(raw, 0, padded, 0, raw.length);
        return ProcStat.parse(padded, raw.length);
    }

    private static final String TAIL = " 0 0 0 0 0 12 34 0 0 20 0 1 0 61290 123456789 2345 18446744073709551615 1 1 0 0 0 0 0 0 0";

    @Test
    void sameRecordAsASplitOnRunsOfSpaces() {
        for (String line : List.of(
                "4101 (python3) R 4100 4101 4100" + TAIL,
                "900 ((sd-pam)) S 1 900 900" + TAIL,
                "4010 (tmux: server) S 1 4010 4010" + TAIL,
                "77 (a ) b) c) D 2 0 0" + TAIL,
                "12 (naïve ünïcode) S 1 12 12" + TAIL,
                "5 (x)  S  3  5 5" + TAIL.replace(" ", "  "),
                "  7 (y) Z 1 7 7" + TAIL + "   ",
                "8 (z) S -1 8 8" + TAIL,
                "9 (big) S 1 9 9" + TAIL.replace("2345 ", "99999999999999999999 "))) {
            ProcStat expected;
            try {
                expected = reference(line.strip());
            } catch (IllegalArgumentException e) {
                assertThatThrownBy(() -> bytes(line)).isInstanceOf(IllegalArgumentException.class);
                continue;
            }
            assertThat(bytes(line)).as(line).isEqualTo(expected);
        }
    }

    @Test
    void readsTheFieldsProcFiveNames() {
        // fields 3 to 25 as proc(5) numbers them: state, ppid, ..., utime (14), stime (15), ..., starttime (22),
        // vsize, rss (24), rsslim
        assertThat(bytes("1234 (pt_main_thread) S 1200 1234 1200 0 -1 4194560 52512 0 12 0 1500 250 0 0 20 0 9 0"
                + " 61290 9876543210 45678 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0"))
                .isEqualTo(new ProcStat(1234, "pt_main_thread", 1200, 61290, 1500, 250, 45678, 'S'));
    }

    @Test
    void notAStatLineIsRefusedAsBefore() {
        for (String line : List.of("", "garbage", "12 (x) S 1 2 3", "(x) S" + TAIL, "12 x) S" + TAIL, "a (x) S 1" + TAIL,
                "12 (x) S a 12 12" + TAIL)) {
            assertThatThrownBy(() -> bytes(line)).as(line).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void everyProcessOfThisMachineReadsTheSame() throws IOException {
        try (Stream<Path> dirs = Files.list(Path.of("/proc"))) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().matches("\\d+")).limit(200).toList()) {
                byte[] raw;
                try {
                    raw = Files.readAllBytes(dir.resolve("stat"));
                } catch (IOException gone) {
                    continue;
                }
                assertThat(ProcStat.parse(raw, raw.length))
                        .isEqualTo(reference(new String(raw, StandardCharsets.UTF_8).strip()));
            }
        }
    }
}
