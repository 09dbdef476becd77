package dev.trainwatch.agent.attribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcParsingTest {

    @TempDir
    Path dir;

    @Test
    void statWithParenthesesAndSpacesInTheCommandName() {
        LinuxProcSource proc = new LinuxProcSource(ProcFixture.copy("torchrun-node", dir));
        ProcStat sdPam = proc.stat(900).orElseThrow();
        assertThat(sdPam.comm()).isEqualTo("(sd-pam)");
        assertThat(sdPam.ppid()).isEqualTo(1);
        assertThat(sdPam.startTimeTicks()).isEqualTo(3001);
        ProcStat tmux = proc.stat(4010).orElseThrow();
        assertThat(tmux.comm()).isEqualTo("tmux: server");
        assertThat(tmux.startTimeTicks()).isEqualTo(50190);
    }

    @Test
    void statOfARank() {
        ProcStat rank = new LinuxProcSource(ProcFixture.copy("torchrun-node", dir)).stat(4101).orElseThrow();
        assertThat(rank).isEqualTo(new ProcStat(4101, "python3", 4100, 61290, 51234, 8123, 2345678, 'R'));
        assertThat(rank.cpuSeconds()).isEqualTo((51234 + 8123) / 100.0);
    }

    @Test
    void liveStatOfThisProcess() {
        long self = ProcessHandle.current().pid();
        ProcStat stat = LinuxProcSource.system().stat(self).orElseThrow();
        assertThat(stat.pid()).isEqualTo(self);
        assertThat(stat.ppid()).isEqualTo(ProcessHandle.current().parent().orElseThrow().pid());
        assertThat(stat.rssPages()).isPositive();
    }

    @Test
    void badStatLines() {
        assertThatThrownBy(() -> ProcStat.parse("garbage")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ProcStat.parse("12 (x) S 1 2")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void missingProcessIsAbsentNotAnError() {
        LinuxProcSource proc = new LinuxProcSource(ProcFixture.copy("torchrun-node", dir));
        assertThat(proc.stat(424242)).isEmpty();
        assertThat(proc.environment(424242)).isEmpty();
        assertThat(proc.commandLine(424242)).isEmpty();
    }

    @Test
    void environKeepsOnlyAttributionVariables() {
        LinuxProcSource proc = new LinuxProcSource(ProcFixture.copy("torchrun-node", dir));
        assertThat(proc.environment(4103)).containsOnly(
                org.assertj.core.api.Assertions.entry("TORCHELASTIC_RUN_ID", "9b1f0c6e-5c4d-4a8e-9a51-0d6c2f1e7b3a"),
                org.assertj.core.api.Assertions.entry("RANK", "2"),
                org.assertj.core.api.Assertions.entry("LOCAL_RANK", "2"),
                org.assertj.core.api.Assertions.entry("WORLD_SIZE", "4"),
                org.assertj.core.api.Assertions.entry("MASTER_ADDR", "127.0.0.1"),
                org.assertj.core.api.Assertions.entry("CUDA_VISIBLE_DEVICES", "0,1,2,3"));
    }

    @Test
    void environEdgeCases() {
        byte[] raw = "RANK=1\0=oops\0NOEQUALS\0WORLD_SIZE=8\0MASTER_ADDR=a=b\0LOCAL_RANK=3".getBytes(StandardCharsets.UTF_8);
        assertThat(ProcessEnvironment.parse(raw)).containsOnlyKeys("RANK", "WORLD_SIZE", "MASTER_ADDR", "LOCAL_RANK")
                .containsEntry("MASTER_ADDR", "a=b").containsEntry("LOCAL_RANK", "3");
        assertThat(ProcessEnvironment.parse(new byte[0])).isEmpty();
    }

    @Test
    void commandLineSplitsOnNul() {
        LinuxProcSource proc = new LinuxProcSource(ProcFixture.copy("torchrun-node", dir));
        assertThat(proc.commandLine(4100)).startsWith("/usr/bin/python3", "/home/ml/.local/bin/torchrun");
        assertThat(ProcessTree.isLauncher("python3", proc.commandLine(4100))).isTrue();
        assertThat(ProcessTree.isLauncher("python3", proc.commandLine(5000))).isFalse();
        assertThat(ProcessTree.isLauncher("python3", java.util.List.of("python3", "-m", "torch.distributed.run"))).isTrue();
    }

    @Test
    void runIdFromEnvironment() {
        assertThat(RunIds.fromEnvironment(java.util.Map.of("TORCHELASTIC_RUN_ID", "abc", "SLURM_JOB_ID", "7"))).isEqualTo("abc");
        assertThat(RunIds.fromEnvironment(java.util.Map.of("TORCHELASTIC_RUN_ID", "none", "SLURM_JOB_ID", "7"))).isEqualTo("7");
        assertThat(RunIds.fromEnvironment(java.util.Map.of())).isNull();
    }

    /** The scan's PID array holds exactly the process directories the list does: not "self", "net" or a file. */
    @Test
    void thePidArrayIsThePidList() throws Exception {
        Path root = dir.resolve("proc-names");
        for (String name : new String[] {"1", "2", "42", "4194304", "self", "net", "1a", "thread-self"}) {
            java.nio.file.Files.createDirectories(root.resolve(name));
        }
        java.nio.file.Files.writeString(root.resolve("uptime"), "1.0 1.0\n");
        LinuxProcSource proc = new LinuxProcSource(root);
        assertThat(proc.pidArray()).containsExactlyInAnyOrder(1L, 2L, 42L, 4_194_304L);
        assertThat(proc.pids()).containsExactlyInAnyOrder(1L, 2L, 42L, 4_194_304L);
        assertThat(new LinuxProcSource(dir.resolve("no-such-proc")).pidArray()).isEmpty();
    }
}
