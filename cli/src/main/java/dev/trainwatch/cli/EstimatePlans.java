package dev.trainwatch.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.collector.state.GpuHourPrices;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.estimator.plan.RunPlans;
import dev.trainwatch.estimator.plan.RunPlans.Plan;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code estimate --compare-gpus} and {@code --from-run}: plans across GPUs, an observed run re-priced elsewhere. */
final class EstimatePlans {

    private EstimatePlans() {
    }

    static int run(EstimateCommand c) throws JsonProcessingException {
        PrintWriter out = c.spec.commandLine().getOut();
        GpuHourPrices prices = CollectorOptions.gpuHourPrices(c.gpuHourPrice);
        Estimator estimator = c.options.catalog.estimator();
        RunSpec flags = c.options.toRunSpec();
        ObservedRun observed = null;
        RunSpec base;
        if (c.fromRun != null) {
            if (c.dataDir == null) {
                throw new UserError(ExitCodes.USAGE, "--from-run needs --data-dir DIR (the collector's data directory)");
            }
            observed = RunHistoryReader.observed(c.dataDir, c.fromRun, estimator);
            base = observed.spec().overriddenBy(flags);
        } else {
            base = flags;
            if (base.model() == null) {
                throw new UserError(ExitCodes.USAGE, "no model given: use --model ID or --config FILE (see 'trainwatch models')");
            }
        }
        List<String> gpus = c.compareGpus != null ? c.compareGpus : List.of(base.gpu() != null ? base.gpu() : "");
        if (gpus.isEmpty() || (gpus.size() == 1 && gpus.get(0).isBlank())) {
            throw new UserError(ExitCodes.USAGE, "no GPU given: use --gpu ID or --compare-gpus ID,ID (see 'trainwatch gpus')");
        }
        List<Plan> plans = new ArrayList<>();
        Repricing single = null;
        for (String gpu : gpus) {
            RunSpec target = base.onHardware(gpu.strip(), null, null);
            if (observed != null) {
                target = flags.images() != null ? target
                        : RunPlans.keepSamples(estimator::estimate, observed.spec(), target, flags.totalSteps());
                Repricing r = estimator.reprice(observed, target);
                single = r;
                plans.add(RunPlans.plan(r.target(), r.stepSeconds(), r.samplesPerSecond(), r.totalSeconds(), r.remainingSeconds(),
                        r.modelAnchor(), prices::price, r.target().fits() ? null : "does not fit at this batch"));
            } else {
                plans.add(RunPlans.fromCatalog(estimator::estimate, target, prices::price));
            }
        }
        if (c.json) {
            Map<String, Object> body = new LinkedHashMap<>();
            if (single != null && plans.size() == 1) {
                body.put("repricing", single);
            }
            body.put("plans", plans);
            out.println(Json.MAPPER.writeValueAsString(body));
        } else {
            if (observed != null) {
                Repricing r = single;
                RunSpec s = r.source().spec();
                out.printf(Locale.ROOT, "run %s: %s on %d x %s, batch %d per GPU: observed %.3f s per step (priced %.3f s,"
                                + " x%.2f)%n", c.fromRun, r.source().model(), s.gpus(), r.source().gpu(), s.batch(),
                        observed.stepSeconds(), r.source().stepSeconds(), r.observedStepSeconds() / r.source().stepSeconds());
                r.notes().forEach(n -> out.println("  " + n));
                out.println();
            }
            printPlans(out, plans);
            if (observed != null && plans.size() == 1) {
                out.printf(Locale.ROOT, "%nwhere the step goes on %s (anchored)%n", single.target().gpu());
                double step = single.stepSeconds();
                single.stepOperations().entrySet().stream()
                        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                        .forEach(e -> out.printf(Locale.ROOT, "  %-24s %9.3f s  %5.1f%%%n", e.getKey(), e.getValue(),
                                100 * e.getValue() / step));
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    private static void printPlans(PrintWriter out, List<Plan> plans) {
        out.printf(Locale.ROOT, "%-16s %5s %-5s %-10s %-19s %9s %10s %12s %10s %10s%n", "GPU", "GPUS", "FITS", "BATCH",
                "PEAK / MEMORY", "MAX BATCH", "STEP", "SAMPLES/S", "TO FINISH", "COST");
        for (Plan p : plans) {
            String batch = p.gradAccumulation() > 1 ? p.batch() + "x" + p.gradAccumulation() : String.valueOf(p.batch());
            String finish = p.remainingSeconds() != null ? EstimateCommand.duration(p.remainingSeconds()) + " left"
                    : p.totalSeconds() != null ? EstimateCommand.duration(p.totalSeconds()) : "-";
            out.printf(Locale.ROOT, "%-16s %5d %-5s %-10s %-19s %9d %8.3f s %12.2f %10s %10s%n", p.gpu(), p.gpus(),
                    p.fits() ? "yes" : "no", batch, String.format(Locale.ROOT, "%.1f / %.1f GiB",
                            p.peakMemoryBytes() / (double) (1L << 30), p.gpuMemoryBytes() / (double) (1L << 30)),
                    p.maxBatch(), p.stepSeconds(), p.samplesPerSecond(), finish,
                    p.cost() == null ? "-" : String.format(Locale.ROOT, "%,.0f", p.cost()));
        }
        for (Plan p : plans) {
            if (p.note() != null) {
                out.println("  " + p.gpu() + ": " + p.note());
            }
        }
        if (plans.stream().allMatch(p -> p.totalSeconds() == null)) {
            out.println("  (give --total-steps, or --images and --epochs, for the time and cost to finish)");
        }
    }
}
