package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.LogCapture;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The reader's buffer is bounded: what it drops when the agent does not take steps is said, once, not lost silently. */
class BackgroundStepSourceTest {

    /** A log that yields half the buffer's worth of steps at every read. */
    private static class Flood implements StepSource {
        final AtomicLong reads = new AtomicLong();

        @Override
        public List<StepEvent> poll() {
            reads.incrementAndGet();
            StepEvent step = new StepEvent(1L, 0.5, null, null, null, null, 1, null, null, null, null, null, null,
                    null, null, null);
            return Collections.nCopies(BackgroundStepSource.MAX_BUFFERED / 2, step);
        }

        @Override
        public String problem() {
            return null;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void stepsDroppedWhileTheAgentDoesNotTakeThemAreWarnedOfOnce() {
        Flood flood = new Flood();
        BackgroundStepSource background = new BackgroundStepSource(flood, Duration.ofMillis(5), Duration.ofMinutes(1));
        try (LogCapture log = LogCapture.of(BackgroundStepSource.class.getName())) {
            background.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> flood.reads.get() >= 6);
            assertThat(log.messages()).hasSize(1);
            assertThat(log.messages().get(0)).contains("dropped the oldest").contains("steps are lost");
            assertThat(background.poll()).hasSize(BackgroundStepSource.MAX_BUFFERED);
            // Taken again: the next overflow is a new episode, warned of again.
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().size() == 2);
        } finally {
            background.close();
        }
    }

    @Test
    void noWarningWhenEverythingReadFitsTheBuffer() {
        // Three reads of 30,000 steps and then nothing: 90,000 held at most, even if the agent took none in between.
        Flood bounded = new Flood() {
            @Override
            public List<StepEvent> poll() {
                List<StepEvent> all = super.poll();
                return reads.get() > 3 ? List.of() : all.subList(0, 30_000);
            }
        };
        BackgroundStepSource background = new BackgroundStepSource(bounded, Duration.ofMillis(5), Duration.ofMinutes(1));
        try (LogCapture log = LogCapture.of(BackgroundStepSource.class.getName())) {
            background.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> bounded.reads.get() >= 4);
            assertThat(background.poll()).hasSize(90_000);
            assertThat(log.messages()).isEmpty();
        } finally {
            background.close();
        }
    }
}
