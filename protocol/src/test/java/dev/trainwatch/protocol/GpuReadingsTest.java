package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Readings column by column are the same readings as rows, whatever is missing from some of them. */
class GpuReadingsTest {

    private static GpuSample reading(double ts, int index, Long used, Double power, List<GpuProcess> processes,
                                     Boolean lost) {
        String uuid = "GPU-" + index;
        return new GpuSample(ts, index, uuid, "NVIDIA H100 80GB HBM3", "00000000:0" + index + ":00.0",
                85_899_345_920L, used, null, used == null ? null : 85_899_345_920L - used, 0.97, 0.4,
                new UtilizationWindow(6, 0.9, 0.97, 1.0, 0.0, ts - 1, ts), 1_980_000_000L, 1_980_000_000L,
                2_619_000_000L, 2_619_000_000L, ts > 3 ? List.of("sw_power_cap") : List.of(), power, 700.0,
                1e6 + ts, 64.0, 0, processes, lost,
                ts == 2 ? new GpuActivity(1.0, 0.8, 0.5, 0.6, 0.6, 0.3, 1e9, 2e9, null, null, null, null) : null);
    }

    /** Five polls of three GPUs, one of which misses readings, is lost for a poll and changes its processes. */
    private static List<GpuSample> polls() {
        List<GpuSample> rows = new ArrayList<>();
        for (int poll = 1; poll <= 5; poll++) {
            rows.add(reading(poll, 0, 60_000_000_000L + poll, 650.5,
                    List.of(new GpuProcess(4242, 60_000_000_000L, null, null)), null));
            rows.add(reading(poll, 1, poll == 3 ? null : 1_000_000_000L, poll == 3 ? null : 80.25, List.of(), null));
            rows.add(poll == 4
                    ? new GpuSample(poll, 2, "GPU-2", null, null, null, null, null, null, null, null, null, null,
                    null, null, null, null, null, null, null, null, null, null, true)
                    : reading(poll, 2, 2_000_000_000L, 90.0, poll < 3 ? List.of() : List.of(new GpuProcess(7, null,
                    0.5, 0.25), new GpuProcess(8, 1L, null, null)), null));
        }
        return rows;
    }

    @Test
    void columnsGiveBackEveryReadingGpuByGpuInTheOrderTheyWereTaken() {
        List<GpuSample> rows = polls();
        List<GpuReadings> columns = GpuReadings.of(rows);

        // GPU 2's lost reading has no name or bus id: another identity, so it travels in a group of its own.
        assertThat(columns).extracting(GpuReadings::uuid).containsExactly("GPU-0", "GPU-1", "GPU-2", "GPU-2");
        assertThat(columns).extracting(GpuReadings::size).containsExactly(5, 5, 4, 1);
        List<GpuSample> back = new ArrayList<>();
        for (GpuReadings c : columns) {
            back.addAll(c.samples());
        }
        List<GpuSample> expected = new ArrayList<>();
        for (String uuid : List.of("GPU-0", "GPU-1")) {
            rows.stream().filter(r -> r.uuid().equals(uuid)).forEach(expected::add);
        }
        rows.stream().filter(r -> r.uuid().equals("GPU-2") && r.lost() == null).forEach(expected::add);
        rows.stream().filter(r -> r.uuid().equals("GPU-2") && r.lost() != null).forEach(expected::add);
        assertThat(back).containsExactlyElementsOf(expected);
    }

    @Test
    void aFieldNoReadingHasIsLeftOutAndOneSomeHaveKeepsItsGaps() {
        GpuReadings gpu1 = GpuReadings.of(polls()).get(1);
        assertThat(gpu1.memoryReservedBytes()).isNull();
        assertThat(gpu1.lost()).isNull();
        assertThat(gpu1.powerWatts()).containsExactly(80.25, 80.25, null, 80.25, 80.25);
        GpuReadings gpu0 = GpuReadings.of(polls()).get(0);
        assertThat(gpu0.activity()).hasSize(5).containsNull();
        assertThat(gpu0.activity().get(1)).isNotNull();
    }

    @Test
    void aBatchSentAsColumnsReadsBackAsTheSameRowsAndIsWrittenAsTheMapperWritesIt() throws Exception {
        AgentBatch rows = new AgentBatch("node-1", "node-1-7f3a", 41, polls(), List.of(), List.of(), null, null,
                1767225599.5);
        AgentBatch columns = GpuReadings.columns(rows);

        assertThat(columns.gpus()).isNull();
        byte[] wire = WireWriter.toBytes(columns);
        assertThat(wire).isEqualTo(Json.MAPPER.writeValueAsBytes(columns));
        AgentBatch parsed = Json.MAPPER.readValue(wire, AgentBatch.class);
        assertThat(parsed).isEqualTo(columns);
        AgentBatch back = GpuReadings.rows(parsed);
        assertThat(back.gpuReadings()).isNull();
        assertThat(back.gpus()).containsExactlyInAnyOrderElementsOf(rows.gpus());
        assertThat(new AgentBatch(back.host(), back.agentId(), back.seq(), rows.gpus(), back.runs(), back.events(),
                back.health(), back.hostMemory(), back.sentAt())).isEqualTo(rows);
        // Smaller than the rows: names and identity once per GPU.
        assertThat(wire.length).isLessThan(WireWriter.toBytes(rows).length * 2 / 3);
    }

    @Test
    void rowsSentBesideColumnsComeFirst() {
        List<GpuSample> polls = polls();
        AgentBatch mixed = new AgentBatch("h", "a", 1, List.of(polls.get(0)), null, null, null, null, null,
                GpuReadings.of(polls.subList(1, 2)));
        assertThat(GpuReadings.rows(mixed).gpus()).containsExactly(polls.get(0), polls.get(1));
        AgentBatch plain = new AgentBatch("h", "a", 1, polls, null, null, null, null, null);
        assertThat(GpuReadings.rows(plain)).isSameAs(plain);
    }

    @Test
    void aColumnOfTheWrongLengthOrAMissingTimeIsNamed() {
        GpuReadings good = GpuReadings.of(polls()).get(0);
        GpuReadings shortPower = new GpuReadings(good.index(), good.uuid(), good.name(), good.pciBusId(), good.ts(),
                good.memoryTotalBytes(), good.memoryUsedBytes(), good.memoryReservedBytes(), good.memoryFreeBytes(),
                good.utilizationRatio(), good.memoryUtilizationRatio(), good.utilizationWindow(), good.smClockHz(),
                good.smClockMaxHz(), good.memClockHz(), good.memClockMaxHz(), good.clockEventReasons(),
                good.powerWatts().subList(0, 4), good.powerLimitWatts(), good.energyJoules(),
                good.temperatureCelsius(), good.pstate(), good.processes(), good.lost(), good.activity());
        AgentBatch batch = new AgentBatch("h", "a", 1, null, null, null, null, null, null,
                List.of(good, shortPower));
        assertThatThrownBy(() -> GpuReadings.rows(batch)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("gpu_readings[1].power_watts has 4 values for 5 time stamps");

        GpuReadings noTs = new GpuReadings(0, "GPU-0", null, null, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, null, null);
        assertThatThrownBy(() -> GpuReadings.rows(new AgentBatch("h", "a", 1, null, null, null, null, null, null,
                List.of(noTs)))).hasMessage("gpu_readings[0].ts is required");
        GpuReadings nullTs = new GpuReadings(0, "GPU-0", null, null, Arrays.asList(1.0, null), null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
        assertThatThrownBy(() -> GpuReadings.rows(new AgentBatch("h", "a", 1, null, null, null, null, null, null,
                List.of(nullTs)))).hasMessage("gpu_readings[0].ts[1] is null");
        assertThatThrownBy(() -> GpuReadings.rows(new AgentBatch("h", "a", 1, null, null, null, null, null, null,
                Arrays.asList(good, null)))).hasMessage("gpu_readings[1] is null");
    }
}
