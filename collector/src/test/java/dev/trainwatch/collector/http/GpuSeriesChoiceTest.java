package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.collector.support.RunningCollector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The collector's /metrics carries the per-GPU series only when asked (--gpu-series): a large fleet's nodes serve
 * their own (trainwatch agent --listen), and the collector's scrape keeps runs, agents, limits and health.
 */
@Timeout(60)
class GpuSeriesChoiceTest {

    private static String scrapeAfterOneBatch(CollectorConfig config) {
        RunningCollector collector = new RunningCollector(config.withListen("127.0.0.1", 0));
        try {
            double t = collector.clock.seconds();
            assertThat(collector.postJson("/v1/samples", Payloads.json(Payloads.batch("node1", 1, t, 8, "run-a")))
                    .statusCode()).isEqualTo(200);
            return collector.get("/metrics").body();
        } finally {
            collector.close();
        }
    }

    @Test
    void offLeavesTheGpuSeriesToTheAgentsAndKeepsRunsAgentsAndLimits() {
        String scrape = scrapeAfterOneBatch(CollectorConfig.defaults().withGpuSeries(false));
        assertThat(scrape).doesNotContain("\ntrainwatch_gpu_").doesNotContain("\ntrainwatch_host_memory")
                .contains("trainwatch_run_gpus{run_id=\"run-a\"} 8.0")
                .contains("trainwatch_agent_last_seen_timestamp_seconds{host=\"node1\"}")
                .contains("trainwatch_limit_entries{reason=\"gpus\"} 8.0");
    }

    @Test
    void autoExportsThemForASmallFleetAndNotForALargeOne() {
        assertThat(scrapeAfterOneBatch(CollectorConfig.defaults()))
                .contains("trainwatch_gpu_utilization_ratio{gpu=\"0\"");
        CollectorConfig large = CollectorConfig.defaults().withLimits(CollectorConfig.Limits.defaults()
                .withCaps(1_024, 65_536, 8_192, 256));
        assertThat(large.exportsGpuSeries()).isFalse();
        assertThat(scrapeAfterOneBatch(large)).doesNotContain("trainwatch_gpu_utilization_ratio{");
        assertThat(scrapeAfterOneBatch(large.withGpuSeries(true))).contains("trainwatch_gpu_utilization_ratio{");
    }
}
