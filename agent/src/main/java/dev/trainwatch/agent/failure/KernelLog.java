package dev.trainwatch.agent.failure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kernel's log as this user may read it: {@code dmesg} (refused under {@code kernel.dmesg_restrict} without
 * CAP_SYSLOG), else {@code journalctl -k}. Not {@code readable}: a SIGKILL can be neither confirmed nor ruled out.
 */
public record KernelLog(boolean readable, List<String> lines) {
    private static final long TIMEOUT_SECONDS = 5;

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
