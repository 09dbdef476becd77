package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.FakeRun.GIB;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.config.ConfigReaders;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The failures the DiT LoRA trainers' users report (issue 40), each with the quiet case beside it. Figures follow
 * public threads:
 * <ul>
 * <li>another process on the card: apache/mxnet#6798 ("another program used a lot of GPU memory"),
 *     jcjohnson/neural-style#150 (Xorg holding GPU memory beside the job);</li>
 * <li>host memory under block swap: ostris/ai-toolkit#787 (a Wan 2.2 LoRA with everything offloaded to RAM "killed by
 *     oom killer" while "the UI shows it still working"), kohya-ss/musubi-tuner#700 (pinned memory for block swap);</li>
 * <li>PCIe-bound steps: kohya-ss/musubi-tuner#700 (40 swapped blocks: 17.39 s/it pinned, 15.91 s/it not) and #972
 *     (block swap's slowdown "approximately 50%" before its host-to-device-only copies);</li>
 * <li>sampling: ostris/ai-toolkit#992 (an LTX LoRA on a 24 GB RTX 3090 "runs out of memory as soon as it gets to
 *     Generating baseline samples before training").</li>
 * </ul>
 */
class DitTrainerFailuresTest {

    private static final double NOW = 1_780_000_000;
    private static final double RTX4090 = 23.99 * GIB;
    private static final DetectorSettings SETTINGS = DetectorSettings.defaults();

    private static OtherProcess stranger(long pid, double gib, double since) {
        return new OtherProcess(pid, gib * GIB, since, null);
    }

    private static FakeRun fluxOn4090(Integer blocks, double usedGib, List<OtherProcess> others) {
        FakeRun run = new FakeRun(NOW, FakeRun.lora("flux.1-dev", "rtx4090", 1024, 1024, null, null, blocks));
        FakeRun.IndexedGpu gpu = new FakeRun.IndexedGpu("NVIDIA GeForce RTX 4090", RTX4090, NOW);
        gpu.memory = i -> usedGib * GIB;
        gpu.others = others;
        run.gpus.add(gpu);
        return run;
    }

    // --- another process on the run's GPU

    @Test
    void aStrangerHoldingTheCardIsNamedWithWhatAndSinceWhenWhenHeadroomRunsShort() {
        FakeRun run = fluxOn4090(18, 23.5, List.of(stranger(31337, 6.0, NOW - 3600), stranger(2110, 0.3, NOW - 9000)));
        Finding f = new OomRiskDetector(SETTINGS).evaluate(run, false).orElseThrow();
        assertThat(f.message()).contains("GPU 0 on node-1 has 0.5 GiB free of 24.0 GiB")
                .contains("not this run's: pid 31337 holds 6.0 GiB since").doesNotContain("2110");
        assertThat(f.suggestion()).startsWith("free 6.0 GiB on GPU 0 on node-1: stop pid 31337");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> named = (List<Map<String, Object>>) f.evidence().get("other_processes");
        assertThat(named).singleElement().satisfies(p -> {
            assertThat(p).containsEntry("pid", 31337L).containsEntry("since", NOW - 3600);
        });
    }

    @Test
    void memoryAboveTheEstimateIsTheStrangersWhenTheRunItselfUsesWhatWasPredicted() {
        FakeRun run = new FakeRun(NOW, FakeRun.lora("flux.1-dev", "a100-80gb", 1024, 1024, null, null, null));
        double runOwn = run.estimate.peakMemoryBytes() + 0.4 * GIB;
        FakeRun.IndexedGpu gpu = new FakeRun.IndexedGpu("NVIDIA A100-SXM4-80GB", 80 * GIB, NOW);
        gpu.memory = i -> runOwn + 20 * GIB;
        gpu.others = List.of(stranger(4242, 20.0, NOW - 600));
        run.gpus.add(gpu);
        Finding f = new MemoryAboveEstimateDetector(SETTINGS).evaluate(run, false).orElseThrow();
        assertThat(f.message()).contains("of it is not this run's (pid 4242 holds 20.0 GiB since");
        assertThat(f.suggestion()).startsWith("free 20.0 GiB on GPU 0 on node-1: stop pid 4242");
        assertThat(((Number) f.evidence().get("run_peak_memory_bytes")).doubleValue()).isEqualTo(Math.round(runOwn));
    }

    @Test
    void theRunsOwnProcessesADisplayServerAndAnotherWatchedRunAreNotBlamed() {
        FakeRun run = new FakeRun(NOW, FakeRun.lora("flux.1-dev", "a100-80gb", 1024, 1024, null, null, null));
        double runOwn = run.estimate.peakMemoryBytes();
        FakeRun.IndexedGpu gpu = new FakeRun.IndexedGpu("NVIDIA A100-SXM4-80GB", 80 * GIB, NOW);
        // Two runs share the card by design; the other one's rank holds 30 GiB, Xorg 0.3 GiB.
        gpu.memory = i -> runOwn + 30.3 * GIB;
        gpu.others = List.of(new OtherProcess(777, 30 * GIB, NOW - 7200, "other-lora"), stranger(2110, 0.3, NOW));
        run.gpus.add(gpu);
        assertThat(new MemoryAboveEstimateDetector(SETTINGS).evaluate(run, false)).isEmpty();
        assertThat(new OomRiskDetector(SETTINGS).evaluate(run, false)).isEmpty();
    }

    // --- host memory climbing under block swap

    private static FakeRun nodeOf(double totalGib, java.util.function.IntToDoubleFunction availableGib) {
        FakeRun run = fluxOn4090(18, 16, List.of());
        run.nodes.add(new FakeRun.Node(totalGib * GIB, NOW, i -> availableGib.applyAsDouble(i) * GIB));
        return run;
    }

    @Test
    void aSteadyClimbUnderBlockSwapIsToldWithWhenTheMemoryRunsOut() {
        // 64 GiB node, MemAvailable falls 0.5 GiB a minute to 20 GiB: gone in 40 minutes, long before the short
        // routes (under 10 %, or under 15 minutes) would speak.
        FakeRun run = nodeOf(64, i -> 20 + 0.5 * (FakeRun.Node.READINGS - 1 - i) * 5 / 60);
        Finding f = new HostMemoryDetector(SETTINGS).evaluate(run, false).orElseThrow();
        assertThat(f.severity()).isEqualTo(Severity.WARNING);
        assertThat(f.message()).contains("has 20.0 GiB of 64.0 GiB RAM available, falling steadily 0.5 GiB/min, gone "
                + "in about 40.0 min (at ").contains("the run swaps 18 blocks to pinned host memory (the estimate: ");
        assertThat(f.evidence()).containsEntry("blocks_to_swap", 18)
                .containsEntry("predicted_host_memory_bytes", run.estimate.hostMemoryBytes())
                .containsEntry("exhausted_at", Math.round(NOW + 2400));
        assertThat(f.suggestion()).startsWith("save a checkpoint now");
    }

    @Test
    void flatHighMemoryPageCacheChurnAndAOneOffDropAreQuiet() {
        HostMemoryDetector d = new HostMemoryDetector(SETTINGS);
        // Flat at 12 % available, a few MiB either way.
        assertThat(d.evaluate(nodeOf(64, i -> 7.7 + 0.004 * (i % 3)), false)).isEmpty();
        // Page cache filled and reclaimed every two minutes (MemAvailable counts it): 20–23 GiB, no trend.
        assertThat(d.evaluate(nodeOf(64, i -> 20 + 3.0 * (i % 24) / 24), false)).isEmpty();
        // The swapped blocks pinned once at start (30 GiB gone in a minute), flat since.
        assertThat(d.evaluate(nodeOf(64, i -> i < 12 ? 50 - 2.5 * i : 20), false)).isEmpty();
    }

    // --- PCIe-bound steps

    private static FakeRun swapping(double rxBytesPerSecond, double utilization) {
        FakeRun run = fluxOn4090(18, 15.9, List.of());
        FakeRun.IndexedGpu gpu = (FakeRun.IndexedGpu) run.gpus.get(0);
        gpu.pcieRx = i -> rxBytesPerSecond;
        gpu.utilization = i -> utilization;
        run.steps = new FakeRun.EvenSteps(20, run.estimate.stepSeconds() * 3, 10, NOW);
        return run;
    }

    @Test
    void aSlowStepWithPcieNearTheLinkAndIdleSmsIsPcieBoundAndTheFixIsFewerSwappedBlocks() {
        FakeRun run = swapping(25e9, 0.35);
        Finding f = new StepTimeAboveEstimateDetector(SETTINGS).evaluate(run, false).orElseThrow();
        assertThat(f.message()).contains("likely causes: PCIe-bound (18 swapped blocks copied into GPU 0 on node-1 at "
                + "25.0 GB/s, 78% of its link, while it computes 35% of the time)");
        assertThat(f.evidence()).containsEntry("pcie_link_bytes_per_second", 32_000_000_000L)
                .containsEntry("blocks_to_swap", 18);
        assertThat(f.suggestion()).startsWith("swap fewer blocks: --blocks-to-swap ");
        int fewer = Integer.parseInt(f.suggestion().replaceAll("^swap fewer blocks: --blocks-to-swap (\\d+) .*", "$1"));
        assertThat(fewer).isBetween(1, 17);
        // The fewest that fit the card, by the estimator: one fewer does not.
        assertThat(run.whatIf(run.spec.withTrainer(null, fewer)).peakMemoryBytes()).isLessThanOrEqualTo((long) RTX4090);
        assertThat(run.whatIf(run.spec.withTrainer(null, fewer - 1)).peakMemoryBytes()).isGreaterThan((long) RTX4090);
    }

    @Test
    void aComputeBoundSlowStepOrOneWithoutPcieCountersIsNotCalledPcieBound() {
        Finding busy = new StepTimeAboveEstimateDetector(SETTINGS).evaluate(swapping(25e9, 0.97), false).orElseThrow();
        assertThat(busy.message()).doesNotContain("PCIe");
        Finding lowTraffic = new StepTimeAboveEstimateDetector(SETTINGS).evaluate(swapping(4e9, 0.35), false)
                .orElseThrow();
        assertThat(lowTraffic.message()).doesNotContain("PCIe");
        Finding noCounters = new StepTimeAboveEstimateDetector(SETTINGS).evaluate(swapping(Double.NaN, 0.35), false)
                .orElseThrow();
        assertThat(noCounters.message()).doesNotContain("PCIe");
        assertThat(noCounters.evidence()).doesNotContainKey("pcie_rx_bytes_per_second");
    }

    // --- the sampling phase

    /** An LTX LoRA that samples every 250 steps, its GPU holding {@code usedGib}, at step 109. */
    private static FakeRun ltxOn3090(double usedGib) {
        FakeRun run = new FakeRun(NOW, FakeRun.lora("ltx-video", "rtx3090", 480, 832, 33, null, null).withSampling(250));
        FakeRun.IndexedGpu gpu = new FakeRun.IndexedGpu("NVIDIA GeForce RTX 3090", RTX4090, NOW);
        gpu.memory = i -> usedGib * GIB;
        run.gpus.add(gpu);
        run.steps = new FakeRun.EvenSteps(10, run.estimate.stepSeconds(), 10, NOW);
        return run;
    }

    @Test
    void samplingThatWillNotFitBesideTheTrainingStateIsWarnedBeforeItStarts() {
        FakeRun run = ltxOn3090(23.15);
        Estimate e = run.estimate;
        assertThat(e.samplingPeakMemoryBytes()).isGreaterThan(e.peakMemoryBytes() + (long) (0.6 * GIB));
        Finding f = new OomRiskDetector(SETTINGS).evaluate(run, false).orElseThrow();
        assertThat(f.severity()).isEqualTo(Severity.WARNING);
        assertThat(f.message()).startsWith("GPU 0 on node-1 holds 23.2 GiB while training and sampling adds about ")
                .endsWith("so the run will run out of memory at its first sampling; sampling due at step 250");
        assertThat(f.evidence()).containsEntry("sample_every", 250);
        assertThat(f.suggestion()).startsWith("sample at a smaller size or fewer frames");
        // A stranger on the card is the first thing to free.
        FakeRun shared = ltxOn3090(23.15);
        ((FakeRun.IndexedGpu) shared.gpus.get(0)).others = List.of(stranger(5151, 9.0, NOW - 60));
        assertThat(new OomRiskDetector(SETTINGS).evaluate(shared, false).orElseThrow().suggestion())
                .startsWith("free 9.0 GiB on GPU 0 on node-1: stop pid 5151");
    }

    @Test
    void samplingThatFitsOrThatTheRunAlreadyWentThroughIsQuiet() {
        assertThat(new OomRiskDetector(SETTINGS).evaluate(ltxOn3090(12), false)).isEmpty();
        FakeRun sampled = ltxOn3090(23.15);
        sampled.samplingTs = NOW - 30; // the log announced its sampling and steps came after it
        assertThat(new OomRiskDetector(SETTINGS).evaluate(sampled, false)).isEmpty();
    }

    @Test
    void anEstimatedSamplingPeakAboveTheCardIsWarnedFromTheEstimateAlone() {
        FakeRun run = ltxOn3090(6);
        Estimate e = run.estimate;
        run.estimate = samplingPeak(e, 30);
        Optional<Finding> f = new OomRiskDetector(SETTINGS).evaluate(run, false);
        assertThat(f).isPresent();
        assertThat(f.get().message()).isEqualTo("sampling needs 30.0 GiB on GPU 0 on node-1, which has 24.0 GiB: the "
                + "run will run out of memory at its first sampling; sampling due at step 250");
    }

    /** A kohya sd-scripts Flux LoRA TOML as users post them (fp8 base, cached latents and text outputs). */
    private static final String KOHYA_FLUX = "pretrained_model_name_or_path = \"/models/flux1-dev.safetensors\"\n"
            + "network_module = \"networks.lora_flux\"\nnetwork_dim = 16\nfp8_base = true\nresolution = \"1024,1024\"\n"
            + "train_batch_size = 1\nmixed_precision = \"bf16\"\noptimizer_type = \"adamw8bit\"\n"
            + "gradient_checkpointing = true\ncache_latents = true\ncache_text_encoder_outputs = true\n";

    /** The same estimate with another sampling peak. */
    private static Estimate samplingPeak(Estimate e, double gib) {
        return new Estimate(e.spec(), e.model(), e.gpu(), e.params(), e.trainableParams(), e.peakMemoryBytes(),
                e.gpuMemoryBytes(), e.fits(), e.maxBatch(), e.stepSeconds(), e.samplesPerSecond(), e.breakdown(),
                e.stepBreakdown(), e.totalSeconds(), e.suggestions(), e.notes(), e.flops(), e.stepOperations(),
                e.why(), e.hostMemoryBytes(), e.hostBreakdown(), (long) (gib * GIB), e.samplingBreakdown());
    }

    @Test
    void samplingIsWarnedOnlyForARunKnownToSample(@TempDir Path dir) throws IOException {
        // Every estimate prices a sampling peak: an LTX LoRA that never samples, 0.8 GiB below its card's top, is quiet.
        FakeRun never = new FakeRun(NOW, FakeRun.lora("ltx-video", "rtx3090", 480, 832, 33, null, null));
        FakeRun.IndexedGpu gpu = new FakeRun.IndexedGpu("NVIDIA GeForce RTX 3090", RTX4090, NOW);
        gpu.memory = i -> 23.15 * GIB;
        never.gpus.add(gpu);
        never.steps = new FakeRun.EvenSteps(10, never.estimate.stepSeconds(), 10, NOW);
        assertThat(new OomRiskDetector(SETTINGS).evaluate(never, false)).isEmpty();
        // Its log announcing a sampling phase says it samples.
        never.samplingTs = NOW + 1;
        assertThat(new OomRiskDetector(SETTINGS).evaluate(never, false)).isPresent();
        // A kohya config that samples every 250 steps, whose sampling needs 30 GiB on a 24 GiB card.
        for (String extra : List.of("", "sample_every_n_steps = 250\nsample_prompts = \"prompts.txt\"\n")) {
            Path toml = dir.resolve("flux" + extra.length() + ".toml");
            Files.writeString(toml, KOHYA_FLUX + extra);
            FakeRun run = new FakeRun(NOW, ConfigReaders.readWithNotes(toml, FakeRun.ESTIMATOR.catalog()).spec()
                    .overriddenBy(RunSpec.empty().onHardware("rtx4090", 1, null)));
            run.estimate = samplingPeak(run.estimate, 30);
            FakeRun.IndexedGpu card = new FakeRun.IndexedGpu("NVIDIA GeForce RTX 4090", RTX4090, NOW);
            card.memory = i -> 16 * GIB;
            run.gpus.add(card);
            run.steps = new FakeRun.EvenSteps(10, run.estimate.stepSeconds(), 10, NOW);
            Optional<Finding> f = new OomRiskDetector(SETTINGS).evaluate(run, false);
            if (extra.isEmpty()) {
                assertThat(f).as("a kohya config without sampling").isEmpty();
            } else {
                assertThat(f.orElseThrow().message()).isEqualTo("sampling needs 30.0 GiB on GPU 0 on node-1, which has "
                        + "24.0 GiB: the run will run out of memory at its first sampling; sampling due at step 250");
            }
        }
    }
}
