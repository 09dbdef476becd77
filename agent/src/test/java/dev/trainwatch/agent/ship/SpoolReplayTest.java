package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.protocol.testing.TestCollector;
import dev.trainwatch.protocol.AgentBatch;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code trainwatch agent --replay-spool}: a spool an agent left, delivered in order to a collector, then gone. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SpoolReplayTest {

    private static void spoolBatches(Path dir, long... seqs) {
        Spool spool = new Spool(dir, 1 << 20);
        for (int i = 0; i < seqs.length; i++) {
            Payload p = Payload.samples(new AgentBatch("gpu-node", "agent-1", seqs[i], List.of(), List.of(),
                    List.of(), null, null, 1.0e9, null));
            spool.append(new Shipment(i, p.method(), p.path(), p.gzipBody(), p.what()));
        }
    }

    @Test
    void deliversEveryBatchInOrderAndEmptiesTheSpool(@TempDir Path dir) throws Exception {
        spoolBatches(dir, 7, 8, 9);
        try (TestCollector collector = new TestCollector()) {
            SpoolReplay.Outcome outcome = SpoolReplay.replay(dir, collector.uri(), null, Duration.ofSeconds(20));

            assertThat(outcome).isEqualTo(new SpoolReplay.Outcome(3, 3, 0, true, null));
            assertThat(collector.accepted()).extracting(AgentBatch::seq).containsExactly(7L, 8L, 9L);
        }
        assertThat(new Spool(dir, 1 << 20).depth()).isZero();
    }

    @Test
    void batchesTheCollectorRefusesAreCountedNotRetriedForever(@TempDir Path dir) throws Exception {
        spoolBatches(dir, 1, 2);
        try (TestCollector collector = new TestCollector()) {
            collector.answer(batch -> batch.seq() == 1 ? 400 : 200);

            SpoolReplay.Outcome outcome = SpoolReplay.replay(dir, collector.uri(), null, Duration.ofSeconds(20));

            assertThat(outcome.complete()).isTrue();
            assertThat(outcome.delivered()).isEqualTo(1);
            assertThat(outcome.dropped()).isEqualTo(1);
            assertThat(collector.accepted()).extracting(AgentBatch::seq).containsExactly(2L);
        }
    }

    @Test
    void aCollectorThatIsNotThereLeavesTheSpoolAsItWasAndSaysSo(@TempDir Path dir) throws Exception {
        spoolBatches(dir, 1, 2);
        TestCollector gone = new TestCollector();
        gone.close();

        SpoolReplay.Outcome outcome = SpoolReplay.replay(dir, gone.uri(), null, Duration.ofMillis(500));

        assertThat(outcome.complete()).isFalse();
        assertThat(outcome.delivered()).isZero();
        assertThat(outcome.problem()).isNotBlank();
        assertThat(new Spool(dir, 1 << 20).depth()).isEqualTo(2);
    }

    @Test
    void aPathThatIsNotADirectoryIsRefused(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("spool.tar.gz"), "not a spool");

        assertThatThrownBy(() -> SpoolReplay.replay(file, URI.create("http://127.0.0.1:1"), null,
                Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spool.tar.gz");
    }
}
