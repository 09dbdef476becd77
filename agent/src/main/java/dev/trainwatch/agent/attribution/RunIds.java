package dev.trainwatch.agent.attribution;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Pattern;

/** How a run is named. Pure. */
public final class RunIds {

    /** The run ids the collector's API takes (docs/API.md): they become a URL path segment and a label. */
    private static final Pattern TAKEN = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    private static final Pattern NOT_TAKEN = Pattern.compile("[^A-Za-z0-9_.:-]+");
    /** Characters of a mapped id kept from the original, leaving room for "-" and the hash. */
    private static final int KEPT = 119;

    private RunIds() {
    }

    /**
     * {@code id} when the collector takes it, else a run id it takes made from it, the same on every node and at every
     * poll: the characters it may not carry as {@code _}, cut to 119 characters, then {@code -} and 8 hex digits of the
     * original's SHA-256 (so {@code a/b} and {@code a b} stay two runs). {@code .} and {@code ..} become
     * {@code run-} and the hash. Null for null.
     */
    public static String safe(String id) {
        if (id == null || TAKEN.matcher(id).matches() && !id.equals(".") && !id.equals("..")) {
            return id;
        }
        String cleaned = NOT_TAKEN.matcher(id).replaceAll("_");
        if (cleaned.length() > KEPT) {
            cleaned = cleaned.substring(0, KEPT);
        }
        if (cleaned.isEmpty() || cleaned.chars().allMatch(c -> c == '.')) {
            cleaned = "run";
        }
        return cleaned + "-" + shortHash(id);
    }

    private static String shortHash(String id) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * The run id a process's environment names: {@code TORCHELASTIC_RUN_ID}, else {@code SLURM_JOB_ID}, else null;
     * mapped by {@link #safe} when the collector would refuse it (one job must never blind its node).
     * torchrun's default rendezvous id "none" names nothing (every job without {@code --rdzv-id} carries it).
     */
    public static String fromEnvironment(Map<String, String> env) {
        String elastic = ProcessEnvironment.stringValue(env, ProcessEnvironment.TORCHELASTIC_RUN_ID);
        if (elastic != null && !elastic.equalsIgnoreCase("none")) {
            return safe(elastic);
        }
        String slurm = ProcessEnvironment.stringValue(env, ProcessEnvironment.SLURM_JOB_ID);
        return safe(slurm);
    }

    /**
     * A run id derived from the root process when nothing names the run: host, pid and start time, so a reused pid
     * (or the same pid on another node) is another run.
     */
    public static String derived(String host, ProcStat root) {
        return safe(host + "-" + root.pid() + "-" + root.startTimeTicks());
    }
}
