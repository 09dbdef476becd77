package dev.trainwatch.agent.ship;

import dev.trainwatch.protocol.testing.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A node whose agent id another node also sends under is told once, not once a batch. */
@Timeout(10)
class CollectorNoticesTest {

    @Test
    void anAgentIdClashIsLoggedOnce() {
        List<String> lines;
        try (LogCapture log = LogCapture.of(HttpTransport.class.getName())) {
            HttpTransport notices = new HttpTransport(URI.create("http://127.0.0.1:9"), null, Duration.ofSeconds(1));
            notices.readNotice("{\"agent_id\":\"a\",\"seq\":1,\"duplicate\":false}");
            notices.readNotice("{\"agent_id\":\"a\",\"agent_id_clash\":\"agent id a is also sent by node-b");
            for (int i = 0; i < 5; i++) {
                notices.readNotice("{\"agent_id\":\"a\",\"agent_id_clash\":\"agent id a is also sent by node-b\"}");
            }
            lines = log.messages();
        }
        assertThat(lines).singleElement().asString().contains("also sent by node-b");
    }
}
