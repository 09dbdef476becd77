package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.WindowStats.mean;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.protocol.RunSpec;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A slow step that waits on PCIe: host-to-device traffic near the link's rate while the SMs idle, as block swap
 * (kohya's and musubi's {@code blocks_to_swap}) or layer offloading does when its copies outgrow the compute they
 * overlap. Its fix is what fits the run's own GPU: the fewest swapped blocks the estimator says fit, else an fp8
 * base. Quiet without PCIe counters or a known link rate.
 *
 * @param name     the cause as {@code step_time_above_estimate} lists it, with the figures
 * @param fix      what to change, first the swapped blocks
 */
record PcieBoundStep(String name, String fix, Map<String, Object> evidence) {

    /** The bundled catalog's GPUs (their link rates); loaded on first use. */
    private static final class Gpus {
        static final Catalog CATALOG = Catalog.bundled();
    }

    static Optional<PcieBoundStep> of(RunContext run, Estimate e, double from, DetectorSettings.PcieBound s) {
        GpuSeries worst = null;
        double worstShare = 0;
        double worstRx = Double.NaN;
        double worstLink = Double.NaN;
        double worstActivity = Double.NaN;
        for (GpuSeries g : run.gpus()) {
            double rx = mean(g, from, Reading.PCIE_RX_BYTES_PER_S);
            double link = linkBytesPerSecond(e, g);
            double activity = mean(g, from, Reading.SM_ACTIVE);
            if (Double.isNaN(activity)) {
                activity = mean(g, from, Reading.UTILIZATION);
            }
            if (Double.isNaN(rx) || !(link > 0) || !(activity < s.maxActivityRatio())) {
                continue;
            }
            double share = rx / link;
            if (share >= s.rxLinkShare() && share > worstShare) {
                worst = g;
                worstShare = share;
                worstRx = rx;
                worstLink = link;
                worstActivity = activity;
            }
        }
        if (worst == null) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("pcie_rx_bytes_per_second", Math.round(worstRx));
        evidence.put("pcie_link_bytes_per_second", Math.round(worstLink));
        evidence.put("pcie_rx_link_ratio", Texts.round(worstShare, 2));
        evidence.put(Double.isNaN(mean(worst, from, Reading.SM_ACTIVE)) ? "utilization_ratio" : "sm_active_ratio",
                Texts.round(worstActivity, 2));
        Integer blocks = run.spec() == null ? null : run.spec().blocksToSwap();
        if (blocks != null && blocks > 0) {
            evidence.put("blocks_to_swap", blocks);
        }
        if (e.stepOperations() != null && e.stepOperations().containsKey("block_swap")) {
            evidence.put("predicted_block_swap_seconds", Texts.round(e.stepOperations().get("block_swap"), 3));
        }
        String name = String.format(Locale.ROOT, "PCIe-bound (%s into %s at %.1f GB/s, %s of its link, while it "
                + "computes %s of the time)", blocks != null && blocks > 0 ? blocks + " swapped blocks copied"
                : "host-to-device copies", Texts.gpuName(worst), worstRx / 1e9, Texts.pct(worstShare),
                Texts.pct(worstActivity));
        return Optional.of(new PcieBoundStep(name, fix(run, e, worst, blocks), evidence));
    }

    private static double linkBytesPerSecond(Estimate e, GpuSeries g) {
        Optional<GpuInfo> info = Gpus.CATALOG.gpu(e.gpu()).or(() -> Gpus.CATALOG.gpu(g.name()));
        return info.map(i -> i.pcieGbps() * 1e9).orElse(Double.NaN);
    }

    /** The fewest swapped blocks that fit the GPU (its memory less what strangers hold), else an fp8 base. */
    private static String fix(RunContext run, Estimate e, GpuSeries g, Integer blocks) {
        RunSpec spec = run.spec();
        if (blocks == null || blocks <= 0 || spec == null) {
            return "the GPU waits on host-to-device copies: keep more of the model on the GPU (less layer or "
                    + "optimizer offloading), pin the host memory the copies read, and check the card runs at its "
                    + "full PCIe link (nvidia-smi -q: Link Width x16)";
        }
        double capacity = g.memoryTotalBytes() - SharedGpu.bytes(g.otherProcesses());
        Fit fewer = fewestThatFit(run, spec, blocks, capacity);
        if (fewer != null) {
            return String.format(Locale.ROOT, "swap fewer blocks: --blocks-to-swap %d fits %s (estimate %s of %s) "
                    + "with a %s step", fewer.blocks(), Texts.gpuName(g), Texts.gib(fewer.estimate().peakMemoryBytes()),
                    Texts.gib(capacity), Texts.secs(fewer.estimate().stepSeconds()));
        }
        boolean fp8 = "fp8".equals(spec.baseWeights()) || "int8".equals(spec.baseWeights())
                || "int4".equals(spec.baseWeights()) || "nf4".equals(spec.baseWeights());
        Fit quantised = fp8 ? null : fewestThatFit(run, spec.withTrainer("fp8", blocks), blocks + 1, capacity);
        if (quantised != null) {
            return String.format(Locale.ROOT, "store the base in fp8 (--base-weights fp8) and swap %d blocks: each "
                    + "moves half the bytes, and it fits %s (estimate %s, a %s step)", quantised.blocks(),
                    Texts.gpuName(g), Texts.gib(quantised.estimate().peakMemoryBytes()),
                    Texts.secs(quantised.estimate().stepSeconds()));
        }
        return String.format(Locale.ROOT, "no fewer swapped blocks fit %s: pin the swapped blocks' host memory "
                + "(musubi's --use_pinned_memory_for_block_swap), run the card at its full PCIe link (nvidia-smi "
                + "-q: Link Width x16), or train on a GPU with more memory", Texts.gpuName(g));
    }

    /**
     * The estimate with the fewest swapped blocks below {@code below} that fits {@code capacity} (memory falls as
     * blocks are swapped: a bisection), null when none does.
     */
    private static Fit fewestThatFit(RunContext run, RunSpec spec, int below, double capacity) {
        int lo = -1;
        int hi = below;
        Estimate fits = null;
        while (hi - lo > 1) {
            int mid = (lo + hi) >>> 1;
            Estimate at = run.whatIf(spec.withTrainer(spec.baseWeights(), mid));
            if (at != null && at.peakMemoryBytes() <= capacity) {
                hi = mid;
                fits = at;
            } else {
                lo = mid;
            }
        }
        return fits == null ? null : new Fit(hi, fits);
    }

    private record Fit(int blocks, Estimate estimate) {
    }
}
