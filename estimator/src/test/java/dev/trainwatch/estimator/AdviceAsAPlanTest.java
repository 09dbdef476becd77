package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Specs.simple;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 44: advice for the GPUs the user named comes first; when no single change fits, the smallest combination
 * that fits; plans that add GPUs last, labelled.
 */
class AdviceAsAPlanTest {

    private final Estimator estimator = Estimator.bundled();

    private static RunSpec withOptimizer(String model, String gpu, String optimizer) {
        return new RunSpec(model, gpu, null, 1, null, null, null, null, null, optimizer, null, null, null, null, null,
                null, null);
    }

    @Test
    void sanaOnAnA40OpensWithTheOneGpuFixThatChangesLeast() {
        Estimate e = estimator.estimate(withOptimizer("sana-1600m", "a40", "came"));
        assertThat(e.fits()).isFalse();
        Suggestion first = e.suggestions().get(0);
        assertThat(first.change()).startsWith("use 8-bit CAME (--optimizer came8bit)").contains("fits in");
        assertThat(first.plan()).isEqualTo(Suggestion.SINGLE);
        assertThat(first.addsGpus()).isZero();
        assertThat(first.fits()).isTrue();
        assertThat(first.changes()).containsExactly("--optimizer came8bit");
        assertThat(first.givesUp()).isNotBlank();
        assertThatMoreGpusComeLastAndAreLabelled(e.suggestions());
    }

    @Test
    void openSoraOnA4090GetsAOneGpuCombinationThatFits() {
        Estimate e = estimator.estimate(simple("opensora-1.2", "rtx4090", 1));
        assertThat(e.fits()).isFalse();
        assertThat(e.suggestions()).noneMatch(s -> s.plan().equals(Suggestion.SINGLE) && s.fits());
        Suggestion plan = e.suggestions().get(0);
        assertThat(plan.plan()).isEqualTo(Suggestion.COMBINATION);
        assertThat(plan.addsGpus()).isZero();
        assertThat(plan.newPeakMemoryBytes()).isLessThanOrEqualTo(e.gpuMemoryBytes());
        assertThat(plan.changes()).hasSizeBetween(2, 4).contains("--features precomputed");
        assertThat(plan.change()).startsWith("no single change fits on one GPU; together: ").contains("fits in")
                .contains("gives up");
        // What the plan says is what the estimator gives for the changed spec.
        RunSpec changed = new RunSpec("opensora-1.2", "rtx4090", null, 1, null, null, null, null, null,
                flag(plan, "--optimizer"), null, plan.changes().contains("--no-ema") ? false : null, "precomputed",
                null, null, null, null);
        if (!plan.changes().contains("--weights mixed")) {
            assertThat(estimator.estimate(changed).peakMemoryBytes()).isEqualTo(plan.newPeakMemoryBytes());
        }
        assertThatMoreGpusComeLastAndAreLabelled(e.suggestions());
    }

    private static String flag(Suggestion s, String name) {
        return s.changes().stream().filter(c -> c.startsWith(name + " ")).map(c -> c.substring(name.length() + 1))
                .findFirst().orElse(null);
    }

    @Test
    void dropTheEmaAndHalfPrecisionAttentionAreSuggested() {
        Estimate pixart = estimator.estimate(new RunSpec("pixart-sigma-xl-2", "a800-80gb", null, 20, null, null,
                null, null, null, null, null, null, null, null, null, null, null));
        assertThat(pixart.suggestions()).anyMatch(s -> s.change().startsWith("run attention in half precision")
                && s.newStepSeconds() < 0.5 * pixart.stepSeconds());
        Estimate withEma = estimator.estimate(new RunSpec("opensora-1.2", "h100-sxm", null, 1, null, null, null, null,
                null, null, null, true, null, null, null, null, null));
        assertThat(withEma.suggestions()).anyMatch(s -> s.changes().equals(List.of("--no-ema")) && s.savesBytes() > 0);
    }

    @Test
    void aRunThatFitsKeepsMostMemorySavedFirstAndAddsNoGpus() {
        Estimate e = estimator.estimate(simple("dit-xl-2", "a100-80gb", 32));
        assertThat(e.fits()).isTrue();
        assertThat(e.suggestions()).allMatch(s -> s.addsGpus() == 0 && s.plan().equals(Suggestion.SINGLE));
        for (int i = 1; i < e.suggestions().size(); i++) {
            assertThat(e.suggestions().get(i - 1).savesBytes()).isGreaterThanOrEqualTo(e.suggestions().get(i).savesBytes());
        }
    }

    private static void assertThatMoreGpusComeLastAndAreLabelled(List<Suggestion> suggestions) {
        boolean seenMore = false;
        for (Suggestion s : suggestions) {
            if (s.addsGpus() > 0) {
                seenMore = true;
                assertThat(s.plan()).isEqualTo(Suggestion.MORE_GPUS);
                assertThat(s.change()).startsWith("adds " + s.addsGpus() + " GPUs: ");
            } else {
                assertThat(seenMore).as("a change on the user's GPUs after one that adds GPUs").isFalse();
            }
        }
    }
}
