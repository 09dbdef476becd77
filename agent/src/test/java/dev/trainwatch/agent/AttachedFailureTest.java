package dev.trainwatch.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunFailure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An attached agent explains a run that vanished only when the end of its log says why. */
class AttachedFailureTest {

    @TempDir
    Path dir;

    private Path log(List<String> lines) throws IOException {
        Path f = dir.resolve("train_log.log");
        Files.write(f, lines);
        return f;
    }

    private static List<String> training(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            out.add("2024-11-20 14:08:52,933 - Sana - INFO - Epoch: 1 | Global Step: " + i * 20 + " | Local Step: "
                    + i * 20 + " // 23437, time: all:1.818, model:1.510, data:0.014, lr:1.000e-04, loss:0.5588");
        }
        return out;
    }

    @Test
    void aTimeoutAtTheEndOfTheLogIsTheFailure() throws IOException {
        List<String> lines = training(500);
        lines.add("[rank3]:[E1124 10:00:00.000 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
                + "timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
                + "600004 milliseconds before timing out.");
        RunFailure f = Agent.attachedFailure(log(lines)).orElseThrow();
        assertThat(f.cause()).isEqualTo("nccl_timeout");
        assertThat(f.rank()).isEqualTo(3);
        assertThat(f.detail()).containsEntry("op", "ALLREDUCE");
    }

    @Test
    void aLogThatEndsInTrainingOrAnOldHandledErrorIsNoFailure() throws IOException {
        assertThat(Agent.attachedFailure(log(training(300)))).isEmpty();
        List<String> handled = new ArrayList<>();
        handled.add("Traceback (most recent call last):");
        handled.add("  File \"train_scripts/train.py\", line 300, in log_validation");
        handled.add("ValueError: a validation prompt was empty; skipped");
        handled.addAll(training(Agent.ATTACHED_TAIL_LINES + 5));
        assertThat(Agent.attachedFailure(log(handled))).isEmpty();
        assertThat(Agent.attachedFailure(dir.resolve("missing.log"))).isEmpty();
    }
}
