package dev.trainwatch.cli;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.protocol.Json;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;

/** {@code trainwatch gpus}: the GPU catalog (memory, bandwidth, dense peaks per dtype). */
@Command(name = "gpus", mixinStandardHelpOptions = true,
        description = "List the GPUs the estimator knows: memory, bandwidth and dense tensor peaks per dtype.")
final class GpusCommand extends CatalogListing {

    @Override
    List<Map<String, Object>> rows(Estimator estimator) {
        return estimator.catalog().gpus().stream().map(g -> {
            Map<String, Object> row = Json.MAPPER.convertValue(g, ModelsCommand.ROW);
            row.put("origin", estimator.catalog().origin("gpu", g.id()));
            return row;
        }).toList();
    }

    @Override
    void table(Estimator estimator, PrintWriter out) {
        out.printf(Locale.ROOT, "%-15s %-26s %-9s %9s %9s %8s %8s %8s %8s  %-8s %s%n", "ID", "NAME", "ARCH", "MEMORY",
                "GB/s", "FP16", "BF16", "TF32", "FP32", "ORIGIN", "NVML NAMES");
        for (GpuInfo g : estimator.catalog().gpus()) {
            out.printf(Locale.ROOT, "%-15s %-26s %-9s %5.1f GiB %9.0f %8s %8s %8s %8s  %-8s %s%n", g.id(), g.name(),
                    g.architecture(), g.memoryBytes() / (double) (1L << 30), g.bandwidthGbps(), tflops(g.fp16Tflops()),
                    tflops(g.bf16Tflops()), tflops(g.tf32Tflops()), tflops(g.fp32Tflops()),
                    estimator.catalog().origin("gpu", g.id()), String.join(", ", g.nvmlNames()));
        }
        out.println("TFLOPS are dense tensor peaks with FP32 accumulate (no 2:4 sparsity); '-' = not supported.");
    }

    private static String tflops(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.1f", value);
    }
}
