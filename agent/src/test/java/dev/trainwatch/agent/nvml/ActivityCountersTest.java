package dev.trainwatch.agent.nvml;

import dev.trainwatch.protocol.testing.SettableClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GPM metrics, NVLink counters and PCIe rates through the production JNA path against the fake library playing
 * activity.scenario: readings equal the scenario over the poll interval, what a GPU cannot give is absent (never
 * 0), older drivers without the symbols read the rest, and every GPM sample is freed.
 */
class ActivityCountersTest {

    static final double EPOCH = 1767225600;
    static final double MIB = 1024.0 * 1024.0;

    @TempDir
    Path dir;

    final List<NvmlGpuReader> opened = new ArrayList<>();
    final List<FakeNvml.Control> fakes = new ArrayList<>();
    final SettableClock clock = SettableClock.atSeconds(EPOCH);

    @AfterEach
    void everyAcquireReleased() {
        opened.forEach(NvmlGpuReader::close);
        for (FakeNvml.Control fake : fakes) {
            assertThat(fake.fake_nvml_refcount()).as("nvmlInit without nvmlShutdown").isZero();
            assertThat(fake.fake_nvml_gpm_samples_live()).as("GPM samples not freed").isZero();
        }
    }

    /** Opens a reader on a variant playing the scenario at scenario time t (the reader's clock follows). */
    NvmlGpuReader open(String variant, Path scenario, double t) throws GpuUnavailableException {
        Path lib = FakeNvml.library(variant);
        FakeNvml.Control fake = FakeNvml.control(lib);
        fakes.add(fake);
        fake.play(scenario, t);
        clock.setSeconds(EPOCH + t);
        NvmlGpuReader r = NvmlGpuReader.open(Optional.of(lib), clock);
        opened.add(r);
        return r;
    }

    List<GpuSample> pollAt(NvmlGpuReader reader, double t) {
        fakes.get(fakes.size() - 1).fake_nvml_set_time(t);
        clock.setSeconds(EPOCH + t);
        return reader.readAll();
    }

    Path scenario() {
        return FakeNvml.bundledScenario("activity.scenario", dir);
    }

    @Test
    void gpmMetricsCoverTheIntervalBetweenTwoPolls() throws Exception {
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario(), 5);
        assertThat(BoundSymbols.of(reader)).containsEntry("gpm", "nvmlGpmMetricsGet")
                .containsEntry("field_values", "nvmlDeviceGetFieldValues")
                .containsEntry("pcie_throughput", "nvmlDeviceGetPcieThroughput");

        GpuActivity first = pollAt(reader, 5).get(0).activity();
        // the first poll has one GPM sample and no interval yet: no ratios, but the NVLink counters are there
        assertThat(first.smActiveRatio()).isNull();
        assertThat(first.windowSeconds()).isNull();
        assertThat(first.nvlinkTxBytes()).isEqualTo(kibAt(5, 1_000_000, 5_243_880_000L) * 1024);

        GpuActivity a = pollAt(reader, 6).get(0).activity();
        assertThat(a.windowSeconds()).isCloseTo(1.0, within(1e-9));
        assertThat(a.smActiveRatio()).isCloseTo(0.92, within(1e-9));
        assertThat(a.smOccupancyRatio()).isCloseTo(0.385, within(1e-9));
        assertThat(a.tensorActiveRatio()).isCloseTo(0.61, within(1e-9));
        assertThat(a.tensorHmmaActiveRatio()).isCloseTo(0.58, within(1e-9));
        assertThat(a.dramActiveRatio()).isCloseTo(0.44, within(1e-9));
        assertThat(a.pcieTxBytesPerSecond()).isCloseTo(120 * MIB, within(1e-3));
        assertThat(a.pcieRxBytesPerSecond()).isCloseTo(2048 * MIB, within(1e-3));
        assertThat(a.nvlinkTxBytesPerSecond()).isCloseTo(51200 * MIB, within(1e-3));
        assertThat(a.nvlinkRxBytesPerSecond()).isCloseTo(49152 * MIB, within(1e-3));
        assertThat(a.nvlinkTxBytes()).isEqualTo(kibAt(6, 1_000_000, 5_243_880_000L) * 1024);
        assertThat(a.nvlinkRxBytes()).isEqualTo(kibAt(6, 2_000_000, 5_244_880_000L) * 1024);
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void aStallBetweenPollsShowsAsLowerSmActivity() throws Exception {
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario(), 10);
        pollAt(reader, 10);
        GpuSample s = pollAt(reader, 11).get(0);
        // the point utilisation says 100%; SMs were idle for 0.5 s of the second
        assertThat(s.utilizationRatio()).isEqualTo(1.0);
        assertThat(s.activity().smActiveRatio()).isCloseTo(0.46, within(0.002));
        assertThat(s.activity().tensorActiveRatio()).isCloseTo(0.61, within(1e-9));
    }

    @Test
    void whatAGpuCannotGiveIsAbsentNeverZero() throws Exception {
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario(), 40);
        pollAt(reader, 40);
        List<GpuSample> samples = pollAt(reader, 41);
        GpuActivity spin = samples.get(1).activity();
        // GPU 1 spins in a collective: SMs "active", tensor pipes idle, NVLink counters flat
        assertThat(spin.smActiveRatio()).isEqualTo(1.0);
        assertThat(spin.tensorActiveRatio()).isZero();
        assertThat(spin.smOccupancyRatio()).as("not in GPU 1's scenario").isNull();
        assertThat(spin.pcieRxBytesPerSecond()).isNull();
        assertThat(spin.nvlinkRxBytesPerSecond()).isNull();
        // its counters are spread over 12 links; read with the all-links scope they add up exactly
        assertThat(spin.nvlinkTxBytes()).isEqualTo(1_572_864_000L * 1024);

        GpuActivity pcieOnly = samples.get(2).activity();
        assertThat(pcieOnly == null || pcieOnly.smActiveRatio() == null).isTrue();
        // the A100 PCIe card: no GPM, no NVLink; PCIe rates come from the watcher thread
        List<GpuSample>[] last = new List[1];
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            last[0] = pollAt(reader, 41);
            return last[0].get(2).activity() != null;
        });
        GpuActivity card = last[0].get(2).activity();
        assertThat(card.pcieTxBytesPerSecond()).isEqualTo(81920.0 * 1024);
        assertThat(card.pcieRxBytesPerSecond()).isEqualTo(1048576.0 * 1024);
        assertThat(card.smActiveRatio()).isNull();
        assertThat(card.tensorActiveRatio()).isNull();
        assertThat(card.nvlinkRxBytes()).isNull();
        assertThat(card.nvlinkTxBytes()).isNull();
        assertThat(card.windowSeconds()).isNull();
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void aDriverRejectingTheAllLinksScopeIsReadLinkByLink() throws Exception {
        Path scenario = Files.writeString(dir.resolve("per-link.scenario"),
                Files.readString(scenario()) + "0 - nvlink_aggregate 0\n");
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario, 20);
        List<GpuSample> samples = pollAt(reader, 20);
        assertThat(samples.get(0).activity().nvlinkTxBytes()).isEqualTo(kibAt(20, 1_000_000, 5_243_880_000L) * 1024);
        assertThat(samples.get(1).activity().nvlinkRxBytes()).isEqualTo(1_048_576_000L * 1024);
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void olderDriversReadWhatTheyHave() throws Exception {
        NvmlGpuReader noGpm = open(FakeNvml.V2_PROCESSES, scenario(), 5);
        assertThat(BoundSymbols.of(noGpm)).doesNotContainKey("gpm").containsKey("field_values");
        pollAt(noGpm, 5);
        GpuActivity a = pollAt(noGpm, 6).get(0).activity();
        assertThat(a.smActiveRatio()).isNull();
        assertThat(a.nvlinkTxBytes()).isEqualTo(kibAt(6, 1_000_000, 5_243_880_000L) * 1024);
        assertThat(noGpm.failedReads()).isZero();

        NvmlGpuReader legacy = open(FakeNvml.LEGACY, scenario(), 5);
        assertThat(BoundSymbols.of(legacy)).doesNotContainKeys("gpm", "field_values");
        pollAt(legacy, 5);
        assertThat(pollAt(legacy, 6).get(0).activity()).isNull();
        assertThat(legacy.failedReads()).isZero();
    }

    @Test
    void aFailedMetricsCallIsCountedAndTheNextIntervalReadsAgain() throws Exception {
        Path scenario = Files.writeString(dir.resolve("failing.scenario"),
                Files.readString(scenario()) + "7 0 error nvmlGpmMetricsGet 999\n8 0 error nvmlGpmMetricsGet 0\n");
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario, 6);
        pollAt(reader, 6);
        assertThat(pollAt(reader, 7).get(0).activity().smActiveRatio()).isNull();
        assertThat(reader.failedReads()).isEqualTo(1);
        assertThat(pollAt(reader, 8).get(0).activity().smActiveRatio()).isCloseTo(0.92, within(1e-9));
    }

    @Test
    void pollsCloserThanGpmsMinimumKeepTheOlderSample() throws Exception {
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario(), 10);
        pollAt(reader, 10);
        assertThat(pollAt(reader, 10.05).get(0).activity().smActiveRatio()).isNull();
        GpuActivity a = pollAt(reader, 11).get(0).activity();
        assertThat(a.windowSeconds()).isCloseTo(1.0, within(1e-9));
        assertThat(a.smActiveRatio()).isCloseTo(0.46, within(0.002));
    }

    @Test
    void samplesAreFreedWhenNvmlIsShutDownUnderneathAndOnALostGpu() throws Exception {
        Path scenario = Files.writeString(dir.resolve("lost.scenario"),
                Files.readString(scenario()) + "9 1 lost\n");
        NvmlGpuReader reader = open(FakeNvml.CURRENT, scenario, 6);
        FakeNvml.Control fake = fakes.get(0);
        pollAt(reader, 6);
        assertThat(fake.fake_nvml_gpm_samples_live()).isEqualTo(4);
        fake.nvmlShutdown();
        pollAt(reader, 7);                    // finds NVML uninitialised
        pollAt(reader, 8);                    // initialises again: old samples freed, new ones allocated
        assertThat(fake.fake_nvml_gpm_samples_live()).isEqualTo(4);   // two per GPM GPU, not four
        List<GpuSample> afterLoss = pollAt(reader, 10);
        assertThat(afterLoss.get(1).lost()).isTrue();
        assertThat(afterLoss.get(0).activity().smActiveRatio()).isNotNull();
        // the close in @AfterEach must free every sample, including the lost GPU's
    }

    private static long kibAt(double t, long from, long to) {
        return (long) (from + (to - from) * t / 100.0);
    }

}
