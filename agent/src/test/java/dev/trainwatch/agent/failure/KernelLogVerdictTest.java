package dev.trainwatch.agent.failure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunFailure;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A rank killed by SIGKILL is {@code host_oom} when the kernel's log records an OOM kill of it, stays a signal that
 * says so when the log records none, and says the log was not readable rather than guessing.
 */
class KernelLogVerdictTest {

    /** ColossalAI #3514: torchrun reports local_rank 3 (pid 812917) failed with exitcode -9. */
    private static List<String> torchrunTail() throws Exception {
        return FailureClassifierTest.fixtures().stream().filter(f -> f.name().equals("05-signal.txt")).findFirst()
                .orElseThrow().tail();
    }

    /** As {@code trainwatch run} judges its command's end: torchrun exits 1 when a rank failed, a killed trainer 137. */
    private static RunFailure judge(List<String> tail, int status, List<Long> pids, KernelLog kernel) {
        return FailureClassifier.confirmKill(FailureClassifier.classify(tail, status), pids, tail, () -> kernel);
    }

    @Test
    void theKernelsRecordOfTheRanksKillIsAHostOom() throws Exception {
        // The kernel's line as ai-toolkit #787's user pasted it from dmesg, for the PID torchrun's report names.
        KernelLog kernel = new KernelLog(true, List.of("[Tue Apr 14 16:05:12 2026] eth0: link up",
                "[Tue Apr 14 16:07:00 2026] Out of memory: Killed process 812917 (python) total-vm:104857600kB"));
        RunFailure r = judge(torchrunTail(), 1, List.of(), kernel);
        assertThat(r.cause()).isEqualTo("host_oom");
        assertThat(r.signal()).isEqualTo(9);
        assertThat(r.summary()).isEqualTo("the kernel's OOM killer ended process 812917 (python): the host ran out of "
                + "memory");
        assertThat(r.detail()).containsEntry("killed_pid", 812917L).containsEntry("killed_command", "python");
        assertThat(r.lines()).containsExactly("[Tue Apr 14 16:07:00 2026] Out of memory: Killed process 812917 "
                + "(python) total-vm:104857600kB");
    }

    @Test
    void theOomKillSummaryLineOfTheProcessItselfCounts() {
        KernelLog kernel = new KernelLog(true, List.of("[ 8123.4] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),"
                + "cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=python3,pid=4242,uid=1000"));
        RunFailure r = judge(List.of("step 100 loss 0.12"), 137, List.of(4242L), kernel);
        assertThat(r.cause()).isEqualTo("host_oom");
        assertThat(r.detail()).containsEntry("killed_command", "python3");
    }

    @Test
    void anOomKillOfAnotherProcessIsNotTheRunsAndTheVerdictSaysTheLogShowsNone() throws Exception {
        KernelLog kernel = new KernelLog(true, List.of("Out of memory: Killed process 1067104 (python)"));
        RunFailure r = judge(torchrunTail(), 1, List.of(), kernel);
        assertThat(r.cause()).isEqualTo("signal");
        assertThat(r.rank()).isEqualTo(3);
        assertThat(r.summary()).endsWith("; the kernel log records no OOM kill of the run's processes");
    }

    @Test
    void anUnreadableKernelLogIsSaidNotGuessed() throws Exception {
        RunFailure r = judge(torchrunTail(), 1, List.of(), new KernelLog(false, List.of()));
        assertThat(r.cause()).isEqualTo("signal");
        assertThat(r.signal()).isEqualTo(9);
        assertThat(r.summary()).endsWith("; the kernel log was not readable: cannot confirm a host OOM kill");
        assertThat(r.detail()).containsEntry("kernel_log", "not readable");
    }

    @Test
    void otherVerdictsNeverReadTheKernelLog() {
        List<String> tail = List.of("Traceback (most recent call last):", "  File \"train.py\", line 3, in <module>",
                "ValueError: bad batch");
        RunFailure exception = FailureClassifier.classify(tail, 1);
        assertThat(FailureClassifier.confirmKill(exception, List.of(1L), tail, () -> {
            throw new AssertionError("read the kernel log for an exception");
        })).isSameAs(exception);
        RunFailure term = FailureClassifier.classify(List.of("step 1"), 143);
        assertThat(FailureClassifier.confirmKill(term, List.of(1L), List.of("step 1"), () -> {
            throw new AssertionError("read the kernel log for SIGTERM");
        })).isSameAs(term);
    }
}
