package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * De-duplication remembers which batches were applied, not a high-water mark: a batch with {@code seq} 2^53−1 under
 * an agent's id does not make the agent's later batches duplicates, before or after a collector restart.
 */
@Timeout(60)
class ForgedSeqTest {

    private static final long FORGED = (1L << 53) - 1;

    @TempDir
    Path dataDir;

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));

    private Fleet fleet(AppliedLedger ledger) {
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        fleet.keepAppliedIn(ledger);
        return fleet;
    }

    private boolean duplicate(Fleet fleet, long seq) {
        return fleet.ingestBatch(batch("node-1", "agent-a", seq,
                List.of(gpu(clock.seconds(), 0, "GPU-0", 1L << 30, 0.9)), List.of(), List.of())).duplicate();
    }

    @Test
    void aForgedSeqDoesNotSilenceTheAgentBeforeOrAfterARestart() {
        Fleet first = fleet(AppliedLedger.open(dataDir));
        for (long seq = 1; seq <= 5; seq++) {
            assertThat(duplicate(first, seq)).isFalse();
        }
        assertThat(duplicate(first, FORGED)).isFalse();
        assertThat(duplicate(first, FORGED)).as("the forged batch itself, replayed").isTrue();
        assertThat(duplicate(first, 6)).as("the agent's next batch").isFalse();
        assertThat(duplicate(first, 6)).as("its replay").isTrue();
        assertThat(duplicate(first, 3)).as("an older batch it sent").isTrue();
        first.closeLedger();

        Fleet restarted = fleet(AppliedLedger.open(dataDir));
        assertThat(duplicate(restarted, 6)).as("a replay after the restart").isTrue();
        assertThat(duplicate(restarted, FORGED)).isTrue();
        assertThat(duplicate(restarted, 7)).as("the agent's next batch after the restart").isFalse();
        assertThat(restarted.agents()).singleElement().satisfies(a -> assertThat(a.lastSeq()).isEqualTo(7));
        restarted.closeLedger();
    }

    @Test
    void theWindowRemembersExactlyTheNumbersAppliedInItsReach() {
        AppliedSeqs seqs = new AppliedSeqs();
        Set<Long> reference = new HashSet<>();
        Random random = new Random(43);
        long top = 10_000;
        for (int i = 0; i < 20_000; i++) {
            long seq = top - 200 + random.nextInt(300); // mostly forward, some replays and gaps
            top = Math.max(top, seq);
            if (seqs.applied(seq)) {
                assertThat(reference).contains(seq);
            }
            seqs.add(seq);
            reference.add(seq);
            final long newest = top;
            reference.removeIf(s -> newest - s >= AppliedSeqs.WIDTH);
        }
        for (long seq = top - AppliedSeqs.WIDTH + 1; seq <= top; seq++) {
            assertThat(seqs.applied(seq)).as("seq %d", seq).isEqualTo(reference.contains(seq));
        }
        AppliedSeqs copy = new AppliedSeqs();
        seqs.encode().forEach(copy::decode);
        for (long seq = top - AppliedSeqs.WIDTH + 1; seq <= top; seq++) {
            assertThat(copy.applied(seq)).isEqualTo(seqs.applied(seq));
        }
    }
}
