package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The eight-bytes-at-a-time searches agree with the obvious loops at every offset and length. */
class ByteScanTest {

    @Test
    void indexOfEitherMatchesANaiveScan() {
        Random random = new Random(3);
        byte[] alphabet = "ab\n\r\u0001\u00ff".getBytes(StandardCharsets.ISO_8859_1);
        for (int round = 0; round < 20_000; round++) {
            byte[] bytes = new byte[random.nextInt(40)];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = random.nextInt(6) == 0 ? alphabet[random.nextInt(alphabet.length)] : (byte) random.nextInt(256);
            }
            int from = bytes.length == 0 ? 0 : random.nextInt(bytes.length + 1);
            int to = from + random.nextInt(bytes.length - from + 1);
            int expected = -1;
            for (int i = from; i < to; i++) {
                if (bytes[i] == '\n' || bytes[i] == '\r') {
                    expected = i;
                    break;
                }
            }
            assertThat(ByteScan.indexOfEither(bytes, from, to, (byte) '\n', (byte) '\r')).isEqualTo(expected);
        }
    }

    @Test
    void containsMatchesStringIndexOf() {
        Random random = new Random(5);
        List<String> needles = new ArrayList<>(List.of("time_all:", "Global Step:", "(step=", "s/it", "| Step ", "a"));
        String alphabet = "time_al:Gob Sp(s=/|\n";
        for (int round = 0; round < 20_000; round++) {
            StringBuilder sb = new StringBuilder();
            int n = random.nextInt(60);
            for (int i = 0; i < n; i++) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String needle = needles.get(random.nextInt(needles.size()));
            if (random.nextInt(4) == 0) {
                sb.insert(random.nextInt(sb.length() + 1), needle);
            }
            String prefix = "xy".repeat(random.nextInt(3));
            byte[] bytes = (prefix + sb + "zz").getBytes(StandardCharsets.US_ASCII);
            ByteScan.Needle prepared = ByteScan.Needle.of(needle.getBytes(StandardCharsets.US_ASCII));
            assertThat(ByteScan.contains(bytes, prefix.length(), sb.length(), prepared))
                    .as("%s in %s", needle, sb).isEqualTo(sb.indexOf(needle) >= 0);
        }
    }
}
