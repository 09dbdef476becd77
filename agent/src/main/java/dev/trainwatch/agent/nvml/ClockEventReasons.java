package dev.trainwatch.agent.nvml;

import java.util.ArrayList;
import java.util.List;

/** Names of the bits of NVML's clock-event (throttle) reason mask, in lower snake case as the wire uses them. */
public final class ClockEventReasons {

    private static final String[] NAMES = {
        "gpu_idle",                  // 0x1
        "applications_clocks_setting", // 0x2
        "sw_power_cap",              // 0x4
        "hw_slowdown",               // 0x8
        "sync_boost",                // 0x10
        "sw_thermal_slowdown",       // 0x20
        "hw_thermal_slowdown",       // 0x40
        "hw_power_brake_slowdown",   // 0x80
        "display_clock_setting",     // 0x100
    };

    private ClockEventReasons() {
    }

    /**
     * The active reasons of a mask, lowest bit first. Bits this version does not know are kept as
     * {@code unknown_0x…} rather than dropped, so a new driver's reason is still visible.
     */
    public static List<String> names(long mask) {
        List<String> out = new ArrayList<>(2);
        for (long rest = mask; rest != 0; rest &= rest - 1) {
            int bit = Long.numberOfTrailingZeros(rest);
            out.add(bit < NAMES.length ? NAMES[bit] : "unknown_0x" + Long.toHexString(1L << bit));
        }
        return List.copyOf(out);
    }
}
