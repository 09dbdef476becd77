package dev.trainwatch.agent.attribution;

import dev.trainwatch.protocol.GpuSample;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** Interprets {@code CUDA_VISIBLE_DEVICES} against the node's GPUs. Pure. */
public final class VisibleDevices {

    private VisibleDevices() {
    }

    /**
     * Entry {@code localRank} of the visible devices when it exists, else all; entries are NVML indices or UUID prefixes
     * as CUDA accepts. Empty when unset or naming nothing here.
     */
    public static Set<String> resolve(String cudaVisibleDevices, Integer localRank, List<GpuSample> samples) {
        Set<String> result = new TreeSet<>();
        if (cudaVisibleDevices == null || cudaVisibleDevices.isBlank()) {
            return result;
        }
        List<String> visible = new ArrayList<>();
        for (String entry : cudaVisibleDevices.split(",")) {
            String uuid = match(entry.strip(), samples);
            if (uuid == null) {
                break;
            }
            visible.add(uuid);
        }
        if (localRank != null && localRank >= 0 && localRank < visible.size()) {
            result.add(visible.get(localRank));
        } else {
            result.addAll(visible);
        }
        return result;
    }

    private static String match(String entry, List<GpuSample> samples) {
        if (entry.isEmpty()) {
            return null;
        }
        if (entry.chars().allMatch(Character::isDigit)) {
            int index = Integer.parseInt(entry);
            return samples.stream().filter(s -> s.index() == index).findFirst().map(GpuSample::uuid).orElse(null);
        }
        String wanted = entry.startsWith("GPU-") ? entry : "GPU-" + entry;
        return samples.stream().map(GpuSample::uuid).filter(u -> u != null && u.startsWith(wanted)).findFirst()
                .orElse(null);
    }
}
