package dev.trainwatch.agent.attribution;

import dev.trainwatch.protocol.HostMemory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The process table, as attribution needs it. The production implementation reads {@code /proc}
 * ({@link LinuxProcSource}); a process that vanished between two reads is simply absent, never an error.
 */
public interface ProcSource {

    /** PIDs of every visible process, in no particular order. */
    List<Long> pids();

    /**
     * The same PIDs as a {@code long[]}: 8 bytes a process where the list's boxes take about 20. The attributor's
     * scan of the process table holds them through the scan, which a young collection often interrupts.
     */
    default long[] pidArray() {
        List<Long> pids = pids();
        long[] out = new long[pids.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = pids.get(i);
        }
        return out;
    }

    /** The process's stat, or empty when it does not exist (any more) or cannot be read. */
    Optional<ProcStat> stat(long pid);

    /** The attribution variables of the process's environment; empty when unreadable (another user's process). */
    Map<String, String> environment(long pid);

    /** The process's argument vector; empty when unreadable or a kernel thread. */
    List<String> commandLine(long pid);

    /** The process's working directory ({@code /proc/PID/cwd}); empty when unreadable or unknown. */
    default Optional<Path> cwd(long pid) {
        return Optional.empty();
    }

    /**
     * Bytes per page of the {@code rss} field of {@code /proc/PID/stat}: the kernel's page size, 4 KiB on x86-64,
     * 64 KiB on Grace (GH200, GB200) and other arm64 kernels built with 64 KiB pages. 4096 unless the source knows.
     */
    default long pageBytes() {
        return 4096;
    }

    /** The process's {@code /proc/PID/cgroup} (its pod on Kubernetes); "" when unreadable or unknown. */
    default String cgroup(long pid) {
        return "";
    }

    /**
     * Where the process's file descriptor points ({@code /proc/PID/fd/N}): a file's path, {@code pipe:[…]},
     * {@code /dev/pts/…}; empty when unreadable or gone.
     */
    default Optional<String> descriptorTarget(long pid, int fd) {
        return Optional.empty();
    }

    /** The node's RAM and /dev/shm; empty when this source cannot tell (a test's process table). */
    default Optional<HostMemory> hostMemory(double ts) {
        return Optional.empty();
    }
}
