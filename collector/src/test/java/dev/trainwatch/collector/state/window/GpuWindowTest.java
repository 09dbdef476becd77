package dev.trainwatch.collector.state.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.Test;

class GpuWindowTest {

    /** The ingest's hot path: 1,024 GPUs polled every second must not make garbage per poll. */
    @Test
    void addingPollsAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        GpuWindow w = new GpuWindow("GPU-0", 600, 600);
        GpuSample poll = sample(1000, 10L << 30, 0.9, 0.8, null);
        for (int i = 0; i < 20_000; i++) {
            w.add(poll, 1000 + i * 0.3);
        }
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 20_000; i++) {
            w.add(poll, 7000 + i * 0.3);
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertThat(allocated).as("bytes allocated by 20,000 polls").isLessThan(4_096);
        assertThat(w.size()).isEqualTo(600);
    }

    private static GpuSample sample(double ts, Long used, Double util, double minUtil, List<String> reasons) {
        return new GpuSample(ts, 0, "GPU-0", "NVIDIA H100 80GB HBM3", null, 80L << 30, used, null, null, util, null,
                new UtilizationWindow(4, minUtil, util == null ? 0.5 : util, 1, minUtil <= 0.05 ? 0.25 : 0, ts - 1,
                        ts), null, null, null, null, reasons, Double.NaN, null, null, null, null, List.of(), false,
                null);
    }

    @Test
    void fastPollsMergeIntoOneEntryPerResolution() {
        GpuWindow w = new GpuWindow("GPU-0", 600, 600); // 1-s resolution
        for (int i = 0; i < 10; i++) { // ten 100-ms polls
            w.add(sample(1000 + i * 0.1, (10L + i) << 30, i % 2 == 0 ? 1.0 : 0.0, i == 5 ? 0.0 : 0.8,
                    i == 3 ? List.of("sw_power_cap") : List.of()), 1000 + i * 0.1);
        }
        assertThat(w.size()).isEqualTo(1);
        assertThat(w.memoryUsedBytes(0)).isEqualTo((double) (19L << 30)); // max
        assertThat(w.reading(Reading.UTILIZATION, 0)).isCloseTo(0.5, org.assertj.core.data.Offset.offset(1e-6)); // mean
        assertThat(w.reading(Reading.UTILIZATION_MIN, 0)).isEqualTo(0.0); // min of the minima
        assertThat(w.clockEventMask(0) & GpuSeries.reasonMask(List.of("sw_power_cap"))).isNotZero(); // any
        assertThat(w.reading(Reading.POWER_WATTS, 0)).isNaN(); // non-finite reading stays absent
        w.add(sample(1001, 5L << 30, 0.9, 0.9, List.of()), 1001);
        assertThat(w.size()).isEqualTo(2);
    }

    @Test
    void ringKeepsTheNewestWithinTheSpan() {
        GpuWindow w = new GpuWindow("GPU-0", 60, 30); // 2-s resolution
        for (int i = 0; i < 100; i++) {
            w.add(sample(i * 2, (long) i << 20, 0.5, 0.5, null), i * 2);
        }
        assertThat(w.size()).isEqualTo(30);
        assertThat(w.ts(0)).isEqualTo(140.0);
        assertThat(w.ts(29)).isEqualTo(198.0);
        w.trim(230);
        assertThat(w.size()).isEqualTo(15); // 170, 172, …, 198
        assertThat(w.firstIndexAtOrAfter(190)).isEqualTo(10);
        assertThat(w.peakMemory()).isEqualTo((double) (99L << 20));
    }

    /**
     * The window keeps where the newest stretch of equal memory readings begins as readings come, merge, go out of
     * the ring and are trimmed: never earlier than the stretch really begins (every entry from there holds the
     * newest value), and exactly where it begins while no merge changed a value. Random readings from a few values,
     * NaN among them, at random gaps (some under the 2-s resolution, so they merge); a copy answers exactly.
     */
    @Test
    void theNewestStretchOfEqualMemoryIsKeptAsReadingsComeAndGo() {
        java.util.Random random = new java.util.Random(24);
        Long[] values = {10L << 30, 10L << 30, 10L << 30, 11L << 30, null};
        for (int round = 0; round < 200; round++) {
            GpuWindow w = new GpuWindow("GPU-0", 60, 30); // 2-s resolution
            double ts = 1000;
            boolean merged = false;
            for (int k = 0; k < 120; k++) {
                double gap = random.nextInt(4) == 0 ? 0.5 : 1 + random.nextInt(3);
                ts += gap;
                int sizeBefore = w.size();
                Long used = values[random.nextInt(values.length)];
                double before = sizeBefore > 0 ? w.memoryUsedBytes(sizeBefore - 1) : Double.NaN;
                w.add(sample(ts, used, 0.9, 0.9, null), ts);
                if (w.size() == sizeBefore && sizeBefore > 0
                        && Double.compare(before, w.memoryUsedBytes(sizeBefore - 1)) != 0) {
                    merged = true; // a merge changed the newest entry's value
                }
                if (random.nextInt(10) == 0) {
                    w.trim(ts + random.nextInt(40));
                }
                int exact = GpuSeries.memoryStillFrom(w);
                int kept = w.memoryStillFrom();
                assertThat(kept).as("round %d, reading %d", round, k).isGreaterThanOrEqualTo(exact);
                for (int i = kept; i < w.size(); i++) {
                    assertThat(w.memoryUsedBytes(i)).isEqualTo(w.memoryUsedBytes(w.size() - 1));
                }
                if (!merged) {
                    assertThat(kept).as("round %d, reading %d", round, k).isEqualTo(exact);
                }
                if (w.size() > 2) { // a copy without the oldest entry: the stretch one entry earlier, found exactly
                    GpuWindow copy = w.copy(1, w.size());
                    assertThat(copy.memoryStillFrom()).isEqualTo(Math.max(0, exact - 1));
                }
            }
        }
    }

    @Test
    void trendOfALinearRampIsExact() {
        GpuWindow w = new GpuWindow("GPU-0", 600, 600);
        for (int i = 0; i < 300; i++) {
            w.add(sample(5000 + i, (40L << 30) + i * 10_000_000L, 0.9, 0.9, null), 5000 + i);
        }
        WindowStats.Trend t = WindowStats.memoryTrend(w, 0);
        assertThat(t.slopePerSecond()).isCloseTo(1e7, org.assertj.core.data.Offset.offset(1.0));
        assertThat(t.r2()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
        double full = 80L << 30;
        double expected = (full - ((40L << 30) + 299 * 10_000_000L)) / 1e7;
        // Time to full as oom_risk reads it: from the newest reading at the fitted rate.
        assertThat((full - t.lastValue()) / t.slopePerSecond()).isCloseTo(expected,
                org.assertj.core.data.Offset.offset(0.01));
        assertThat(WindowStats.idleSeconds(w, 0.05)).isZero();
    }
}
