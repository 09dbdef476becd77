package dev.trainwatch.agent.attribution;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Pattern;

/** How a run is named. Pure. */
public final class RunIds {

    private static final Pattern TAKEN = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    private static final Pattern NOT_TAKEN = Pattern.compile("[^A-Za-z0-9_.:-]+");
    private static final int KEPT = 119;

    private RunIds() {
    }

    /**
     * {@code id} when the collector takes it, else the same everywhere: bad characters as {@code _}, cut to 119, then
     * {@code -} and 8 hex of its SHA-256 (so {@code a/b} and {@code a b} stay two); {@code .}, {@code ..} become run-HASH.
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
     * {@code TORCHELASTIC_RUN_ID}, else {@code SLURM_JOB_ID}, mapped by {@link #safe} (one job must never blind its node);
     * torchrun's default rendezvous id "none" names nothing.
     */
    public static String fromEnvironment(Map<String, String> env) {
        String elastic = ProcessEnvironment.stringValue(env, ProcessEnvironment.TORCHELASTIC_RUN_ID);
        if (elastic != null && !elastic.equalsIgnoreCase("none")) {
            return safe(elastic);
        }
        String slurm = ProcessEnvironment.stringValue(env, ProcessEnvironment.SLURM_JOB_ID);
        return safe(slurm);
    }

    /** Host, pid and start time: a reused pid, or the same pid on another node, is another run. */
    public static String derived(String host, ProcStat root) {
        return safe(host + "-" + root.pid() + "-" + root.startTimeTicks());
    }
}
