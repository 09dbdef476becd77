package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark fleet: 16 hosts × 64 GPUs = 1,024 GPUs, 128 runs of 8 GPUs with specs, polled every second for a
 * full 10-minute window, with a step report per run every 10 s. Built through the real {@link Fleet} API.
 */
final class BenchFleet {
    static final int HOSTS = 16;
    static final int GPUS_PER_HOST = 64;
    static final int GPUS_PER_RUN = 8;
    static final int WINDOW_SECONDS = 600;

    private BenchFleet() {
    }

    static Fleet build(SettableClock clock) {
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        int runsPerHost = GPUS_PER_HOST / GPUS_PER_RUN;
        for (int h = 0; h < HOSTS; h++) {
            for (int r = 0; r < runsPerHost; r++) {
                fleet.putSpec(runId(h, r), new RunSpec(FakePredictor.FIXED_MODEL, FakePredictor.FIXED_GPU, GPUS_PER_RUN, 8,
                        1024, null, null, null, "bf16", "came", false, false, "precomputed", 0, null, null,
                        100_000L));
            }
        }
        for (int t = 0; t < WINDOW_SECONDS; t++) {
            clock.advance(Duration.ofSeconds(1));
            double now = clock.seconds();
            for (int h = 0; h < HOSTS; h++) {
                fleet.ingestBatch(batch(h, t + 1, now));
            }
            if (t % 10 == 0) {
                for (int h = 0; h < HOSTS; h++) {
                    for (int r = 0; r < runsPerHost; r++) {
                        fleet.ingestSteps(runId(h, r), List.of(new StepEvent((long) t, 1.3, 0.1, null, null, null,
                                10, 64.0, 0.1, 1e-4, 1.0, 128, 128, 0, now, null)));
                    }
                }
            }
        }
        fleet.tick();
        return fleet;
    }

    static String runId(int host, int run) {
        return "bench-run-" + host + "-" + run;
    }

    static AgentBatch batch(int h, long seq, double ts) {
        String host = "node-" + h;
        List<GpuSample> samples = new ArrayList<>(GPUS_PER_HOST);
        List<RunAttribution> runs = new ArrayList<>();
        for (int r = 0; r < GPUS_PER_HOST / GPUS_PER_RUN; r++) {
            List<String> uuids = new ArrayList<>();
            List<Long> pids = new ArrayList<>();
            for (int g = r * GPUS_PER_RUN; g < (r + 1) * GPUS_PER_RUN; g++) {
                uuids.add(Payloads.uuid(host, g));
                pids.add(10_000L + g);
            }
            runs.add(new RunAttribution(runId(h, r), pids, uuids, null, null, null, null, null, null, null, null));
        }
        for (int g = 0; g < GPUS_PER_HOST; g++) {
            long used = 40_000_000_000L + (seq % 60) * 10_000_000L + g;
            samples.add(Payloads.sample(ts, g, Payloads.uuid(host, g), used, 0.85 + (seq + g) % 15 / 100.0,
                    (seq + g) % 7 == 0 ? List.of("sw_power_cap") : List.of()));
        }
        List<AgentEvent> events = seq % 97 == 0 ? List.of(AgentEvent.xid(ts, Payloads.uuid(host, 0), 79))
                : List.of();
        return new AgentBatch(host, host + "-agent", seq, samples, runs, events,
                new AgentHealth(0.02, 0L, 0L, 0L, 0L, 1.0), null, null, null);
    }
}
