package dev.trainwatch.agent.failure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunFailure;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The crash tails of today's DiT trainers (real lines from public issue threads, sources in
 * {@code src/test/resources/logs/trainers/SOURCES.md}), read as the agent reads a log's end ({@link OutputTail})
 * and classified: the cause and the figures the message prints, every wording of them.
 */
@Timeout(30)
class TrainerCrashTailsTest {

    private static final long MIB = 1024L * 1024;
    private static final long GIB = MIB * 1024;

    private static RunFailure classify(String name) throws URISyntaxException {
        Path file = Path.of(TrainerCrashTailsTest.class.getResource("/logs/trainers/" + name).toURI());
        return FailureClassifier.classify(OutputTail.read(file, OutputTail.MAX_LINES, OutputTail.MAX_BYTES), null);
    }

    private static long mib(double v) {
        return Math.round(v * MIB);
    }

    private static long gib(double v) {
        return Math.round(v * GIB);
    }

    @Test
    void anOomWithoutItsExceptionPrefixNamesTheOtherProcessesOnTheCard() throws Exception {
        RunFailure f = classify("simpletuner_issue786_oom.log");
        assertThat(f.cause()).isEqualTo("cuda_oom");
        assertThat(f.detail()).containsEntry("tried_to_allocate_bytes", mib(54))
                .containsEntry("total_capacity_bytes", gib(23.63)).containsEntry("free_bytes", mib(34.56))
                .containsEntry("process_in_use_bytes", gib(21.22)).containsEntry("allocated_bytes", gib(20.73))
                .containsEntry("reserved_unallocated_bytes", mib(35.86)).containsEntry("other_processes", 2)
                .containsEntry("other_process_pids", "1108671, 1114104")
                .containsEntry("other_processes_bytes", mib(558) + gib(1.03));
        assertThat(f.summary()).contains("35 MiB free").contains("other processes hold 1.57 GiB")
                .contains("1108671, 1114104");
    }

    @Test
    void theOldWordingWrappedOverThreeLinesKeepsAllItsFigures() throws Exception {
        RunFailure f = classify("kohya_ss_issue1202_oom_wrapped.log");
        assertThat(f.cause()).isEqualTo("cuda_oom");
        assertThat(f.detail()).containsEntry("tried_to_allocate_bytes", mib(20)).containsEntry("gpu_index", 0)
                .containsEntry("total_capacity_bytes", gib(6)).containsEntry("allocated_bytes", gib(5.24))
                .containsEntry("free_bytes", 0L).containsEntry("reserved_bytes", gib(5.29));
    }

    @Test
    void theMisspeltCapacityOfTorch21() throws Exception {
        RunFailure f = classify("kohya_ss_issue2724_oom_capacty.log");
        assertThat(f.cause()).isEqualTo("cuda_oom");
        assertThat(f.detail()).containsEntry("total_capacity_bytes", gib(44.53)).containsEntry("free_bytes", mib(15.25))
                .containsEntry("process_in_use_bytes", gib(44.51)).containsEntry("allocated_bytes", gib(42.17))
                .doesNotContainKey("other_processes");
    }

    @Test
    void oneOomOnRankZeroSeenFromTwoRanks() throws Exception {
        RunFailure f = classify("diffusion-pipe_issue153_rank0_oom.log");
        assertThat(f.cause()).isEqualTo("cuda_oom");
        assertThat(f.rank()).isZero();
        assertThat(f.detail()).containsEntry("tried_to_allocate_bytes", gib(1.68))
                .containsEntry("free_bytes", mib(259.19)).containsEntry("other_process_pids", "2828469, 2856448")
                .containsEntry("other_processes_bytes", mib(516) + gib(78.44));
    }

    @Test
    void theKernelsOomKillFromDmesgNamesTheProcess() throws Exception {
        RunFailure f = classify("ai-toolkit_issue787_dmesg_oom_kill.log");
        assertThat(f.cause()).isEqualTo("host_oom");
        assertThat(f.detail()).containsEntry("killed_pid", 1067104L).containsEntry("killed_command", "python")
                .containsEntry("resource", "ram");
        assertThat(f.summary()).contains("1067104 (python)");
    }

    @Test
    void aLossThatBecameNanIsTheCauseOfTheTracebackAfterIt() throws Exception {
        RunFailure f = classify("ai-toolkit_issue153_loss_is_nan.log");
        assertThat(f.cause()).isEqualTo("exception");
        assertThat(f.detail()).containsEntry("nan_loss", true);
        assertThat(f.summary()).startsWith("the loss became NaN").contains("loss is nan");
        assertThat(f.lines().get(0)).isEqualTo("loss is nan");
    }

    @Test
    void aNanLossTheTrainerSkippedIsNoVerdictWithoutAnExceptionAfterIt() {
        // A loop that prints the line and trains on: its bar goes on after it.
        RunFailure f = FailureClassifier.classify(List.of("loss is nan",
                "lokr-test-2:  10%|#         | 300/3000 [10:02<1:30:00,  2.16s/it, lr: 2.0e-04 loss: 5.226e-01]"), null);
        assertThat(f.cause()).isEqualTo("unknown");
    }
}
