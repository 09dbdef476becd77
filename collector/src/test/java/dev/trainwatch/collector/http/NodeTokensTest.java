package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-node tokens beside the shared one: a node's token reports its own node and no other; the shared token still
 * reports any; a token of no one is refused.
 */
@Timeout(60)
class NodeTokensTest {

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aNodesTokenSpeaksOnlyForThatNode() throws Exception {
        Path file = dir.resolve("node-tokens");
        Files.writeString(file, "\uFEFF# host token\ngpu-node-01 token-of-01\n\nGPU-Node-02 token-of-02\n");
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withToken("shared");
        try (CollectorServer server = CollectorServer.builder(config).jvmMetrics(false)
                .nodeTokens(NodeTokens.read(file)).start()) {
            assertThat(post(server, "token-of-01", "gpu-node-01", 1).statusCode()).isEqualTo(200);
            assertThat(post(server, "token-of-02", "gpu-node-02", 1).statusCode()).isEqualTo(200);
            HttpResponse<String> forged = post(server, "token-of-01", "gpu-node-02", 2);
            assertThat(forged.statusCode()).isEqualTo(403);
            assertThat(forged.body()).contains("gpu-node-01's", "gpu-node-02");
            assertThat(post(server, "shared", "gpu-node-03", 1).statusCode()).isEqualTo(200);
            assertThat(post(server, "token-of-nobody", "gpu-node-01", 3).statusCode()).isEqualTo(401);
            assertThat(server.fleet().agents()).hasSize(3);
        }
    }

    @Test
    void aFileThatIsNotPairsIsOneLine() throws Exception {
        Path file = dir.resolve("node-tokens");
        Files.writeString(file, "gpu-node-01\n");
        assertThatThrownBy(() -> NodeTokens.read(file)).hasMessageContaining("line 1: want HOST TOKEN");
        Files.writeString(file, "a same\nb same\n");
        assertThatThrownBy(() -> NodeTokens.read(file)).hasMessageContaining("the same token for two nodes");
    }

    private HttpResponse<String> post(CollectorServer server, String token, String host, long seq) throws Exception {
        String body = "{\"host\":\"" + host + "\",\"agent_id\":\"" + host + "-a\",\"seq\":" + seq + ",\"gpus\":[]}";
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/samples"))
                .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
