package dev.trainwatch.estimator.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.plan.RunPlans.Plan;
import dev.trainwatch.protocol.RunSpec;
import org.junit.jupiter.api.Test;

class RunPlansTest {

    private final Estimator estimator = Estimator.bundled();

    private static RunSpec spec(String gpu, int gpus, int batch, Long totalSteps, String features) {
        return new RunSpec("pixart-sigma-xl-2", gpu, gpus, batch, 1024, null, null, null, null, null, null, null,
                features, null, null, null, totalSteps);
    }

    @Test
    void aPlanIsPricedPerGpuHourOnlyWhereAPriceApplies() {
        Estimate e = estimator.estimate(spec("a100-80gb", 8, 4, 10_000L, null));
        Plan priced = RunPlans.plan(e, 2.0, 16.0, 36_000.0, null, null, gpu -> gpu.equals("a100-80gb") ? 1.5 : Double.NaN, null);
        assertThat(priced.gpuHours()).isCloseTo(80.0, within(1e-9));
        assertThat(priced.cost()).isCloseTo(120.0, within(1e-9));
        Plan unpriced = RunPlans.plan(e, 2.0, 16.0, 36_000.0, null, null, gpu -> Double.NaN, null);
        assertThat(unpriced.gpuHours()).isCloseTo(80.0, within(1e-9));
        assertThat(unpriced.cost()).isNull();
        assertThat(RunPlans.plan(e, 2.0, 16.0, null, null, null, gpu -> 1.5, null).cost()).isNull();
    }

    @Test
    void aRepricedRunKeepsItsSamplesWhenTheGlobalBatchChanges() {
        RunSpec source = spec("a100-80gb", 1, 8, 20_000L, null);
        RunSpec wider = source.onHardware("h100-sxm", 8, null);
        assertThat(RunPlans.keepSamples(estimator::estimate, source, wider, null).totalSteps()).isEqualTo(2_500L);
        assertThat(RunPlans.keepSamples(estimator::estimate, source, wider, 7L)).isSameAs(wider);
        RunSpec same = source.onHardware("h100-sxm", null, null);
        assertThat(RunPlans.keepSamples(estimator::estimate, source, same, null)).isSameAs(same);
    }

    @Test
    void theDataTimerHoldsTheOnlineEncodersOnlyWhenTheLogDoesNotTimeThemApart() {
        Estimate online = estimator.estimate(spec("a100-80gb", 1, 8, null, "online"));
        ObservedRun pixart = RunPlans.observed(online, 10.0, 0.6, null, null, 40L);
        assertThat(pixart.dataSeconds()).isCloseTo(6.0, within(1e-9));
        assertThat(pixart.encoderSeconds()).isNull();
        assertThat(pixart.dataIncludesEncoders()).isTrue();
        ObservedRun sana = RunPlans.observed(online, 10.0, 0.9, 0.2, 0.1, 40L);
        assertThat(sana.encoderSeconds()).isCloseTo(3.0, within(1e-9));
        assertThat(sana.dataSeconds()).isCloseTo(9.99 - 3.0, within(1e-9));
        assertThat(sana.dataIncludesEncoders()).isFalse();
    }

    @Test
    void aBatchThatDoesNotFitIsPricedWithAccumulation() {
        Estimate huge = estimator.estimate(spec("a100-80gb", 1, 4096, null, null));
        assertThat(huge.fits()).isFalse();
        Plan p = RunPlans.fromCatalog(estimator::estimate, spec("a100-80gb", 1, 4096, null, null), gpu -> Double.NaN);
        assertThat(huge.maxBatch()).isPositive();
        assertThat(p.fits()).isTrue();
        assertThat((long) p.batch() * p.gradAccumulation()).isGreaterThanOrEqualTo(4096);
        assertThat(p.note()).contains("does not fit").contains("accumulation");
    }
}
