package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunFailure;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * {@code run_failed}: the run's processes exited with an error. The cause comes from the tail of their output (read
 * by {@code trainwatch run} or the agent); this joins it with what the collector saw before the end: how full the
 * GPUs were and whether {@code oom_risk} was raised, XIDs on the run's GPUs, throttling, host memory, a diverged
 * loss. A {@code signal} that the host's memory explains is called {@code host_oom}. Critical, raised at once, and
 * kept when the run ends.
 */
public final class RunFailedDetector extends BaseDetector {

    public RunFailedDetector() {
        super(AnomalyKind.RUN_FAILED);
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        RunFailure f = run.failure();
        if (f == null) {
            return Optional.empty();
        }
        String cause = f.cause() == null ? "unknown" : f.cause();
        List<String> before = new ArrayList<>();
        // Only when the node's memory was running out at the end (within 10 minutes), not because it once did.
        if (cause.equals("signal") && Integer.valueOf(9).equals(f.signal())
                && run.wasActiveSince(AnomalyKind.HOST_MEMORY, run.now() - 600)) {
            cause = "host_oom"; // SIGKILL while the node's memory was running out: the kernel's OOM killer
            before.add("host memory was running out (host_memory) before the SIGKILL");
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("cause", cause);
        evidence.put("summary", f.summary());
        putIfSet(evidence, "exit_code", f.exitCode());
        putIfSet(evidence, "signal", f.signal());
        putIfSet(evidence, "rank", f.rank());
        putIfSet(evidence, "host", run.failureHost());
        if (f.detail() != null) {
            f.detail().forEach(evidence::putIfAbsent); // the figures never overwrite cause, host or rank
        }
        seenBefore(run, cause, evidence, before);
        if (f.lines() != null && !f.lines().isEmpty()) {
            evidence.put("lines", f.lines());
        }
        if (!before.isEmpty()) {
            evidence.put("seen_before", before);
        }
        String where = f.rank() != null ? " on rank " + f.rank() : "";
        String message = "the run failed" + where + ": " + f.summary()
                + (before.isEmpty() ? "" : "; before that " + String.join(", ", before));
        return Optional.of(new Finding(Severity.CRITICAL, message, evidence, fix(cause, f, run.estimate())));
    }

    private static void putIfSet(Map<String, Object> evidence, String key, Object value) {
        if (value != null) {
            evidence.put(key, value);
        }
    }

    /** What the collector observed before the end: memory, XIDs and the anomalies raised. */
    private static void seenBefore(RunContext run, String cause, Map<String, Object> evidence, List<String> before) {
        double peak = Double.NaN;
        double capacity = Double.NaN;
        for (GpuSeries g : run.gpus()) {
            double used = WindowStats.maxMemory(g, Double.NEGATIVE_INFINITY);
            if (!Double.isNaN(used) && !(used <= peak)) {
                peak = used;
                capacity = g.memoryTotalBytes();
            }
        }
        if (!Double.isNaN(peak) && capacity > 0) {
            evidence.put("observed_peak_memory_bytes", Math.round(peak));
            evidence.put("observed_capacity_bytes", Math.round(capacity));
            if (cause.equals("cuda_oom")) {
                before.add(String.format(Locale.ROOT, "its fullest GPU had reached %s of %s", Texts.gib(peak),
                        Texts.gib(capacity)));
            }
        }
        if (run.wasRaised(AnomalyKind.OOM_RISK)) {
            before.add("oom_risk had been raised");
        }
        Estimate e = run.estimate();
        if (e != null && cause.equals("cuda_oom")) {
            evidence.put("predicted_peak_memory_bytes", e.peakMemoryBytes());
            before.add("the prediction was " + Texts.gib(e.peakMemoryBytes()) + (e.fits() ? "" : ", which does not fit"));
        }
        List<Long> xids = run.xids().stream().map(RunContext.XidRecord::xid).distinct().toList();
        if (!xids.isEmpty()) {
            evidence.put("xids_seen", xids);
            before.add("the GPUs reported XID " + xids.stream().map(String::valueOf).collect(Collectors.joining(", ")));
        }
        if (run.wasRaised(AnomalyKind.THROTTLING)) {
            before.add("a GPU was throttled");
        }
        if (run.wasRaised(AnomalyKind.LOSS_NONFINITE)) {
            before.add("the loss had become NaN");
        }
        if (run.wasRaised(AnomalyKind.STALLED)) {
            before.add("the run had stalled");
        }
    }

    private static String fix(String cause, RunFailure f, Estimate estimate) {
        // Precomputing is offered only for what this model encodes online (no T5 for a class-conditional DiT).
        String precompute = Texts.encoders(estimate).map(w -> "precompute the " + w + " features, ").orElse("");
        Map<String, Object> detail = f.detail() != null ? f.detail() : Map.of();
        if ("cuda_oom".equals(cause) && detail.get("other_processes_bytes") instanceof Number others) {
            // PyTorch named other processes holding memory on the GPU: the first thing to free.
            return "other processes held " + Texts.gib(others.doubleValue()) + " of the GPU (PID "
                    + detail.get("other_process_pids") + "): stop them or run on a free GPU, then resume from the last "
                    + "checkpoint; if it still does not fit, lower the per-GPU batch or enable gradient checkpointing";
        }
        if ("exception".equals(cause) && Boolean.TRUE.equals(detail.get("nan_loss"))) {
            return "the loss diverged to NaN: lower the learning rate or add a warm-up, train in bf16 rather than "
                    + "fp16, look for broken samples in the data; resume from a checkpoint saved before the NaN";
        }
        return switch (cause) {
            case "cuda_oom" -> "lower the per-GPU batch, enable gradient checkpointing, " + precompute + "or "
                    + "use an 8-bit/CAME optimizer (trainwatch estimate shows what each saves); if reserved memory far "
                    + "exceeds allocated, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; then resume from the "
                    + "last checkpoint";
            case "nccl_timeout" -> "find the rank that did not reach the collective (the stalled anomaly before it "
                    + "names it; py-spy dump its process): a dead or hung rank, a data loader stuck on one rank, a "
                    + "network fault; NCCL_DEBUG=INFO shows the failing link; resume from the last checkpoint";
            case "xid" -> "a GPU fault: check the XID on the GPU fleet dashboard and the kernel log; a program bug "
                    + "(XID 13/31/43) needs CUDA_LAUNCH_BLOCKING=1 to find the kernel, a hardware XID means draining "
                    + "the node";
            case "gpu_lost" -> "the GPU fell off the bus or was lost: drain the node and have it checked (power, "
                    + "cooling, seating), then resume from the last checkpoint on other GPUs";
            case "host_oom" -> "the host ran out of memory: fewer DataLoader workers or a smaller prefetch_factor, no "
                    + "in-memory caching of decoded samples, a larger /dev/shm (docker --shm-size), or more RAM per "
                    + "GPU; dmesg shows what the OOM killer killed";
            case "signal" -> "something killed the run" + (f.signal() != null && f.signal() == 9
                    ? " with SIGKILL: dmesg -T | grep -i oom shows whether it was the host's OOM killer, else ask the "
                            + "scheduler (preemption, time limit)"
                    : ": check the scheduler (preemption, time limit) and who sent the signal");
            case "exception" -> "a bug or bad input in the training script: the lines above show the exception; fix "
                    + "it and resume from the last checkpoint";
            default -> "the output does not say why: look at every rank's log and the scheduler's record of the job";
        };
    }
}
