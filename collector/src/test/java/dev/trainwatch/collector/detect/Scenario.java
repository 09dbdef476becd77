package dev.trainwatch.collector.detect;

import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * A scenario trace (src/test/resources/scenarios/*.json): a run described phase by phase. Each phase sets the
 * GPUs' readings (memory ramps linearly from {@code memory_gib[0]} to {@code memory_gib[1]}), the step reports
 * the log would give, XIDs and agent silence. {@code fault: true} marks the phase where the fault starts; the
 * player measures detection latency from its start. {@code hardwareFlopsPerSample} sets the fake estimator's FLOPs
 * per sample at 1024 px (its default puts the healthy PixArt trace at about 55% of the bf16 peak).
 */
record Scenario(String description, RunSpec spec, int gpus, List<Phase> phases, List<String> expect,
                Double hardwareFlopsPerSample) {

    /**
     * One stretch of the trace. {@code rankProcs} overrides a rank's process ({@code state}, {@code cpu_rate}: CPU
     * seconds per second) — every rank's process is otherwise running at one core; {@code announce} is a phase the
     * log announces at the phase's start ({@code checkpoint}, {@code evaluation}); {@code hostMemGib} is the node's
     * MemAvailable from start to end of the phase (of {@code hostTotalGib}, 512 by default), {@code shmUsedRatio}
     * how full /dev/shm is. {@code activity} gives the GPUs' hardware counters (absent: GPUs without them).
     */
    record Phase(String name, double durationS, List<Double> memoryGib, Double utilization, Double utilMin,
                 Double idleFraction, Double smClockRatio, List<String> reasons, Double temperature, Double power,
                 Steps steps, Map<String, GpuOverride> gpuOverrides, List<Xid> xids, Boolean agentSilent,
                 Boolean fault, Map<String, RankProc> rankProcs, String announce, List<Double> hostMemGib,
                 Double hostTotalGib, Double shmUsedRatio, Activity activity) {
    }

    /**
     * Hardware activity counters: SM, tensor-pipe and DRAM activity (0–1, as GPM gives them over a poll) and NVLink
     * traffic in GB/s (received plus sent; the player turns it into the cumulative byte counters NVML gives).
     * {@code dipEveryS}/{@code dipS}/{@code dipSm}: every so many seconds the SMs (and tensor pipes) drop to
     * {@code dipSm} for {@code dipS} seconds — a GPU waiting for its next batch between steps.
     */
    record Activity(Double sm, Double tensor, Double dram, Double nvlinkGbps, Double dipEveryS, Double dipS,
                    Double dipSm) {
    }

    record RankProc(String state, Double cpuRate) {
    }

    record GpuOverride(List<Double> memoryGib, Double utilization, Double utilMin, Double idleFraction,
                       Double smClockRatio, List<String> reasons, Double temperature, Double power, Activity activity) {
    }

    /**
     * Step reports every {@code everyS} seconds; {@code ranks} > 0 makes each rank report with its own time
     * ({@code rankFactor} multiplies one rank's time, {@code rankDataTimeS} replaces one rank's data time).
     * {@code timeJitter} alternates ± around {@code timeS}. {@code dataTimeCycle}: the data time of successive reports,
     * repeated (a loader whose wait wobbles); each report's step time moves with it ({@code timeS} is the step with
     * {@code dataTimeS}, or with no data time when that is absent).
     */
    record Steps(double everyS, double timeS, Double dataTimeS, Double lmTimeS, Double vaeTimeS,
                 Integer intervalSteps, List<Integer> bucket, Integer ranks, Map<String, Double> rankFactor,
                 Double timeJitter, Double samples, Map<String, Double> rankDataTimeS, Double loss,
                 List<Integer> silentRanks, List<Double> dataTimeCycle) {
    }

    record Xid(double atS, int gpu, long xid) {
    }

    static Scenario load(String name) {
        try (InputStream in = Scenario.class.getResourceAsStream("/scenarios/" + name + ".json")) {
            if (in == null) {
                throw new IllegalArgumentException("no scenario " + name);
            }
            return Json.MAPPER.readValue(in, Scenario.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
