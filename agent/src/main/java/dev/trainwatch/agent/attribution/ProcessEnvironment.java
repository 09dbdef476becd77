package dev.trainwatch.agent.attribution;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Parses {@code /proc/PID/environ}, keeping only what attribution needs: an environment may hold secrets. */
public final class ProcessEnvironment {

    public static final String TORCHELASTIC_RUN_ID = "TORCHELASTIC_RUN_ID";
    public static final String SLURM_JOB_ID = "SLURM_JOB_ID";
    public static final String RANK = "RANK";
    public static final String LOCAL_RANK = "LOCAL_RANK";
    public static final String WORLD_SIZE = "WORLD_SIZE";
    public static final String MASTER_ADDR = "MASTER_ADDR";
    public static final String CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES";

    public static final Set<String> KEPT = Set.of(TORCHELASTIC_RUN_ID, SLURM_JOB_ID, RANK, LOCAL_RANK, WORLD_SIZE,
            MASTER_ADDR, CUDA_VISIBLE_DEVICES,
            // Kubernetes jobs (dev.trainwatch.agent.k8s.KubernetesJob)
            "PET_MASTER_ADDR", "JOBSET_NAME",
            // where SimpleTuner's train.py finds its config (a spec read from the command line)
            "CONFIG_PATH", "ENV");

    private ProcessEnvironment() {
    }

    public static Map<String, String> parse(byte[] environ) {
        Map<String, String> kept = new LinkedHashMap<>();
        for (String entry : nulSeparated(environ)) {
            int eq = entry.indexOf('=');
            if (eq > 0 && KEPT.contains(entry.substring(0, eq))) {
                kept.put(entry.substring(0, eq), entry.substring(eq + 1));
            }
        }
        return Collections.unmodifiableMap(kept);
    }

    /** The non-empty strings of a NUL-separated {@code /proc} file ({@code environ}, {@code cmdline}). */
    static List<String> nulSeparated(byte[] raw) {
        return Arrays.stream(new String(raw, StandardCharsets.UTF_8).split("\0")).filter(s -> !s.isEmpty()).toList();
    }

    public static Integer intValue(Map<String, String> env, String key) {
        String value = env.get(key);
        if (value == null) {
            return null;
        }
        try {
            return Integer.valueOf(value.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    public static String stringValue(Map<String, String> env, String key) {
        String value = env.get(key);
        return value == null || value.isBlank() ? null : value.strip();
    }
}
