package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.estimator.config.BundledConfigs;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The step priced as the sum of its operations, and the regimes and answers built on it (issue #21). */
class EstimatorPhysicsTest {

    private final Estimator estimator = Estimator.bundled();
    private static final double GIB = 1L << 30;

    private static RunSpec run(String model, String gpu, int gpus, int batch, String precision) {
        return new RunSpec(model, gpu, gpus, batch, null, null, null, null, precision, null, null, null, null, null,
                null, null, null);
    }

    @Test
    void aGemmThatSpillsIntoASecondWaveCostsTwoWaves() {
        GpuInfo a100 = estimator.catalog().gpu("a100-80gb").orElseThrow();
        var arch = estimator.catalog().architecture(a100);
        StepTimeModel.Hw hw = new StepTimeModel.Hw(a100, arch.tileM(), arch.tileN(), a100.bandwidthGbps() * 1e9 * 0.8, 10e-6);
        double rate = 312e12 * StepTimeModel.GEMM_EFFICIENCY;
        // 108 SMs: 12 x 9 tiles of 128x128 fill one wave; one column more (12 x 10 tiles) needs two.
        double full = StepTimeModel.gemmSeconds(hw, 128 * 12, 128 * 9, 16384, rate, 2);
        double spill = StepTimeModel.gemmSeconds(hw, 128 * 12, 128 * 9 + 1, 16384, rate, 2);
        assertThat(spill / full).isCloseTo(2.0, within(0.01));
        // A tiny GEMM costs one launch, not its FLOPs.
        assertThat(StepTimeModel.gemmSeconds(hw, 8, 8, 8, rate, 2)).isEqualTo(10e-6);
    }

    @Test
    void dittRecipesTurnTf32OnAsTheirTrainScriptDoesExceptWhereTheGpuHasNone() {
        assertThat(estimator.estimate(RunSpec.empty().overriddenBy(run("dit-xl-2", "a100-80gb", 1, 32, null)))
                .spec().precision()).isEqualTo("tf32");
        assertThat(estimator.estimate(run("dit-xl-2", "v100-32gb", 1, 32, null)).spec().precision()).isEqualTo("fp32");
    }

    @Test
    void pixartSigmaAt1024SaysThatFp32AttentionIsTheLargestTermAndWhatHalfWouldSave() {
        Estimate e = estimator.estimate(run("pixart-sigma-xl-2", "a800-80gb", 1, 20, null));
        assertThat(e.why()).isNotEmpty();
        assertThat(e.why()).anyMatch(w -> w.startsWith("fp32 attention") && w.contains("would save"));
        assertThat(e.stepOperations()).containsKeys("gemm", "attention", "elementwise", "text_encoder", "vae_encoder");
        double sum = e.stepOperations().values().stream().mapToDouble(Double::doubleValue).sum();
        assertThat(sum).isCloseTo(e.stepSeconds(), within(1e-9 * e.stepSeconds()));
    }

    @Test
    void aConfigWithFp32AttentionOffIsPricedInHalfNotOnlyNoted() throws Exception {
        Path dir = Files.createTempDirectory("pixart");
        Path on = dir.resolve("on.py");
        Path off = dir.resolve("off.py");
        String base = "model = 'PixArtMS_XL_2'\nmodel_max_length = 300\nimage_size = 1024\ntrain_batch_size = 8\n"
                + "mixed_precision = 'fp16'\ndata = dict(load_vae_feat=True, load_t5_feat=True)\n";
        Files.writeString(on, base + "fp32_attention = True\n");
        Files.writeString(off, base + "fp32_attention = False\n");
        RunSpec upcast = BundledConfigs.read(on).overriddenBy(run(null, "a100-80gb", 1, 8, null));
        RunSpec half = BundledConfigs.read(off).overriddenBy(run(null, "a100-80gb", 1, 8, null));
        assertThat(half.attentionPrecision()).isEqualTo("half");
        Estimate a = estimator.estimate(upcast);
        Estimate b = estimator.estimate(half);
        assertThat(b.stepSeconds()).isLessThan(0.8 * a.stepSeconds());
        assertThat(b.peakMemoryBytes()).isLessThan(a.peakMemoryBytes());
    }

    @Test
    void openSora2OnEightA100sWithZero2AndMixedWeightsFitsAtAbout65GiB() {
        // Open-Sora's own setup for 8 x A100: ZeRO-2 with half parameters and fp32 master weights, reported at 65.5 GiB.
        RunSpec s = run("opensora-2.0", "a100-80gb", 8, 1, null).withRegime(null, null, "mixed", null, null, null)
                .overriddenBy(new RunSpec(null, null, null, null, null, null, null, null, null, null, null, null, null, 2,
                        null, null, null));
        Estimate e = estimator.estimate(s);
        assertThat(e.fits()).isTrue();
        assertThat(e.peakMemoryBytes() / GIB).isCloseTo(65.5, within(65.5 * 0.03));
    }

    @Test
    void whenNothingFitsOneGpuTheSuggestionsNameGpusZeroStagesAndMixedWeights() {
        Estimate e = estimator.estimate(run("opensora-2.0", "a100-80gb", 1, 1, null));
        assertThat(e.fits()).isFalse();
        assertThat(e.suggestions()).anyMatch(x -> x.change().contains("--gpus 8 --zero 2 --weights mixed")
                && x.newPeakMemoryBytes() < e.gpuMemoryBytes());
        assertThat(e.suggestions()).anyMatch(x -> x.change().contains("--zero 3"));
        // A run that fits gets no scale-out advice.
        assertThat(estimator.estimate(run("dit-xl-2", "a100-80gb", 1, 32, null)).suggestions())
                .noneMatch(x -> x.change().contains("GPUs with ZeRO"));
    }

    @Test
    void loraFreezesTheBaseAndTrainsAFewMillionAdapterParameters() {
        RunSpec full = run("pixart-sigma-xl-2", "rtx4090", 1, 1, "bf16").withRegime("precomputed", "precomputed",
                null, null, null, null);
        RunSpec lora = full.withPhysics(null, null, 16, List.of("attention", "cross_attention"), null, null);
        Estimate f = estimator.estimate(full);
        Estimate l = estimator.estimate(lora);
        // Rank 16 on the self- and cross-attention projections of 28 blocks: 16 x (in + out) per matrix.
        long perBlock = 16L * ((1152 + 3456) + (1152 + 1152) + (1152 + 1152) + (1152 + 2304) + (1152 + 1152));
        assertThat(l.trainableParams()).isEqualTo(28 * perBlock);
        assertThat(l.params()).isEqualTo(f.params());
        assertThat(l.peakMemoryBytes()).isLessThan(f.peakMemoryBytes() / 2);
        assertThat(l.breakdown().get("optimizer")).isLessThan(100L << 20);
        // No weight gradients for the frozen base: the step is cheaper, not free.
        assertThat(l.stepSeconds()).isLessThan(f.stepSeconds()).isGreaterThan(0.5 * f.stepSeconds());
        assertThat(l.spec().loraRank()).isEqualTo(16);
    }

    @Test
    void aFrozenBackboneTrainsOnlyTheNamedModuleKinds() {
        RunSpec s = run("dit-xl-2", "a100-80gb", 1, 32, "bf16").withPhysics(null, null, null, List.of("final", "modulation"),
                null, null);
        Estimate e = estimator.estimate(s);
        assertThat(e.trainableParams()).isLessThan(e.params() / 2).isGreaterThan(0);
        assertThatThrownBy(() -> estimator.estimate(s.withPhysics(null, null, null, List.of("feet"), null, null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("unknown module kind 'feet'");
    }

    @Test
    void imagesAndEpochsGiveTheTotalStepsFromTheGlobalBatch() {
        RunSpec s = run("pixart-sigma-xl-2", "a100-80gb", 8, 16, null).withPhysics(null, null, null, null, 30_000_000L, 1.0);
        Estimate e = estimator.estimate(s);
        assertThat(e.spec().totalSteps()).isEqualTo((long) Math.ceil(30_000_000 / 128.0));
        assertThat(e.totalSeconds()).isCloseTo(e.stepSeconds() * e.spec().totalSteps(), within(1e-6));
        assertThatThrownBy(() -> estimator.estimate(s.withPhysics(null, null, null, null, null, 2.0)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("images");
    }

    @Test
    void compiledKernelsFuseTheElementWiseWork() {
        RunSpec eager = run("dit-xl-2", "a100-80gb", 1, 64, "bf16");
        Estimate e = estimator.estimate(eager);
        Estimate c = estimator.estimate(eager.withPhysics("compiled", null, null, null, null, null));
        assertThat(c.stepOperations().get("elementwise")).isLessThan(0.5 * e.stepOperations().get("elementwise"));
        // GEMMs are the same kernels; only the launch floor of the tiny per-sample ones is lower.
        assertThat(c.stepOperations().get("gemm")).isCloseTo(e.stepOperations().get("gemm"), within(0.01 * e.stepOperations().get("gemm")));
        assertThatThrownBy(() -> estimator.estimate(eager.withPhysics("jit", null, null, null, null, null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("kernels");
    }

    @Test
    void repricingAnObservedRunKeepsWhatTheObservationSaysTheEstimateMisses() {
        RunSpec source = run("dit-xl-2", "a100-80gb", 1, 128, "fp16").withRegime("precomputed", "precomputed", null,
                null, null, null).overriddenBy(new RunSpec(null, null, null, null, null, null, null, null, null, null,
                true, true, null, null, null, null, 400_000L));
        Estimate priced = estimator.estimate(source);
        // Observed 30% slower than priced, 0.1 s of it waiting for data.
        double observedStep = priced.stepSeconds() * 1.3 + 0.1;
        ObservedRun observed = new ObservedRun(source, observedStep, 0.1, null, 100_000L, false);
        Repricing same = estimator.reprice(observed, source);
        assertThat(same.stepSeconds()).isCloseTo(observedStep, within(1e-9));
        assertThat(same.modelAnchor()).isCloseTo(1.3, within(1e-9));
        Repricing h100 = estimator.reprice(observed, source.onHardware("h100-sxm", 8, 64));
        Estimate target = h100.target();
        assertThat(h100.stepSeconds()).isCloseTo(target.stepSeconds() * 1.3 + 0.05, within(1e-9));
        assertThat(h100.stepOperations()).containsEntry("data_wait", 0.05);
        assertThat(h100.remainingSeconds()).isCloseTo(h100.stepSeconds() * 300_000, within(1e-6));
        assertThatThrownBy(() -> new ObservedRun(source, -1, null, null, null, false)).isInstanceOf(InvalidSpecException.class);
    }
}
