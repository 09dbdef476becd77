package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Split runs are not silent: a spec registered under $SLURM_JOB_ID while the agent names the run by a random
 * TORCHELASTIC_RUN_ID (torchrun --standalone) gets, after a minute without data, the runs the agents do report.
 */
class RunIdentityTest {
    private static final long GIB = FakePredictor.GIB;
    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
    private final RunSpec spec = new RunSpec("dit-xl-2", null, null, 32, 256, null, null, null, "bf16", "adamw", false,
            false, null, 0, null, null, null);

    private void agentReports(String runId, long seq) {
        double t = clock.seconds();
        fleet.ingestBatch(batch("node1", "agent-1", seq, List.of(gpu(t, 0, "GPU-0", 30 * GIB, 0.9)),
                List.of(attribution(runId, List.of("GPU-0"))), List.of()));
        fleet.ingestSteps(runId, List.of(StepEvent.of(seq, 1.0, t)));
    }

    @Test
    void aSpecNothingReportsNamesTheRunsTheAgentsReportAfterAMinute() {
        fleet.putSpec("1234", spec); // the user's $SLURM_JOB_ID
        for (long s = 1; s <= 59; s++) {
            clock.advance(Duration.ofSeconds(1));
            agentReports("tw-3f9a1c2e", s); // what the agent calls it
        }
        assertThat(fleet.run("1234").orElseThrow().unmatched()).as("within the first minute").isNull();
        clock.advance(Duration.ofSeconds(2));
        agentReports("tw-3f9a1c2e", 60);
        fleet.tick();
        RunView.Unmatched hint = fleet.run("1234").orElseThrow().unmatched();
        assertThat(hint).isNotNull();
        assertThat(hint.reportedRuns()).containsExactly("tw-3f9a1c2e");
        assertThat(hint.message()).isEqualTo("nothing has reported run '1234' in a minute since its spec, while "
                + "'tw-3f9a1c2e' reports data without a spec: register the spec under that id, or start the agent "
                + "with --run-id 1234");
        // The run the agent reports is not given the hint: it has data.
        assertThat(fleet.run("tw-3f9a1c2e").orElseThrow().unmatched()).isNull();
    }

    @Test
    void theHintGoesOnceDataArrivesAndSaysSoWhenNoAgentReportsAnything() {
        fleet.putSpec("1234", spec);
        clock.advance(Duration.ofSeconds(90));
        fleet.tick();
        assertThat(fleet.run("1234").orElseThrow().unmatched().message())
                .endsWith("no agent reports a run without a spec either: is the agent running and pointed at this "
                        + "collector?");
        agentReports("1234", 1);
        assertThat(fleet.run("1234").orElseThrow().unmatched()).isNull();
    }

    private void agentReportsWithAliases(String runId, long seq, List<String> aliases) {
        double t = clock.seconds();
        fleet.ingestBatch(batch("node1", "agent-1", seq, List.of(gpu(t, 0, "GPU-0", 30 * GIB, 0.9)),
                List.of(new dev.trainwatch.protocol.RunAttribution(runId, List.of(4242L), List.of("GPU-0"), List.of(),
                        null, null, aliases, null, null, null, null)), List.of()));
    }

    @Test
    void aSpecRegisteredUnderTheJobIdBeforeTheAgentReportsMovesToTheRunTheAgentReports() {
        fleet.putSpec("1234", spec); // $SLURM_JOB_ID, before the job's processes start
        clock.advance(Duration.ofSeconds(5));
        // torchrun --standalone: the agent names the run by its random TORCHELASTIC_RUN_ID, and knows the job id.
        agentReportsWithAliases("3f9a1c2e", 1, List.of("1234", "node1:4242"));
        assertThat(fleet.run("1234")).as("the spec-only half-run").isEmpty();
        RunView run = fleet.run("3f9a1c2e").orElseThrow();
        assertThat(run.estimate()).isNotNull();
        assertThat(run.spec().model()).isEqualTo("dit-xl-2");
    }

    @Test
    void aSpecRegisteredUnderAnAliasAfterTheAgentReportsGoesToThatRun() {
        agentReportsWithAliases("3f9a1c2e", 1, List.of("1234", "node1:4242"));
        RunView answered = fleet.putSpec("node1:4242", spec);
        assertThat(answered.runId()).isEqualTo("3f9a1c2e");
        assertThat(fleet.run("node1:4242")).isEmpty();
        assertThat(fleet.run("3f9a1c2e").orElseThrow().estimate()).isNotNull();
        assertThat(fleet.runs()).hasSize(1);
    }

    @Test
    void anAmbiguousGpuFamilyInASpecIsSettledByWhatNvmlReportsForTheRun() {
        Fleet real = Fleet.create(dev.trainwatch.estimator.Estimator.bundled(), clock);
        double t = clock.seconds();
        real.ingestBatch(batch("node1", "agent-1", 1, List.of(gpu(t, 0, "GPU-0", 30 * GIB, 0.9)),
                List.of(attribution("run-a100", List.of("GPU-0"))), List.of()));
        RunView v = real.putSpec("run-a100", new RunSpec("dit-xl-2", "a100", null, 32, 256, null, null, null, "bf16",
                "adamw", false, false, null, 0, null, null, null));
        // The sample's NVML name is "NVIDIA A100-SXM4-80GB": its memory decides, not the first catalog entry.
        assertThat(v.estimate().gpu()).isEqualTo("a100-80gb");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> real.putSpec("unseen", new RunSpec("dit-xl-2", "a100",
                        null, 32, 256, null, null, null, "bf16", "adamw", false, false, null, 0, null, null, null)))
                .hasMessageStartingWith("GPU 'a100' is ambiguous: a100-40gb, a100-80gb, a100-pcie-80gb");
    }
}
