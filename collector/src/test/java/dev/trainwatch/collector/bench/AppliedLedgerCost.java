package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.state.AppliedLedger;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What {@code applied.log} costs the fleet: one append per applied batch ({@code seq}) and per applied step report
 * (run, source, rank), made under the fleet's lock before the request is answered. Appends {@code N} batch seqs and
 * {@code N} step entries (agents and sources cycling through 1,024 of each, as a 1,024-GPU fleet of 128 nodes would
 * make them) to a ledger in a temporary data directory, and the same to an in-memory one, and prints the wall and
 * CPU time per append of each (the difference is the file). Prints, never asserts:
 *
 * <pre>
 * ./mvnw -B -q -pl collector -am test-compile
 * ./mvnw -B -q -pl collector exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-cp %classpath dev.trainwatch.collector.bench.AppliedLedgerCost 200000"
 * </pre>
 */
public final class AppliedLedgerCost {
    private AppliedLedgerCost() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        Path dir = Files.createTempDirectory("applied-ledger-cost");
        try {
            for (int round = 0; round < 3; round++) {
                double file;
                double fileCpu;
                try (AppliedLedger ledger = AppliedLedger.open(dir)) {
                    long[] t = run(ledger, n);
                    file = t[0] / (2.0 * n);
                    fileCpu = t[1] / (2.0 * n);
                }
                long[] m = run(AppliedLedger.inMemory(), n);
                System.out.printf(Locale.ROOT, "round %d: %,d appends: applied.log %.2f µs wall, %.2f µs CPU per "
                                + "append; in memory %.2f µs wall, %.2f µs CPU; file size %,d bytes%n", round + 1,
                        2L * n, file / 1e3, fileCpu / 1e3, m[0] / (2.0 * n) / 1e3, m[1] / (2.0 * n) / 1e3,
                        Files.size(dir.resolve(AppliedLedger.FILE_NAME)));
            }
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Wall and CPU nanoseconds of {@code n} batch appends and {@code n} step appends. */
    private static long[] run(AppliedLedger ledger, int n) {
        var threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            int node = i % 1024;
            ledger.recordApplied("node-" + node + "-3f9a1c2b", i);
            ledger.appliedStep("run-" + (node / 8), "3f9a1c2b7d4e." + node, node % 8, i);
        }
        return new long[] {System.nanoTime() - t0, threads.getCurrentThreadCpuTime() - cpu0};
    }
}
