package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/** {@code xid_error}: an XID error on one of the run's GPUs, or a GPU lost (triage: docs/DETECTORS.md). */
public final class XidErrorDetector extends BaseDetector {

    private static final Map<Long, String> MEANING = Map.ofEntries(
            Map.entry(13L, "graphics engine exception (usually the program)"),
            Map.entry(31L, "GPU memory page fault (usually an illegal address in the program)"),
            Map.entry(43L, "GPU stopped processing (the program faulted)"),
            Map.entry(48L, "double-bit ECC error"),
            Map.entry(62L, "internal micro-controller halt"),
            Map.entry(63L, "ECC page retirement or row remapping recorded"),
            Map.entry(64L, "ECC page retirement or row remapping failure"),
            Map.entry(74L, "NVLink error"),
            Map.entry(79L, "GPU has fallen off the bus"),
            Map.entry(92L, "high single-bit ECC error rate"),
            Map.entry(94L, "contained ECC error"),
            Map.entry(95L, "uncontained ECC error"),
            Map.entry(119L, "GSP RPC timeout"),
            Map.entry(120L, "GSP error"));

    private final DetectorSettings.XidError s;

    public XidErrorDetector(DetectorSettings settings) {
        super(AnomalyKind.XID_ERROR);
        this.s = settings.xidError();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        double from = run.now() - seconds(s.clearAfter());
        List<RunContext.XidRecord> relevant = new ArrayList<>(run.xids().stream()
                .filter(x -> x.ts() >= from && !s.informational().contains(x.xid())).toList());
        List<GpuSeries> lost = run.gpus().stream().filter(GpuSeries::lost).toList();
        if (relevant.isEmpty() && lost.isEmpty()) {
            return Optional.empty();
        }
        relevant.sort((a, b) -> Double.compare(b.ts(), a.ts()));
        boolean critical = !lost.isEmpty() || relevant.stream().anyMatch(x -> s.critical().contains(x.xid()));
        boolean application = !critical && relevant.stream().allMatch(x -> s.application().contains(x.xid()));
        List<Long> xids = relevant.stream().map(RunContext.XidRecord::xid).distinct().toList();
        List<String> uuids = Stream.concat(relevant.stream().map(RunContext.XidRecord::gpuUuid),
                lost.stream().map(GpuSeries::uuid)).distinct().toList();
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("xids", xids);
        evidence.put("events", relevant.size());
        evidence.put("gpu_uuids", uuids);
        if (!relevant.isEmpty()) {
            evidence.put("newest_ts", relevant.get(0).ts());
        }
        if (!lost.isEmpty()) {
            evidence.put("lost_gpus", lost.size());
        }
        List<String> parts = new ArrayList<>(
                lost.stream().map(g -> Texts.gpuName(g) + " is lost (NVML cannot reach it)").toList());
        for (Long xid : xids) {
            RunContext.XidRecord newest = relevant.stream().filter(x -> x.xid() == xid).findFirst().orElseThrow();
            long count = relevant.stream().filter(x -> x.xid() == xid).count();
            parts.add(String.format(Locale.ROOT, "XID %d (%s) on %s%s", xid, MEANING.getOrDefault(xid,
                    "see NVIDIA's XID catalog"), gpuLabel(run, newest), count > 1 ? ", " + count + " times" : ""));
        }
        String message = String.join("; ", parts);
        String suggestion;
        Severity severity;
        if (critical) {
            severity = Severity.CRITICAL;
            suggestion = "hardware or driver fault: the run will likely fail or compute garbage; checkpoint if you "
                    + "still can, drain the node, reset the GPU (nvidia-smi -r) or reboot, and have it inspected "
                    + "if it repeats; restart the run from its last checkpoint on healthy GPUs";
        } else if (application) {
            severity = Severity.WARNING;
            suggestion = "an application fault, not hardware: rerun the failing step with CUDA_LAUNCH_BLOCKING=1 "
                    + "or under compute-sanitizer to find the kernel; check custom CUDA extensions and version "
                    + "mismatches";
        } else {
            severity = Severity.WARNING;
            suggestion = "a contained error: the affected process was stopped; restart from the last checkpoint "
                    + "and schedule a GPU reset at the next opportunity; watch for repeats";
        }
        return Optional.of(new Finding(severity, message, evidence, suggestion));
    }

    private static String gpuLabel(RunContext run, RunContext.XidRecord x) {
        return run.gpus().stream().filter(g -> g.uuid().equals(x.gpuUuid())).findFirst().map(Texts::gpuName)
                .orElse(x.gpuUuid() + " on " + x.host());
    }
}
