package dev.trainwatch.agent.attribution;

import static dev.trainwatch.protocol.testing.Samples.gpu;
import static dev.trainwatch.protocol.testing.Samples.uuid;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Attribution against the real /proc, of a child process started with a torchrun-like environment. */
@EnabledOnOs(OS.LINUX)
class LiveProcAttributionIT {

    @Test
    void attributesASpawnedRankAndSeesItEnd() throws Exception {
        ProcessBuilder builder = new ProcessBuilder("sleep", "60");
        builder.environment().put("TORCHELASTIC_RUN_ID", "live-run-42");
        builder.environment().put("RANK", "3");
        builder.environment().put("LOCAL_RANK", "1");
        builder.environment().put("WORLD_SIZE", "16");
        builder.environment().put("MASTER_ADDR", "10.0.0.7");
        builder.environment().put("SOME_SECRET", "not-for-us");
        Process child = builder.start();
        try {
            long pid = child.pid();
            assertThat(LinuxProcSource.system().environment(pid)).doesNotContainKey("SOME_SECRET");
            Attributor attributor = new Attributor(LinuxProcSource.system(), "node1", pid, null, 0.0, 0.0);

            RunAttribution run = attributor.update(List.of(gpu(1, 0, pid), gpu(1, 1)), 1).runs().get(0);

            assertThat(run.runId()).isEqualTo("live-run-42");
            assertThat(run.pids()).containsExactly(pid);
            assertThat(run.gpuUuids()).containsExactly(uuid(0));
            assertThat(run.masterAddr()).isEqualTo("10.0.0.7");
            assertThat(run.ranks()).singleElement().satisfies(rank -> {
                assertThat(new RankInfo(rank.pid(), rank.rank(), rank.localRank(), rank.worldSize(), rank.gpuUuids()))
                        .isEqualTo(new RankInfo(pid, 3, 1, 16, List.of(uuid(0))));
                // The real process's readings from /proc: a sleeping shell with some resident memory and no children.
                assertThat(rank.state()).isIn("S", "R");
                assertThat(rank.rssBytes()).isPositive();
                assertThat(rank.cpuSeconds()).isNotNegative();
                assertThat(rank.workers()).isZero();
            });

            child.destroy();
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
            Attributor.Update update = attributor.update(List.of(gpu(2, 0), gpu(2, 1)), 2);
            assertThat(update.runs()).singleElement().satisfies(r -> assertThat(r.ended()).isTrue());
            assertThat(update.events()).extracting(e -> e.kind()).containsExactly("run_ended");
        } finally {
            child.destroyForcibly();
        }
    }
}
