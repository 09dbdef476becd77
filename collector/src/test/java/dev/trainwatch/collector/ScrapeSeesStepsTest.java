package dev.trainwatch.collector;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The step-time summary is not fed through the fleet's delivery thread: a listener stuck there (a slow history) neither
 * delays a scrape nor hides from it a step applied before it.
 */
class ScrapeSeesStepsTest {

    /** Blocks the fleet's delivery thread at the first run summary until released. */
    private static final class StuckHistory implements FleetListener {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void onRunChanged(RunSummary summary) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void aScrapeShowsEveryStepAppliedBeforeItWhileAnotherListenerIsStuck() throws Exception {
        StuckHistory history = new StuckHistory();
        try (RunningCollector collector = RunningCollector.start()) {
            collector.server.fleet().addListener(history);
            try {
                for (int step = 1; step <= 20; step++) {
                    collector.clock.advanceSeconds(2);
                    StepEvent report = new StepEvent((long) step, 2.0, null, null, null, null, 1, null, null, null,
                            null, null, null, null, null, null);
                    HttpResponse<String> posted = collector.postJson("/v1/runs/stuck/steps",
                            Json.MAPPER.writeValueAsBytes(List.of(report)));
                    assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
                }
                history.entered.await();
                String scrape = collector.get("/metrics").body();
                assertThat(history.release.getCount()).as("the history is still stuck").isEqualTo(1);
                assertThat(scrape).contains("trainwatch_run_step_seconds_count{run_id=\"stuck\"} 20\n")
                        .contains("trainwatch_run_step_seconds_sum{run_id=\"stuck\"} 40.0\n");
            } finally {
                history.release.countDown();
            }
        }
    }
}
