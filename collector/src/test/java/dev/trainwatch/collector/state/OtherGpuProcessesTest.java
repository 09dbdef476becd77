package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.batch;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 40: another process holding memory on a run's GPU is named with its PID, how much and since when, from the
 * agent's NVML process list and its attributions (apache/mxnet#6798: "another program used a lot of GPU memory").
 */
class OtherGpuProcessesTest {

    private static final long GIB = 1L << 30;
    private static final String UUID = "GPU-4090-0";

    private static GpuProcess process(long pid, double gib) {
        return new GpuProcess(pid, (long) (gib * GIB), null, null);
    }

    @Test
    void theRunsOwnAndAnotherRunsProcessesAreToldApartFromStrangersAndFirstSeenIsKept() {
        Map<Long, String> runOfPid = Map.of(100L, "lora", 101L, "lora", 700L, "other");
        List<GpuProcess> listed = List.of(process(100, 16), process(101, 0.4), process(700, 3), process(4242, 6));
        List<OtherProcess> first = GpuProcesses.others(listed, runOfPid, "lora", List.of(), 1000);
        assertThat(first).extracting(OtherProcess::pid).containsExactly(4242L, 700L);
        assertThat(first.get(1).runId()).isEqualTo("other");
        List<OtherProcess> later = GpuProcesses.others(listed, runOfPid, "lora", first, 1060);
        assertThat(later.get(0).sinceTs()).isEqualTo(1000);
        // No process of the run on the list: its PIDs are not NVML's (another PID namespace), so none is a stranger.
        assertThat(GpuProcesses.others(List.of(process(4242, 6), process(9, 16)), runOfPid, "lora", List.of(), 1000))
                .isEmpty();
    }

    private static GpuSample sample(double ts, long usedBytes, List<GpuProcess> processes) {
        return new GpuSample(ts, 0, UUID, "NVIDIA GeForce RTX 4090", null, 24L * GIB, usedBytes, null,
                24L * GIB - usedBytes, 0.97, null, null, 2_520_000_000L, 2_520_000_000L, null, null, List.of(), 400.0,
                450.0, null, 65.0, 0, processes, false, null);
    }

    @Test
    void aStrangerOnTheRunsCardReachesOomRiskFromTheAgentsBatches() {
        SettableClock clock = new SettableClock(Instant.parse("2026-04-01T00:00:00Z"));
        FakePredictor predictor = new FakePredictor();
        predictor.basePeakBytes = 16 * GIB;
        predictor.perSampleBytes = 0;
        Fleet fleet = new Fleet(predictor, clock, FleetSettings.defaults(), DetectorSettings.defaults());
        fleet.putSpec("lora", new RunSpec("pixart-sigma-xl-2", "a100-80gb", 1, 1, 1024, null, null, null, "bf16",
                null, null, null, "precomputed", null, null, null, null));
        RunAttribution run = new RunAttribution("lora", List.of(100L), List.of(UUID),
                List.of(new RankInfo(100, 0, 0, 1, List.of(UUID))), null, false, null, null, null, null, null);
        for (int i = 0; i < 12; i++) {
            // The run's rank holds 17 GiB of the 23.5 GiB in use; pid 4242 (not the run's) 6.4 GiB; a display server 0.2 GiB.
            List<GpuProcess> listed = List.of(process(100, 17), process(4242, 6.4), process(2110, 0.2));
            fleet.ingestBatch(batch("node-1", "agent-1", i + 1, List.of(sample(clock.seconds(), 25_200_000_000L,
                    listed)), List.of(run), List.of()));
            fleet.tick();
            clock.advanceSeconds(5);
        }
        Anomaly oom = fleet.run("lora").orElseThrow().anomalies().stream()
                .filter(a -> a.kind() == AnomalyKind.OOM_RISK).findFirst().orElseThrow();
        assertThat(oom.message()).contains("not this run's: pid 4242 holds 6.4 GiB since 00:00:00 UTC")
                .doesNotContain("2110");
        assertThat(oom.suggestion()).startsWith("free 6.4 GiB on GPU 0 on node-1: stop pid 4242");
    }
}
