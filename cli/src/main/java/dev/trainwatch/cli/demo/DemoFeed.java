package dev.trainwatch.cli.demo;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Plays scenarios into a {@link DemoSink} as one agent per synthetic node and each run's log would. Time is passed in
 * ({@link #tick(Instant)}); scenario time is wall time since {@code start} times {@code speed}. One thread.
 */
public final class DemoFeed {

    /** Most step events one run sends per tick; a faster run reports a mean, as a logging interval would. */
    static final int MAX_STEP_EVENTS_PER_TICK = 50;

    private final List<Playing> playing = new ArrayList<>();
    private final DemoSink sink;
    private final double speed;
    private final Instant start;
    private Instant previousTick;

    public DemoFeed(List<Scenario> scenarios, DemoSink sink, double speed, Instant start) {
        if (!(speed > 0) || Double.isInfinite(speed)) {
            throw new IllegalArgumentException("speed must be a positive number, got " + speed);
        }
        this.sink = sink;
        this.speed = speed;
        this.start = start;
        this.previousTick = start;
        for (int i = 0; i < scenarios.size(); i++) {
            playing.add(new Playing(scenarios.get(i), i));
        }
    }

    /** Declares every scenario's run to the collector. */
    public void begin() throws IOException {
        for (Playing p : playing) {
            sink.putSpec(p.scenario.runId(), p.scenario.spec());
        }
    }

    /** Sends what happened between the previous tick and {@code now}: finished steps and one poll per node. */
    public void tick(Instant now) throws IOException {
        double elapsed = scenarioSeconds(now);
        double intervalSeconds = Math.max(1e-3, Duration.between(previousTick, now).toNanos() / 1e9);
        previousTick = now;
        for (Playing p : playing) {
            List<StepEvent> steps = p.stepsUntil(elapsed);
            if (!steps.isEmpty()) {
                sink.postSteps(p.scenario.runId(), steps);
            }
            sink.postBatch(p.batch(elapsed, epochSeconds(now), intervalSeconds));
        }
    }

    /** Scenario seconds at wall time {@code now}. */
    public double scenarioSeconds(Instant now) {
        return Duration.between(start, now).toNanos() / 1e9 * speed;
    }

    private double epochSeconds(Instant instant) {
        return instant.getEpochSecond() + instant.getNano() / 1e9;
    }

    /** Wall time (unix seconds) at which scenario time {@code scenarioSeconds} happens. */
    private double wallSeconds(double scenarioSeconds) {
        return epochSeconds(start) + scenarioSeconds / speed;
    }

    /** One scenario being played: its step counter and its agent's sequence number. */
    private final class Playing {
        final Scenario scenario;
        final int ordinal;
        final List<String> uuids = new ArrayList<>();
        final List<Long> pids = new ArrayList<>();
        /** Each GPU's energy counter: a real one counts from the driver's load, this one from the demo's start. */
        final double[] energyJoules;
        long nextStep;
        double nextStepEndsAt;
        long seq;

        Playing(Scenario scenario, int ordinal) {
            this.scenario = scenario;
            this.ordinal = ordinal;
            for (int i = 0; i < scenario.gpuCount(); i++) {
                uuids.add("GPU-" + UUID.nameUUIDFromBytes((scenario.runId() + "/" + i).getBytes(StandardCharsets.UTF_8)));
                pids.add(40_000L + 100L * ordinal + i);
            }
            energyJoules = new double[scenario.gpuCount()];
            nextStep = scenario.firstStep();
            nextStepEndsAt = scenario.stepSeconds(nextStep, 0);
        }

        List<StepEvent> stepsUntil(double elapsed) {
            List<StepEvent> finished = new ArrayList<>();
            while (nextStepEndsAt <= elapsed) {
                double time = scenario.stepSeconds(nextStep, nextStepEndsAt);
                double data = scenario.dataSeconds(nextStep, nextStepEndsAt);
                finished.add(new StepEvent(nextStep, time, data, null, null, null, 1, scenario.samplesPerStep(),
                        scenario.loss(nextStep), 1e-4, 0.8 + 0.1 * Noise.signed(ordinal, nextStep), null, null, 0,
                        wallSeconds(nextStepEndsAt), null));
                nextStep++;
                nextStepEndsAt += scenario.stepSeconds(nextStep, nextStepEndsAt);
            }
            return finished.size() <= MAX_STEP_EVENTS_PER_TICK ? finished : List.of(mean(finished));
        }

        /** One event standing for many, as a training script's logging interval would report them. */
        private StepEvent mean(List<StepEvent> steps) {
            StepEvent last = steps.get(steps.size() - 1);
            double time = steps.stream().mapToDouble(StepEvent::timeS).average().orElse(last.timeS());
            double data = steps.stream().mapToDouble(StepEvent::dataTimeS).average().orElse(last.dataTimeS());
            return new StepEvent(last.step(), time, data, null, null, null, steps.size(), last.samples(),
                    last.loss(), last.lr(), last.gradNorm(), null, null, 0, last.ts(), null);
        }

        AgentBatch batch(double elapsed, double ts, double intervalSeconds) {
            List<GpuSample> gpus = new ArrayList<>();
            List<RankInfo> ranks = new ArrayList<>();
            for (int i = 0; i < scenario.gpuCount(); i++) {
                GpuReading r = scenario.gpu(i, elapsed);
                UtilizationWindow window = new UtilizationWindow(6, r.utilizationMin(), r.utilizationMean(),
                        Math.max(r.utilizationRatio(), r.utilizationMean()), r.idleFraction(), ts - intervalSeconds, ts);
                long processBytes = Math.max(0, r.memoryUsedBytes() - 600L * 1024 * 1024);
                energyJoules[i] += r.powerWatts() * intervalSeconds;
                gpus.add(new GpuSample(ts, i, uuids.get(i), scenario.gpuName(), String.format("00000000:%02X:00.0", 0x10 + i),
                        r.memoryTotalBytes(), r.memoryUsedBytes(), null, r.memoryTotalBytes() - r.memoryUsedBytes(),
                        r.utilizationRatio(), Math.min(1.0, r.utilizationMean() * 0.6), window, r.smClockHz(),
                        r.smClockMaxHz(), 1_593_000_000L, 1_593_000_000L, r.clockEventReasons(), r.powerWatts(),
                        r.powerLimitWatts(), energyJoules[i], r.temperatureCelsius(), 0,
                        List.of(new GpuProcess(pids.get(i), processBytes, null, null)), null, null));
                ranks.add(new RankInfo(pids.get(i), i, i, scenario.gpuCount(), List.of(uuids.get(i))));
            }
            RunAttribution run = new RunAttribution(scenario.runId(), pids, uuids, ranks, null, false, null, null, null, null, null);
            seq++;
            return new AgentBatch(scenario.host(), scenario.host() + "-synthetic-agent", seq, gpus, List.of(run),
                    List.of(), new AgentHealth(0.004, 0L, 0L, 0L, 0L, intervalSeconds), null, null, null);
        }
    }
}
