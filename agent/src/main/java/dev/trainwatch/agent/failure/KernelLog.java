package dev.trainwatch.agent.failure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kernel's log as this user may read it, for the record of an OOM kill: {@code dmesg} (refused under
 * {@code kernel.dmesg_restrict} without CAP_SYSLOG), else {@code journalctl -k} (the adm or systemd-journal group).
 *
 * @param readable whether either could be read; when not, a SIGKILL cannot be confirmed or ruled out as an OOM kill
 * @param lines    its lines, oldest first (empty when not readable)
 */
public record KernelLog(boolean readable, List<String> lines) {

    private static final long TIMEOUT_SECONDS = 5;

    /** Reads it now (at most {@value #TIMEOUT_SECONDS} s per command). */
    public static KernelLog read() {
        List<String> dmesg = run(List.of("dmesg"));
        if (dmesg != null && !dmesg.isEmpty()) {
            return new KernelLog(true, dmesg);
        }
        List<String> journal = run(List.of("journalctl", "-k", "-q", "--no-pager", "-n", "5000"));
        if (journal != null) {
            journal.removeIf(l -> l.startsWith("Hint:") || l.startsWith("-- No entries --")
                    || l.startsWith("No journal files"));
            if (!journal.isEmpty()) {
                return new KernelLog(true, journal);
            }
        }
        return new KernelLog(false, List.of());
    }

    /** The command's output lines when it exits 0 in time, else null. */
    private static List<String> run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readNBytes(4 << 20);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? new ArrayList<>(new String(out, StandardCharsets.UTF_8).lines().toList()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
