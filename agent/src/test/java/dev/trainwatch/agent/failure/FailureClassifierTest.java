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
 * each file naming its source and the cause a person reading it names): at least 95 % right, and the figures of
 * the decisive lines read back.
 */
class FailureClassifierTest {

    record Fixture(String name, String source, String cause, String rank, List<String> tail) {
    }

    static List<Fixture> fixtures() throws IOException, URISyntaxException {
        return fixtures("/failures");
    }

    /** Fixture files: {@code key: value} header lines ({@code source}, {@code cause}, optional {@code rank}), {@code ---}, the tail. */
    static List<Fixture> fixtures(String resource) throws IOException, URISyntaxException {
        Path dir = Path.of(FailureClassifierTest.class.getResource(resource).toURI());
        List<Fixture> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".txt")).sorted().toList()) {
                List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
                int sep = lines.indexOf("---");
                java.util.Map<String, String> header = new java.util.HashMap<>();
                for (String h : lines.subList(0, sep)) {
                    int colon = h.indexOf(": ");
                    if (colon > 0) {
                        header.put(h.substring(0, colon), h.substring(colon + 2).strip());
                    }
                }
                out.add(new Fixture(f.getFileName().toString(), header.get("source"), header.get("cause"),
                        header.get("rank"), lines.subList(sep + 1, lines.size())));
            }
        }
        return out;
    }

    @Test
    void atLeastNinetyFivePercentOfTheRealTailsAreClassifiedAsAPersonReadsThem() throws Exception {
        List<Fixture> all = fixtures();
        assertThat(all).hasSizeGreaterThanOrEqualTo(20);
        List<String> misses = new ArrayList<>();
        for (Fixture f : all) {
            assertThat(f.source()).startsWith("https://github.com/");
            RunFailure r = FailureClassifier.classify(f.tail(), null);
            String rank = r.rank() == null ? "-" : r.rank().toString();
            if (!r.cause().equals(f.cause()) || f.rank() != null && !f.rank().equals(rank)) {
                misses.add(f.name() + ": " + r.cause() + " rank " + rank + " (" + r.summary() + ")");
            }
            assertThat(r.summary()).as(f.name()).isNotBlank().doesNotContain("\n");
            assertThat(r.lines()).as(f.name()).isNotEmpty().hasSizeLessThanOrEqualTo(FailureClassifier.MAX_LINES);
        }
        double right = 1 - (double) misses.size() / all.size();
        System.out.printf("failure tails: %d of %d right (%.0f %%); misses: %s%n", all.size() - misses.size(),
                all.size(), 100 * right, misses);
        assertThat(right).as("misses: %s", misses).isGreaterThanOrEqualTo(0.95);
    }

    /**
     * Tails of the real 2-rank job of the integration tests ({@code failures/local/}: Debian's torch 1.13 under
     * Python 3.11, gloo): each is right, cause and rank.
     */
    @Test
    void theTailsOfARealTwoRankJobAreAllRight() throws Exception {
        List<Fixture> local = fixtures("/failures/local");
        assertThat(local).hasSizeGreaterThanOrEqualTo(4);
        for (Fixture f : local) {
            RunFailure r = FailureClassifier.classify(f.tail(), null);
            assertThat(r.cause()).as(f.name() + ": " + r.summary()).isEqualTo(f.cause());
            assertThat(r.rank() == null ? "-" : r.rank().toString()).as(f.name() + ": " + r.summary())
                    .isEqualTo(f.rank());
        }
    }

    @Test
    void theFiguresOfAnOomAndATimeoutAreReadBack() throws Exception {
        List<Fixture> all = fixtures();
        RunFailure oom = FailureClassifier.classify(find(all, "15-cuda_oom.txt").tail(), null);
        assertThat(oom.detail()).containsEntry("tried_to_allocate_bytes", 22L * 1024 * 1024)
                .containsEntry("gpu_index", 0)
                .containsEntry("total_capacity_bytes", Math.round(23.65 * 1024 * 1024 * 1024))
                .containsEntry("allocated_bytes", Math.round(22.90 * 1024 * 1024 * 1024));
        // "194.87 MiB is reserved by PyTorch but unallocated": PyTorch reserves that beyond its 22.90 GiB allocated.
        assertThat(oom.detail()).containsEntry("reserved_unallocated_bytes", Math.round(194.87 * 1024 * 1024))
                .containsEntry("reserved_bytes", Math.round(22.90 * 1024 * 1024 * 1024) + Math.round(194.87 * 1024 * 1024));
        assertThat(oom.summary()).isEqualTo("CUDA out of memory: tried to allocate 22 MiB on GPU 0 (23.65 GiB total, "
                + "11 MiB free, 23.09 GiB reserved by PyTorch)");
        // A line of over 500 characters keeps its figures (they come after character 500).
        RunFailure longLine = FailureClassifier.classify(find(all, "76-cuda_oom.txt").tail(), null);
        assertThat(longLine.detail()).containsEntry("allocated_bytes", Math.round(13.73 * 1024 * 1024 * 1024))
                .containsEntry("reserved_unallocated_bytes", Math.round(736.86 * 1024 * 1024))
                .containsEntry("tried_to_allocate_bytes", 546L * 1024 * 1024);
        // The allocator's figures without the words "CUDA out of memory".
        RunFailure bare = FailureClassifier.classify(find(all, "74-cuda_oom.txt").tail(), null);
        assertThat(bare.detail()).containsEntry("tried_to_allocate_bytes", 20L * 1024 * 1024)
                .containsEntry("reserved_bytes", Math.round(1.25 * 1024 * 1024 * 1024));
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
    void anotherRanksOwnExceptionWinsOverTheTimeoutsItCaused() {
        // Rank 1 raises; rank 0 waits in the all-reduce until NCCL's watchdog fires and then fails too.
        List<String> tail = List.of(
                "[rank1]: Traceback (most recent call last):",
                "[rank1]:   File \"/work/train.py\", line 80, in <module>",
                "[rank1]:     batch = next(loader)",
                "[rank1]: KeyError: 'caption'",
                "[rank0]:[E1124 10:10:00.000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
                        + "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
                        + "ran for 600010 milliseconds before timing out.",
                "[rank0]: torch.distributed.DistBackendError: [Rank 0] Watchdog caught collective operation timeout");
        RunFailure r = FailureClassifier.classify(tail, 1);
        assertThat(r.cause()).isEqualTo("exception");
        assertThat(r.rank()).isEqualTo(1);
        assertThat(r.detail()).containsEntry("type", "KeyError");
    }

    @Test
    void aBareDistBackendErrorIsNotATimeout() {
        RunFailure r = FailureClassifier.classify(List.of("[rank3]: torch.distributed.DistBackendError: NCCL error in: "
                + "ProcessGroupNCCL.cpp:3763, remote process exited or there was a network error, NCCL version 2.28.8"),
                1);
        assertThat(r.cause()).isEqualTo("exception");
        assertThat(r.rank()).isEqualTo(3);
        assertThat(r.detail()).containsEntry("type", "torch.distributed.DistBackendError");
    }

    @Test
    void aForwardedSigtermIsAStopNotAnException() throws Exception {
        // Python 3.11's wording ("got signal: 15", <frozen runpy> frames) from the real 2-rank job.
        RunFailure r = FailureClassifier.classify(find(fixtures("/failures/local"), "sigterm-forwarded-py311.txt")
                .tail(), 143);
        assertThat(r.cause()).isEqualTo("signal");
        assertThat(r.signal()).isEqualTo(15);
        assertThat(r.summary()).contains("SIGTERM").doesNotContain("exception");
    }

    @Test
    void aRankThatRaisesInTheFirstSecondsIsNamedNotTheRankTorchrunCleanedUp() {
        // Rank 1 raises before the first step (its traceback carries no rank prefix); torchrun SIGTERMs rank 0, and
        // with both in the same second its report lists the cleaned-up rank as the root cause.
        List<String> tail = List.of(
                "Traceback (most recent call last):",
                "  File \"/work/train.py\", line 41, in <module>",
                "    raise RuntimeError(\"bad config\")",
                "RuntimeError: bad config",
                "W1206 03:10:01.000 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 201 closing"
                        + " signal SIGTERM",
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                "============================================================",
                "train.py FAILED",
                "------------------------------------------------------------",
                "Failures:",
                "[1]:",
                "  time      : 2026-12-06_03:10:01",
                "  host      : node-1",
                "  rank      : 1 (local_rank: 1)",
                "  exitcode  : 1 (pid: 202)",
                "  error_file: <N/A>",
                "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                "------------------------------------------------------------",
                "Root Cause (first observed failure):",
                "[0]:",
                "  time      : 2026-12-06_03:10:01",
                "  host      : node-1",
                "  rank      : 0 (local_rank: 0)",
                "  exitcode  : -15 (pid: 201)",
                "  error_file: <N/A>",
                "  traceback : Signal 15 (SIGTERM) received by PID 201",
                "============================================================");
        RunFailure r = FailureClassifier.classify(tail, 1);
        assertThat(r.cause()).isEqualTo("exception");
        assertThat(r.rank()).isEqualTo(1);
    }

    @Test
    void torchrunsReportNamesTheRankKilledFirstNotItsCleanUp() throws Exception {
        RunFailure r = FailureClassifier.classify(find(fixtures(), "81-signal.txt").tail(), 1);
        assertThat(r.cause()).isEqualTo("signal");
        assertThat(r.signal()).isEqualTo(9);
        assertThat(r.rank()).isEqualTo(4);
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
