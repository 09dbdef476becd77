package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A node whose agent id another node also sends under is told once, not once a batch. */
@Timeout(10)
class CollectorNoticesTest {

    @Test
    void anAgentIdClashIsLoggedOnce() {
        List<String> lines = new ArrayList<>();
        Logger log = Logger.getLogger(CollectorNotices.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                lines.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        try {
            CollectorNotices notices = new CollectorNotices();
            notices.read("{\"agent_id\":\"a\",\"seq\":1,\"duplicate\":false}");
            notices.read("{\"agent_id\":\"a\",\"agent_id_clash\":\"agent id a is also sent by node-b");
            for (int i = 0; i < 5; i++) {
                notices.read("{\"agent_id\":\"a\",\"agent_id_clash\":\"agent id a is also sent by node-b\"}");
            }
        } finally {
            log.removeHandler(capture);
        }
        assertThat(lines).singleElement().asString().contains("also sent by node-b");
    }
}
