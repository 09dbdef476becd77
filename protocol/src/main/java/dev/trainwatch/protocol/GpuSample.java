package dev.trainwatch.protocol;

import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * One poll of one GPU. Readings a GPU or driver does not support are null ("absent"), never -1 or 0. Units are
 * base units: bytes, ratios 0–1, hertz, watts, joules, degrees Celsius, unix seconds. Immutable.
 *
 * @param ts                       unix seconds of the poll
 * @param index                    NVML index
 * @param uuid                     GPU UUID ({@code GPU-…}), the identity across polls
 * @param name                     NVML device name
 * @param memoryReservedBytes      memory reserved by the driver (NVML memory v2 only)
 * @param utilizationRatio         share of the last sample period any kernel ran
 * @param memoryUtilizationRatio   share of the last sample period device memory was read or written
 * @param utilizationWindow        the driver's buffered utilisation samples since the last poll
 * @param clockEventReasons        active clock-event (throttle) reasons by name, e.g. {@code sw_power_cap}
 * @param powerLimitWatts          enforced power limit
 * @param energyJoules             energy counter since driver load
 * @param temperatureCelsius       GPU core temperature
 * @param pstate                   performance state 0–15
 * @param processes                compute processes
 * @param lost                     true when NVML reported the GPU lost (then only identity is set)
 * @param activity                 hardware activity counters and interconnect traffic; null when the GPU gives none
 *                                 (and from older agents)
 */
public record GpuSample(
        double ts,
        int index,
        String uuid,
        String name,
        String pciBusId,
        Long memoryTotalBytes,
        Long memoryUsedBytes,
        Long memoryReservedBytes,
        Long memoryFreeBytes,
        Double utilizationRatio,
        Double memoryUtilizationRatio,
        UtilizationWindow utilizationWindow,
        Long smClockHz,
        Long smClockMaxHz,
        Long memClockHz,
        Long memClockMaxHz,
        List<String> clockEventReasons,
        Double powerWatts,
        Double powerLimitWatts,
        Double energyJoules,
        Double temperatureCelsius,
        Integer pstate,
        List<GpuProcess> processes,
        Boolean lost,
        GpuActivity activity) {

    /** Clock-event reasons that are hardware slowdowns (not the software power cap a busy healthy GPU shows). */
    public static final Set<String> HARDWARE_SLOWDOWNS = Set.of("hw_slowdown",
            "hw_thermal_slowdown", "hw_power_brake_slowdown");

    /** Utilisation at or above which clocks count for {@code throttling}: idle GPUs lower their clocks anyway. */
    public static final double THROTTLING_BUSY_RATIO = 0.50;

    /** Whether any sample is busy (a missing utilisation is not) and reports one of {@code reasons}. */
    public static boolean anyClockEventReasonWhileBusy(List<GpuSample> samples, Set<String> reasons,
                                                       double busyRatio) {
        if (samples == null) {
            return false;
        }
        for (GpuSample s : samples) { // a loop, not streams: asked at every poll by an agent that runs without C2
            if (s != null && s.utilizationRatio() != null && s.utilizationRatio() >= busyRatio
                    && s.clockEventReasons() != null && !Collections.disjoint(reasons, s.clockEventReasons())) {
                return true;
            }
        }
        return false;
    }
}
