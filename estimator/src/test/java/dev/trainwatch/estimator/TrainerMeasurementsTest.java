package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The estimator against published VRAM and host-memory figures of LoRA runs of today's DiTs
 * ({@code src/test/resources/measurements/trainers.tsv}, each row with its source): at least 75% within range, and
 * every row's result printed so docs/ESTIMATOR.md's table can be checked against it.
 */
@Timeout(60)
class TrainerMeasurementsTest {

    private static final double GIB = 1024.0 * 1024 * 1024;

    private final Estimator estimator = Estimator.bundled();

    record Outcome(String id, String kind, double measured, double predicted, boolean within) {
    }

    static List<Map<String, String>> rows() throws IOException {
        return PublishedAccuracyTest.tsv("/measurements/trainers.tsv");
    }

    static RunSpec spec(Map<String, String> r) {
        Integer frames = integer(r.get("frames"));
        List<String> targets = r.get("targets").equals("-") ? null : Arrays.asList(r.get("targets").split(","));
        return new RunSpec(r.get("model"), r.get("gpu"), 1, integer(r.get("batch")), null, integer(r.get("height")),
                integer(r.get("width")), frames, "bf16", r.get("optimizer"), true, false, "precomputed", null, "flash",
                integer(r.get("accumulation")), null)
                .withPhysics(null, null, integer(r.get("lora_rank")), targets, null, null)
                .withTrainer(text(r.get("base_weights")), integer(r.get("blocks_to_swap")));
    }

    Outcome score(Map<String, String> r) {
        Estimate e = estimator.estimate(spec(r));
        double measured = Double.parseDouble(r.get("measured"));
        String kind = r.get("kind");
        return switch (kind) {
            case "fits" -> new Outcome(r.get("id"), kind, measured, e.peakMemoryBytes() / GIB,
                    e.peakMemoryBytes() <= measured * GIB);
            case "host_exceeds" -> new Outcome(r.get("id"), kind, measured, e.hostMemoryBytes() / 1e9,
                    e.hostMemoryBytes() > measured * 1e9);
            case "host", "memory", "step" -> {
                double predicted = kind.equals("step") ? e.stepSeconds()
                        : (kind.equals("host") ? e.hostMemoryBytes() : e.peakMemoryBytes()) / 1e9;
                yield new Outcome(r.get("id"), kind, measured, predicted,
                        predicted >= Double.parseDouble(r.get("low")) && predicted <= Double.parseDouble(r.get("high")));
            }
            default -> throw new IllegalStateException("unknown kind " + kind);
        };
    }

    @Test
    void threeQuartersOfThePublishedFiguresAreWithinRange() throws IOException {
        List<Outcome> outcomes = new ArrayList<>();
        for (Map<String, String> r : rows()) {
            outcomes.add(score(r));
        }
        long within = outcomes.stream().filter(Outcome::within).count();
        for (Outcome o : outcomes) {
            System.out.printf(Locale.ROOT, "%-32s %-13s measured %7.2f predicted %7.2f %s%n", o.id(), o.kind(),
                    o.measured(), o.predicted(), o.within() ? "within" : "MISS");
        }
        System.out.printf(Locale.ROOT, "%d of %d within range%n", within, outcomes.size());
        assertThat(outcomes).hasSizeGreaterThanOrEqualTo(19);
        assertThat((double) within / outcomes.size()).as(within + " of " + outcomes.size()).isGreaterThanOrEqualTo(0.75);
    }

    private static Integer integer(String v) {
        return v == null || v.equals("-") ? null : Integer.valueOf(v);
    }

    private static String text(String v) {
        return v == null || v.equals("-") ? null : v;
    }
}
