package dev.trainwatch.agent.attribution;

import dev.trainwatch.protocol.HostMemory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The process table; a process that vanished between two reads is absent, never an error. */
public interface ProcSource {

    List<Long> pids();

    /** 8 bytes a process where the list's boxes take about 20 (held through a scan a young GC interrupts). */
    default long[] pidArray() {
        return pids().stream().mapToLong(Long::longValue).toArray();
    }

    Optional<ProcStat> stat(long pid);

    Map<String, String> environment(long pid);

    List<String> commandLine(long pid);

    default Optional<Path> cwd(long pid) {
        return Optional.empty();
    }

    /** The rss page size: 4 KiB on x86-64, 64 KiB on Grace (GH200, GB200) and other arm64 64K-page kernels. */
    default long pageBytes() {
        return 4096;
    }

    default String cgroup(long pid) {
        return "";
    }

    /** {@code /proc/PID/fd/N}: a path, {@code pipe:[…]}, {@code /dev/pts/…}; empty when unreadable or gone. */
    default Optional<String> descriptorTarget(long pid, int fd) {
        return Optional.empty();
    }

    default Optional<HostMemory> hostMemory(double ts) {
        return Optional.empty();
    }
}
