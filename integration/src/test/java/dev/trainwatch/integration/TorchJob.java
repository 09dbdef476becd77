package dev.trainwatch.integration;

import static org.junit.jupiter.api.Assertions.fail;

import dev.trainwatch.agent.nvml.FakeNvml;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A real 2-rank PyTorch DDP job for the integration tests: Debian's {@code python3-torch} (CPU, gloo) runs the
 * DiT-shaped script {@code torch/dit_train.py} under torchrun, with one DataLoader worker per rank, and the fake
 * NVML library reports each rank's real PID on "its" GPU. Every job carries a tag in its environment
 * ({@value #TAG_ENV}) so the fake finds this job's ranks and no other session's.
 */
final class TorchJob {
    /** Debian's interpreter, which has python3-torch (the {@code python3} on PATH may be another one). */
    static final Path PYTHON = Path.of("/usr/bin/python3");
    static final String TAG_ENV = "TRAINWATCH_IT_JOB";
    static final String GPU0 = "GPU-70000000-0000-0000-0000-000000000000";
    static final String GPU1 = "GPU-70000000-0000-0000-0000-000000000001";
    private static final long GIB = 1L << 30;

    final String tag = UUID.randomUUID().toString();
    final Path dir;
    final Path results;
    final Path script;
    final Path scenarioFile;

    TorchJob(Path dir) {
        this.dir = dir;
        this.results = dir.resolve("results");
        this.script = dir.resolve("dit_train.py");
        this.scenarioFile = dir.resolve("gpus.scenario");
        try (InputStream in = TorchJob.class.getResourceAsStream("/torch/dit_train.py")) {
            if (in == null) {
                throw new IllegalStateException("torch/dit_train.py is not on the test classpath");
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        writeScenario(97, 330_000, 97, 330_000);
    }

    /** Fails the test with what to install when Debian's python3-torch is missing. */
    static void requireTorch() {
        if (!Files.isExecutable(PYTHON)) {
            fail(PYTHON + " is missing: run `bash .ci/install-deps` (Debian package python3-torch)");
        }
        ExternalCommand.Result r = ExternalCommand.run(Duration.ofMinutes(1), Path.of("."),
                List.of(PYTHON.toString(), "-c", "import torch, torch.distributed; print(torch.__version__)"));
        if (r.exitCode() != 0) {
            fail("Debian's python3-torch is not installed: run `bash .ci/install-deps` (" + r.output().strip() + ")");
        }
    }

    /**
     * The torchrun command: 2 ranks on this node, the script's scenario and arguments. Debian's torch 1.13 under
     * Python 3.11 cannot parse torchrun's own default for {@code --redirects}/{@code --tee}, so they are given.
     */
    List<String> torchrun(String scenario, String... scriptArgs) {
        return torchrun(false, scenario, scriptArgs);
    }

    /**
     * The torchrun command; with {@code teeStderr} the ranks' stderr is teed instead of their stdout
     * ({@code --redirects 2 --tee 2}), each line prefixed {@code [defaultN]:} by torchrun, so a traceback says its rank.
     */
    List<String> torchrun(boolean teeStderr, String scenario, String... scriptArgs) {
        List<String> cmd = new ArrayList<>();
        Path torchrun = Path.of("/usr/bin/torchrun");
        if (Files.isExecutable(torchrun)) {
            cmd.add(torchrun.toString());
        } else {
            cmd.addAll(List.of(PYTHON.toString(), "-m", "torch.distributed.run"));
        }
        String std = teeStderr ? "2" : "1";
        // As --standalone does, but on a free port: --standalone's fixed localhost:29400 is taken by any other job
        // (another scenario running beside this one, another session on the machine).
        cmd.addAll(List.of("--nnodes", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", "localhost:" + PeerProcess.freePort(),
                "--rdzv_id", tag, "--nproc_per_node", "2", "--redirects", std, "--tee", std,
                script.toString(), "--results-dir", results.toString(), "--scenario", scenario));
        cmd.addAll(List.of(scriptArgs));
        return cmd;
    }

    /** The environment every process of the job (and a trainwatch that starts it) gets. */
    Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put(TAG_ENV, tag);
        env.put(FakeNvml.SCENARIO_ENV, scenarioFile.toString());
        env.put(FakeNvml.CLOCK_ENV, "wall");
        env.put("FAKE_NVML_WATCH", "1");
        env.put("OMP_NUM_THREADS", "1");
        env.put("PYTHONUNBUFFERED", "1");
        return env;
    }

    /**
     * Two A100s, rank 0's process on GPU 0 and rank 1's on GPU 1 (found by their environment as soon as they exist),
     * at the given utilisation and power. Written to a temporary file and renamed, so the fake never reads half.
     */
    void writeScenario(int util0, int powerMw0, int util1, int powerMw1) {
        writeScenario(util0, powerMw0, util1, powerMw1, 0);
    }

    /** As above, the GPUs idle {@code idleSharePercent} of each second (waiting for input). */
    void writeScenario(int util0, int powerMw0, int util1, int powerMw1, int idleSharePercent) {
        FakeNvml.Scenario s = FakeNvml.scenario();
        int[] util = {util0, util1};
        int[] power = {powerMw0, powerMw1};
        String[] uuid = {GPU0, GPU1};
        for (int gpu = 0; gpu < 2; gpu++) {
            s.at(0, gpu, "uuid", uuid[gpu])
                    .at(0, gpu, "name", "NVIDIA A100-SXM4-80GB")
                    .at(0, gpu, "pci", String.format("00000000:%02X:00.0", 7 + gpu))
                    .at(0, gpu, "memory_total", 80 * GIB)
                    .at(0, gpu, "memory_used", 30 * GIB)
                    .at(0, gpu, "util_gpu", util[gpu])
                    .at(0, gpu, "util_mem", util[gpu] / 3)
                    .at(0, gpu, "sm_clock_mhz", 1410)
                    .at(0, gpu, "max_sm_clock_mhz", 1410)
                    .at(0, gpu, "mem_clock_mhz", 1593)
                    .at(0, gpu, "max_mem_clock_mhz", 1593)
                    .at(0, gpu, "clock_reasons", 0)
                    .at(0, gpu, "power_mw", power[gpu])
                    .at(0, gpu, "power_limit_mw", 400_000)
                    .at(0, gpu, "temperature_c", 60)
                    .at(0, gpu, "pstate", 0)
                    .at(0, gpu, "idle_share", idleSharePercent)
                    .at(0, gpu, "processes", "RANK=" + gpu + "," + TAG_ENV + "=" + tag + ":" + 29 * GIB);
        }
        Path tmp = dir.resolve("gpus.scenario.tmp");
        s.write(tmp);
        try {
            Files.move(tmp, scenarioFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The fault marker a rank wrote ({@code fault-RANK}), once it exists. */
    Optional<String> fault(int rank) {
        Path file = results.resolve("fault-" + rank);
        try {
            return Files.isRegularFile(file) ? Optional.of(Files.readString(file)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The ranks' PIDs below a launcher: the descendants with RANK in their environment whose parent has none. */
    static Map<Integer, Long> rankPids(long launcherPid) {
        Map<Integer, Long> ranks = new HashMap<>();
        ProcessHandle.of(launcherPid).ifPresent(launcher -> launcher.descendants().forEach(p -> {
            Map<String, String> env = environ(p.pid());
            String rank = env.get("RANK");
            long parent = p.parent().map(ProcessHandle::pid).orElse(0L);
            if (rank != null && environ(parent).get("RANK") == null) {
                ranks.put(Integer.parseInt(rank), p.pid());
            }
        }));
        return ranks;
    }

    /** A process's environment from {@code /proc}, empty when it is gone. */
    static Map<String, String> environ(long pid) {
        Map<String, String> env = new HashMap<>();
        try {
            String raw = Files.readString(Path.of("/proc", Long.toString(pid), "environ"), StandardCharsets.ISO_8859_1);
            for (String entry : raw.split("\0")) {
                int eq = entry.indexOf('=');
                if (eq > 0) {
                    env.put(entry.substring(0, eq), entry.substring(eq + 1));
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // Gone.
        }
        return env;
    }

    /** Kills a process and everything below it (a hung rank keeps sleeping otherwise). */
    static void killTree(ProcessHandle root) {
        List<ProcessHandle> all = new ArrayList<>(root.descendants().toList());
        all.add(root);
        for (ProcessHandle p : all) {
            p.destroyForcibly();
        }
    }
}
