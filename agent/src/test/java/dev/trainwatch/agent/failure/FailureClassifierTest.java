package dev.trainwatch.agent.failure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunFailure;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The classifier on real failure tails copied from public issue threads ({@code src/test/resources/failures/},
 * each file naming its source and the cause a person reading it names): at least 90 % right, and the figures of
 * the decisive lines read back.
 */
class FailureClassifierTest {

    record Fixture(String name, String source, String cause, List<String> tail) {
    }

    static List<Fixture> fixtures() throws IOException, URISyntaxException {
        Path dir = Path.of(FailureClassifierTest.class.getResource("/failures").toURI());
        List<Fixture> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".txt")).sorted().toList()) {
                List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
                int sep = lines.indexOf("---");
                String source = lines.get(0).substring("source: ".length());
                String cause = lines.get(1).substring("cause: ".length()).strip();
                out.add(new Fixture(f.getFileName().toString(), source, cause, lines.subList(sep + 1, lines.size())));
            }
        }
        return out;
    }

    @Test
    void atLeastNinetyPercentOfTheRealTailsAreClassifiedAsAPersonReadsThem() throws Exception {
        List<Fixture> all = fixtures();
        assertThat(all).hasSizeGreaterThanOrEqualTo(20);
        List<String> misses = new ArrayList<>();
        for (Fixture f : all) {
            assertThat(f.source()).startsWith("https://github.com/");
            RunFailure r = FailureClassifier.classify(f.tail(), null);
            if (!r.cause().equals(f.cause())) {
                misses.add(f.name() + ": " + r.cause() + " (" + r.summary() + ")");
            }
            assertThat(r.summary()).as(f.name()).isNotBlank().doesNotContain("\n");
            assertThat(r.lines()).as(f.name()).isNotEmpty().hasSizeLessThanOrEqualTo(FailureClassifier.MAX_LINES);
        }
        double right = 1 - (double) misses.size() / all.size();
        System.out.printf("failure tails: %d of %d right (%.0f %%); misses: %s%n", all.size() - misses.size(),
                all.size(), 100 * right, misses);
        assertThat(right).as("misses: %s", misses).isGreaterThanOrEqualTo(0.9);
    }

    @Test
    void theFiguresOfAnOomAndATimeoutAreReadBack() throws Exception {
        List<Fixture> all = fixtures();
        RunFailure oom = FailureClassifier.classify(find(all, "15-cuda_oom.txt").tail(), null);
        assertThat(oom.detail()).containsEntry("tried_to_allocate_bytes", 22L * 1024 * 1024)
                .containsEntry("gpu_index", 0)
                .containsEntry("total_capacity_bytes", Math.round(23.65 * 1024 * 1024 * 1024))
                .containsEntry("allocated_bytes", Math.round(22.90 * 1024 * 1024 * 1024));
        assertThat(oom.summary()).isEqualTo("CUDA out of memory: tried to allocate 22 MiB on GPU 0 (23.65 GiB total, "
                + "194.87 MiB reserved by PyTorch)".replace("194.87 MiB", "195 MiB"));
        RunFailure old = FailureClassifier.classify(find(all, "11-cuda_oom.txt").tail(), null);
        assertThat(old.detail()).containsEntry("reserved_bytes", Math.round(23.12 * 1024 * 1024 * 1024));
        RunFailure ranked = FailureClassifier.classify(find(all, "25-cuda_oom.txt").tail(), null);
        assertThat(ranked.rank()).isEqualTo(3);
        assertThat(ranked.detail()).containsEntry("gpu_index", 3);

        RunFailure nccl = FailureClassifier.classify(find(all, "02-nccl_timeout.txt").tail(), null);
        assertThat(nccl.detail()).containsEntry("op", "ALLREDUCE").containsEntry("seq", 1580L)
                .containsEntry("timeout_ms", 600_000L);
        assertThat(nccl.rank()).isEqualTo(0);

        RunFailure keyError = FailureClassifier.classify(find(all, "13-exception.txt").tail(), null);
        assertThat(keyError.detail()).containsEntry("type", "KeyError").containsEntry("message", "'height'");
    }

    @Test
    void theRootCauseWinsOverItsConsequences() {
        // Rank 1 runs out of memory; the others wait in the all-reduce until the watchdog fires; torchrun kills all.
        List<String> tail = List.of(
                "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
                        + "capacity of 79.15 GiB of which 1.2 GiB is free.",
                "[rank0]:[E1124 10:00:00.000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
                        + "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
                        + "ran for 600010 milliseconds before timing out.",
                "E1124 10:00:05.000 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) "
                        + "local_rank: 0 (pid: 12) of binary: /usr/bin/python");
        RunFailure r = FailureClassifier.classify(tail, 1);
        assertThat(r.cause()).isEqualTo("cuda_oom");
        assertThat(r.rank()).isEqualTo(1);
        assertThat(r.exitCode()).isEqualTo(1);
    }

    @Test
    void anExitStatusAloneIsASignalOrUnknown() {
        RunFailure killed = FailureClassifier.classify(List.of("step 100 loss 0.12", "step 200 loss 0.11"), 137);
        assertThat(killed.cause()).isEqualTo("signal");
        assertThat(killed.signal()).isEqualTo(9);
        assertThat(killed.summary()).contains("SIGKILL").contains("dmesg");
        RunFailure silent = FailureClassifier.classify(List.of("step 100 loss 0.12"), 1);
        assertThat(silent.cause()).isEqualTo("unknown");
        assertThat(silent.summary()).contains("code 1");
    }

    @Test
    void garbledLinesNeverTakeThePostMortemDown() {
        // Two ranks' OOM messages interleaved, and numbers too long for their types.
        RunFailure r = FailureClassifier.classify(List.of(
                "[rank99999999999999]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.02.00 GiB. GPU 0",
                "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=123456789012345678901234, "
                        + "OpType=ALLREDUCE, Timeout(ms)=600000)",
                "ERROR: failed (exitcode: -99999999999999) local_rank: 0"), 1);
        assert r != null;
        org.assertj.core.api.Assertions.assertThat(r.cause()).isIn("cuda_oom", "nccl_timeout", "signal", "unknown");
        org.assertj.core.api.Assertions.assertThat(r.summary()).isNotBlank();
    }

    private static Fixture find(List<Fixture> all, String name) {
        return all.stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow();
    }
}
