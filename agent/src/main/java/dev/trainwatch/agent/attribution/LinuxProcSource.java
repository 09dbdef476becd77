package dev.trainwatch.agent.attribution;

import dev.trainwatch.protocol.HostMemory;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Reads {@code /proc}, or a directory laid out like it (test fixtures); interpretation is elsewhere. Thread-safe. */
public final class LinuxProcSource implements ProcSource {

    private static final int STAT_BUFFER = 1024;

    private final Path root;
    private final Path shm;

    public LinuxProcSource(Path root) {
        this(root, null);
    }

    public LinuxProcSource(Path root, Path shm) {
        this.root = root;
        this.shm = shm;
    }

    public static LinuxProcSource system() {
        return new LinuxProcSource(Path.of("/proc"), Path.of("/dev/shm"));
    }

    /** Empty when {@code meminfo} cannot be read. */
    @Override
    public Optional<HostMemory> hostMemory(double ts) {
        Long total = null;
        Long available = null;
        Long swapTotal = null;
        Long swapFree = null;
        try {
            String meminfo;
            try (FileInputStream in = new FileInputStream(root.resolve("meminfo").toFile())) {
                meminfo = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            }
            total = meminfoKib(meminfo, MEM_TOTAL);
            available = meminfoKib(meminfo, MEM_AVAILABLE);
            swapTotal = meminfoKib(meminfo, SWAP_TOTAL);
            swapFree = meminfoKib(meminfo, SWAP_FREE);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        Long shmTotal = null;
        Long shmUsed = null;
        if (shm != null) {
            try {
                FileStore store = shmStore();
                shmTotal = store.getTotalSpace();
                shmUsed = store.getTotalSpace() - store.getUnallocatedSpace();
            } catch (IOException | RuntimeException e) {
                shmStore = null;
            }
        }
        Long swapUsed = swapTotal != null && swapFree != null ? swapTotal - swapFree : null;
        return Optional.of(new HostMemory(ts, total, available, swapUsed, shmTotal, shmUsed));
    }

    /** Found once (it reads the mount table; sizes are a statvfs per call); again only after a failure. */
    private FileStore shmStore() throws IOException {
        FileStore store = shmStore;
        if (store == null) {
            store = Files.getFileStore(shm);
            shmStore = store;
        }
        return store;
    }

    private volatile FileStore shmStore;

    private static final Pattern MEM_TOTAL = meminfoLine("MemTotal:");
    private static final Pattern MEM_AVAILABLE = meminfoLine("MemAvailable:");
    private static final Pattern SWAP_TOTAL = meminfoLine("SwapTotal:");
    private static final Pattern SWAP_FREE = meminfoLine("SwapFree:");

    private static Pattern meminfoLine(String key) {
        return Pattern.compile("(?md)^" + Pattern.quote(key) + " *(\\d*)");
    }

    private static Long meminfoKib(String meminfo, Pattern line) {
        Matcher m = line.matcher(meminfo);
        if (!m.find()) {
            return null;
        }
        if (m.group(1).isEmpty()) {
            throw new IllegalArgumentException("no number in " + m.group());
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    @Override
    public List<Long> pids() {
        return Arrays.stream(pidArray()).boxed().collect(Collectors.toCollection(ArrayList::new));
    }

    @Override
    public long[] pidArray() {
        String[] names = root.toFile().list();
        if (names == null) {
            return new long[0];
        }
        long[] pids = new long[names.length];
        int n = 0;
        for (String name : names) {
            if (isNumber(name)) {
                pids[n++] = Long.parseLong(name);
            }
        }
        return n == pids.length ? pids : Arrays.copyOf(pids, n);
    }

    private static boolean isNumber(String name) {
        return !name.isEmpty() && name.length() <= 18 && name.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    @Override
    public Optional<ProcStat> stat(long pid) {
        // a plain stream: Files.readString also asks for the size and allocates more; /proc reports size 0 anyway
        byte[] buffer = new byte[STAT_BUFFER];
        try (FileInputStream in = new FileInputStream(root.resolve(Long.toString(pid)).resolve("stat").toFile())) {
            int length = in.readNBytes(buffer, 0, buffer.length);
            return Optional.of(ProcStat.parse(buffer, length));
        } catch (IOException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    @Override
    public Map<String, String> environment(long pid) {
        try {
            return ProcessEnvironment.parse(Files.readAllBytes(root.resolve(Long.toString(pid)).resolve("environ")));
        } catch (IOException e) {
            return Map.of();
        }
    }

    @Override
    public Optional<String> descriptorTarget(long pid, int fd) {
        try {
            return Optional.of(Files.readSymbolicLink(root.resolve(Long.toString(pid)).resolve("fd")
                    .resolve(Integer.toString(fd))).toString());
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
    }

    @Override
    public Optional<Path> cwd(long pid) {
        try {
            return Optional.of(Files.readSymbolicLink(root.resolve(Long.toString(pid)).resolve("cwd")));
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    @Override
    public List<String> commandLine(long pid) {
        try {
            return ProcessEnvironment.nulSeparated(Files.readAllBytes(root.resolve(Long.toString(pid)).resolve("cmdline")));
        } catch (IOException e) {
            return List.of();
        }
    }

    @Override
    public String cgroup(long pid) {
        try {
            byte[] raw = Files.readAllBytes(root.resolve(Long.toString(pid)).resolve("cgroup"));
            return raw.length > 65_536 ? "" : new String(raw, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private long pageBytes;

    /**
     * {@code AT_PAGESZ} from {@code self/auxv} (what {@code sysconf(_SC_PAGESIZE)} returns; 64-bit LE pairs on x86-64 and
     * arm64); 4096 when missing or not a power of two from 4 KiB to 1 MiB.
     */
    @Override
    public long pageBytes() {
        if (pageBytes == 0) {
            pageBytes = readPageBytes(root.resolve("self").resolve("auxv"));
        }
        return pageBytes;
    }

    static long readPageBytes(Path auxv) {
        final long atPageSize = 6;
        try {
            byte[] raw = Files.readAllBytes(auxv);
            ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
            while (b.remaining() >= 16) {
                long type = b.getLong();
                long value = b.getLong();
                if (type == 0) {
                    break; // AT_NULL ends the vector
                }
                if (type == atPageSize && value >= 4096 && value <= (1 << 20) && Long.bitCount(value) == 1) {
                    return value;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not readable (another kernel, a test's table): the x86-64 page size
        }
        return 4096;
    }
}
