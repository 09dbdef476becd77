package dev.trainwatch.estimator.catalog;

import java.util.List;
import java.util.stream.Stream;

/**
 * One GPU of the catalog. Throughput peaks are dense tensor-core TFLOPS with FP32 accumulate (what PyTorch
 * reaches), never the 2:4-sparsity figures. Loaded from {@code gpus.json}; immutable.
 *
 * @param id             catalog id, e.g. {@code a100-80gb}
 * @param name           display name
 * @param architecture   {@code volta}, {@code ampere}, {@code ada}, {@code hopper}
 * @param memoryBytes    device memory as NVML reports it
 * @param bandwidthGbps  memory bandwidth, GB/s
 * @param fp16Tflops     dense FP16 peak
 * @param bf16Tflops     dense BF16 peak, null when the GPU has no BF16 tensor cores
 * @param tf32Tflops     dense TF32 peak, null when the GPU has no TF32
 * @param fp32Tflops     FP32 (non-tensor) peak
 * @param allreduceGbps  effective bus bandwidth of a gradient all-reduce under DDP inside one node
 * @param efficiency     optional (0 when absent): the share of the fp16/bf16/TF32 peak this card's GEMMs reach on full
 *                       tiles, overriding the estimator's shared figure
 * @param sms            streaming multiprocessors (0: unknown; GEMMs are then priced without wave quantisation)
 * @param boostClockMhz  boost clock (the clock the datasheet peaks are quoted at), 0 when unknown
 * @param l2Mb           L2 cache, MB
 * @param nvlinkGbps     NVLink bandwidth per GPU, both directions together as NVIDIA quotes it; null without NVLink
 *                       between all GPUs of a node (PCIe cards, bridged pairs)
 * @param pcieGbps       host link bandwidth per direction (PCIe 3/4/5 x16: 16/32/64 GB/s), 0 when unknown
 * @param nvmlNames      device names NVML reports for this GPU
 * @param aliases        other ids accepted on the command line
 */
public record GpuInfo(
        String id,
        String name,
        String architecture,
        long memoryBytes,
        double bandwidthGbps,
        double fp16Tflops,
        Double bf16Tflops,
        Double tf32Tflops,
        double fp32Tflops,
        double allreduceGbps,
        double efficiency,
        List<String> nvmlNames,
        List<String> aliases,
        int sms,
        int boostClockMhz,
        double l2Mb,
        Double nvlinkGbps,
        double pcieGbps) {

    /** Absent names and lists as the id and empty lists; absent or negative figures as 0. */
    public GpuInfo {
        name = name == null ? id : name;
        nvmlNames = nvmlNames == null ? List.of() : List.copyOf(nvmlNames);
        aliases = aliases == null ? List.of() : List.copyOf(aliases);
        boostClockMhz = Math.max(0, boostClockMhz);
        l2Mb = Math.max(0, l2Mb);
        pcieGbps = Math.max(0, pcieGbps);
    }

    /** Every name the GPU answers to: its id, aliases and NVML names. */
    public List<String> names() {
        return Stream.concat(Stream.of(id), Stream.concat(aliases.stream(), nvmlNames.stream())).toList();
    }
}
