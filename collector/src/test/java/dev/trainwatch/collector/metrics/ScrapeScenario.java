package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.state.view.ComparisonView;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A fixed fleet, as views: two hosts, three GPUs (one without power readings, one throttled with an XID), one run
 * with a spec, steps and an active plus a resolved anomaly, one ended run without a spec. Mutable lists so tests
 * can make things come and go.
 */
final class ScrapeScenario {
    static final double NOW = 1_767_225_600.0; // 2026-01-01T00:00:00Z
    static final String RUN = "pixart-sigma-run-1";
    static final String ENDED_RUN = "job:4711";

    final List<GpuView> gpus = new ArrayList<>();
    final List<RunView> runs = new ArrayList<>();
    final List<AgentView> agents = new ArrayList<>();

    ScrapeScenario() {
        String uuid0 = Payloads.uuid("node-1", 0);
        String uuid1 = Payloads.uuid("node-1", 1);
        String uuid2 = Payloads.uuid("node-2", 0);
        GpuSample busy = Payloads.sample(NOW - 1, 0, uuid0, 62_000_000_000L, 0.97, List.of("sw_power_cap"));
        GpuSample noPower = withoutPower(Payloads.sample(NOW - 1, 1, uuid1, 61_500_000_000L, 0.95, null));
        GpuSample idle = Payloads.sample(NOW - 2, 0, uuid2, 500_000_000L, 0.0, List.of("gpu_idle"));
        // node-1 GPU 0 is an H100 with GPM and NVLink; node-2's card gives PCIe rates only; node-1 GPU 1 nothing
        busy = withActivity(busy, new GpuActivity(1.0, 0.92, 0.385, 0.61, 0.58, 0.44, 2_147_483_648.0, 125_829_120.0,
                51_539_607_552.0, 53_687_091_200.0, 5_000_000_000_000L, 4_000_000_000_000L));
        idle = withActivity(idle, new GpuActivity(null, null, null, null, null, null, 1_073_741_824.0, 83_886_080.0,
                null, null, null, null));
        gpus.add(new GpuView(uuid0, "node-1", RUN, busy, Map.of("79", 2L), NOW - 1, 0));
        gpus.add(new GpuView(uuid1, "node-1", RUN, noPower, Map.of(), NOW - 1, 0));
        gpus.add(new GpuView(uuid2, "node-2", null, idle, Map.of(), NOW - 2, 300));

        ObservedView observed = new ObservedView(62_000_000_000L, 62_000_000_000L, Payloads.A100_BYTES, 2.5, 0.62,
                null, null, 0.96, 6.4, 1_200L, NOW - 3, 128, 128, 2, 625.0, null, 0.12, 0.16, 0.31, 2_250_000.0,
                2.0, 4.0, Map.of("productive", 2_232.0, "startup", 180.0, "data_wait", 3_640.0, "stall", 1_120.0,
                        "pending", 3.0), NOW - 7_175, null, null, null, null, null, null);
        ComparisonView comparison = new ComparisonView(1.25, 2.0, 42_949_672_960L, 1.44, 23_899_345_920L,
                Payloads.A100_BYTES, 12.8, 0.5, 8_800L, 22_000.0, 0.24, 14.2, 16_000_000.0, 28.4);
        Anomaly starving = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, true, NOW - 120, null,
                "data loading takes 62% of each step", Map.of("data_wait_ratio", 0.62),
                "precompute T5 and VAE features");
        Anomaly resolved = new Anomaly(AnomalyKind.THROTTLING, Severity.WARNING, false, NOW - 900, NOW - 600,
                "power capped", Map.of(), "check the power limit");
        runs.add(new RunView(RUN, null, null, observed, comparison, List.of(starving, resolved), List.of(),
                List.of("node-1"), NOW - 3_600, NOW - 1, false, null, null, null, null, null, null));
        ObservedView endedObserved = new ObservedView(null, null, null, null, null, null, null, null, null, 50L,
                NOW - 7_000, null, null, 0,
                null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
        runs.add(new RunView(ENDED_RUN, null, null, endedObserved, null, List.of(), List.of(), List.of(),
                NOW - 8_000, NOW - 7_000, true, NOW - 6_900, null, null, null, null, null));

        // node-1's agent reports its own health in full (delivery, spool, log) and its clock runs 0.25 s ahead.
        agents.add(new AgentView("node-1-a", "node-1", 41, NOW - 1, new AgentHealth(0.018, 3L, 0L, 0L, 0L, 1.0,
                true, false, 2L, 0L, true, null), 2, 41, 1, false, 0.25));
        agents.add(new AgentView("node-2-a", "node-2", 7, NOW - 2, null, 1, 7, 0, false, null));
    }

    /** The steps pushed for {@link #RUN}: two single reports and one averaging 10 steps. */
    static List<StepEvent> steps() {
        return List.of(StepEvent.of(1_190, 2.4, NOW - 30), StepEvent.of(1_191, 2.6, NOW - 28),
                new StepEvent(1_200L, 2.5, 1.55, null, null, null, 10, 64.0, 0.12, 2e-5, 1.1, 128, 128, 0, NOW - 3, null));
    }

    private static GpuSample withoutPower(GpuSample s) {
        return new GpuSample(s.ts(), s.index(), s.uuid(), s.name(), s.pciBusId(), s.memoryTotalBytes(),
                s.memoryUsedBytes(), s.memoryReservedBytes(), s.memoryFreeBytes(), s.utilizationRatio(),
                s.memoryUtilizationRatio(), null, s.smClockHz(), s.smClockMaxHz(), s.memClockHz(), s.memClockMaxHz(),
                null, null, null, null, s.temperatureCelsius(), s.pstate(), s.processes(), s.lost(), null);
    }

    private static GpuSample withActivity(GpuSample s, GpuActivity activity) {
        return new GpuSample(s.ts(), s.index(), s.uuid(), s.name(), s.pciBusId(), s.memoryTotalBytes(),
                s.memoryUsedBytes(), s.memoryReservedBytes(), s.memoryFreeBytes(), s.utilizationRatio(),
                s.memoryUtilizationRatio(), s.utilizationWindow(), s.smClockHz(), s.smClockMaxHz(), s.memClockHz(),
                s.memClockMaxHz(), s.clockEventReasons(), s.powerWatts(), s.powerLimitWatts(), s.energyJoules(),
                s.temperatureCelsius(), s.pstate(), s.processes(), s.lost(), activity);
    }
}
