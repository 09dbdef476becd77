package dev.trainwatch.agent.export;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.RunAttribution;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A node's agent serves its GPUs' and its memory's series on its own /metrics, named as the collector names them. */
@Timeout(30)
class NodeExporterTest {
    private final NodeReadings readings = new NodeReadings("node7");
    private NodeExporter exporter;

    @AfterEach
    void stop() {
        if (exporter != null) {
            exporter.close();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + exporter.port() + path))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesEachGpuOfTheNewestPollWithItsRunItsXidsAndTheNodesMemory() throws Exception {
        exporter = NodeExporter.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), readings, null);
        assertThat(get("/metrics").body()).as("nothing before the first poll").doesNotContain("trainwatch_gpu_");

        GpuSample first = Samples.gpu(100, 0, 4242);
        GpuSample second = Samples.sample(100, 1, List.of(), 0.5);
        readings.update(List.of(first, second),
                List.of(new RunAttribution("run-a", List.of(4242L), List.of(first.uuid()), null, null, null, null, null, null, null, null)),
                new HostMemory(100, 1L << 40, 1L << 39, 0L, 1L << 35, 1L << 30),
                List.of(new AgentEvent(100, "xid", second.uuid(), 79L, null, "fallen off the bus", null, null, null, null)));

        HttpResponse<String> scrape = get("/metrics");
        assertThat(scrape.statusCode()).isEqualTo(200);
        assertThat(scrape.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
        String gpu0 = "{gpu=\"0\",gpu_uuid=\"" + first.uuid() + "\",host=\"node7\"}";
        String gpu1 = "{gpu=\"1\",gpu_uuid=\"" + second.uuid() + "\",host=\"node7\"}";
        assertThat(scrape.body())
                .contains("trainwatch_gpu_memory_used_bytes" + gpu0 + " 6.0E10")
                .contains("trainwatch_gpu_utilization_ratio" + gpu1 + " 0.5")
                .contains("trainwatch_gpu_run_info{gpu=\"0\",gpu_uuid=\"" + first.uuid()
                        + "\",host=\"node7\",run_id=\"run-a\"} 1")
                .contains("trainwatch_gpu_xid_errors_total{gpu=\"1\",gpu_uuid=\"" + second.uuid()
                        + "\",host=\"node7\",kind=\"79\"} 1.0")
                .contains("trainwatch_gpu_clock_event_active{gpu=\"0\",gpu_uuid=\"" + first.uuid()
                        + "\",host=\"node7\",reason=\"hw_slowdown\"} 0.0")
                .contains("trainwatch_host_memory_available_bytes{host=\"node7\"} 5.49755813888E11")
                .doesNotContain("run_id=\"run-a\"} 1\ntrainwatch_gpu_run_info{gpu=\"1\"");
        assertThat(get("/healthz").body()).isEqualTo("ok\n");
    }

    @Test
    void aGpuGoneFromTheNewestPollHasNoSeriesAndTheXidCountsGrow() throws Exception {
        exporter = NodeExporter.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), readings, null);
        GpuSample gpu = Samples.gpu(100, 0);
        AgentEvent xid = new AgentEvent(100, "xid", gpu.uuid(), 48L, null, "double-bit ECC", null, null, null, null);
        readings.update(List.of(gpu, Samples.gpu(100, 1)), List.of(), null, List.of(xid));
        readings.update(List.of(Samples.gpu(101, 0)), List.of(), null, List.of(xid));
        String body = new String(exporter.scrape(), StandardCharsets.UTF_8);
        assertThat(body).doesNotContain("gpu=\"1\"").contains("kind=\"48\"} 2.0")
                .doesNotContain("trainwatch_host_memory");
    }
}
