package dev.trainwatch.agent.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The attributor's packed table of each process's parent answers as the map it replaced. */
class ParentTableTest {

    @Test
    void answersAsAMapOfPidToParentForAFewThousandProcessesUpToPidMax() {
        Random random = new Random(24);
        Map<Long, Long> expected = new HashMap<>();
        long[] entries = new long[5000];
        int n = 0;
        while (n < 3000) {
            long pid = 1 + random.nextInt(4_194_304); // Linux's largest pid_max
            if (expected.containsKey(pid)) {
                continue;
            }
            // Kernel threads are children of 2, init's parent is 0, the rest anything up to pid_max.
            long ppid = switch (random.nextInt(4)) {
                case 0 -> 2;
                case 1 -> 0;
                default -> random.nextInt(4_194_305);
            };
            expected.put(pid, ppid);
            entries[n++] = Attributor.ParentTable.entry(pid, ppid);
        }
        long[] table = Attributor.ParentTable.of(entries, n);
        assertThat(table).hasSize(3000);
        for (Map.Entry<Long, Long> e : expected.entrySet()) {
            assertThat(Attributor.ParentTable.parentOf(table, e.getKey())).isEqualTo(e.getValue());
        }
        for (int i = 0; i < 3000; i++) {
            long pid = 1 + random.nextInt(4_194_304);
            assertThat(Attributor.ParentTable.parentOf(table, pid)).isEqualTo(expected.getOrDefault(pid, -1L));
        }
        // Below the first entry and above the last (the search's insertion point at either end); a parent of 0.
        assertThat(Attributor.ParentTable.parentOf(table, 0)).isEqualTo(-1);
        assertThat(Attributor.ParentTable.parentOf(table, 4_194_305)).isEqualTo(-1);
        long[] one = Attributor.ParentTable.of(new long[] {Attributor.ParentTable.entry(7, 0)}, 1);
        assertThat(Attributor.ParentTable.parentOf(one, 7)).isZero();
        assertThat(Attributor.ParentTable.parentOf(one, 6)).isEqualTo(-1);
        assertThat(Attributor.ParentTable.parentOf(one, 8)).isEqualTo(-1);
        assertThat(Attributor.ParentTable.parentOf(null, 1)).isEqualTo(-1);
        assertThat(Attributor.ParentTable.parentOf(Attributor.ParentTable.of(new long[0], 0), 1)).isEqualTo(-1);
    }
}
