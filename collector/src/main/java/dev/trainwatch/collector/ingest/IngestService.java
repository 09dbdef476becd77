package dev.trainwatch.collector.ingest;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.IngestResult;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The one way into the {@link Fleet} for what agents and users send: decodes a body, holds it to the limits and the
 * validator's rules and applies it. Knows no transport: handlers call it off the event loop. Thread-safe.
 */
public final class IngestService {
    /** How long a spec registration waits for its history write before it answers anyway. */
    static final Duration DURABLE_WAIT = Duration.ofSeconds(5);

    private final Fleet fleet;
    private final BodyDecoder decoder;
    private final InputValidator validator;
    private final RefusedRuns refusedRuns = new RefusedRuns(System::nanoTime);
    private final Function<Duration, Boolean> durability;

    /**
     * What a batch is answered ({@code duplicate}: it repeated one already applied); a null field is left out.
     * {@code steps_accepted} is always there: it tells an agent that this collector takes steps in the batch.
     */
    public record BatchAnswer(String agentId, long seq, boolean duplicate, int gpus, int readings, int stepsAccepted,
                              List<String> runsRefused, String agentIdClash, String stepsRefused) {
    }

    public record StepsAnswer(String runId, int accepted) {
    }

    /** {@code durability} waits (bounded) until what listeners were told is on disk, so an acknowledged spec lasts. */
    public IngestService(CollectorConfig.Limits limits, Fleet fleet, Function<Duration, Boolean> durability) {
        this.fleet = fleet;
        this.decoder = new BodyDecoder(limits.maxInflatedBytes());
        this.validator = new InputValidator(limits);
        this.durability = durability;
    }

    /** {@code PUT /v1/runs/{run_id}}: registers a spec; blocks until listeners have it on disk, a bounded time. */
    public RunView putSpec(String runId, byte[] body, String contentEncoding) {
        InputValidator.requireRunId("run_id", runId);
        RunSpec spec = decoder.spec(decoder.decode(body, contentEncoding));
        validator.check(spec);
        RunView run;
        try {
            run = fleet.putSpec(runId, spec);
        } catch (InvalidSpecException e) {
            throw ApiError.unprocessable(Errors.firstLine(e.getMessage(), "invalid"));
        }
        long deadline = System.nanoTime() + DURABLE_WAIT.toNanos();
        if (fleet.awaitListeners(DURABLE_WAIT)) {
            durability.apply(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        return run;
    }

    /** {@code POST /v1/runs/{run_id}/steps}; {@code agentId} (or null) is the agent whose clock offset moves them. */
    public StepsAnswer steps(String runId, String agentId, Double sentAt, byte[] body, String contentEncoding) {
        InputValidator.requireRunId("run_id", runId);
        if (agentId != null) {
            InputValidator.requireLabel("agent_id", agentId);
        }
        List<StepEvent> steps = decoder.steps(body, contentEncoding);
        validator.check(steps);
        fleet.ingestSteps(runId, steps, agentId, sentAt);
        return new StepsAnswer(runId, steps.size());
    }

    /**
     * {@code POST /v1/samples}: a run or steps that break a rule cost only themselves, and the answer says so.
     * {@code maySpeakFor} throws when the sender may not speak for the batch's host.
     */
    public BatchAnswer batch(byte[] body, String contentEncoding, Double sentAt, Consumer<String> maySpeakFor) {
        RefusedRuns.Stripped stripped = refusedRuns.strip(decoder.batch(body, contentEncoding));
        AgentBatch batch = stripped.batch();
        validator.check(batch);
        maySpeakFor.accept(batch.host());
        String stepsRefused = null;
        try {
            validator.checkSteps(batch);
        } catch (ApiError bad) {
            stepsRefused = bad.getMessage();
            batch = batch.withoutSteps();
        }
        IngestResult result = fleet.ingestBatch(batch, sentAt);
        int stepsAccepted = result.duplicate() || batch.runSteps() == null || result.stepsRefused() != null ? 0
                : batch.runSteps().stream().mapToInt(group -> group.steps().size()).sum();
        return new BatchAnswer(batch.agentId(), batch.seq(), result.duplicate(), result.gpus(),
                batch.gpus() == null ? 0 : batch.gpus().size(), stepsAccepted,
                stripped.refused().isEmpty() ? null : stripped.refused(),
                fleet.agentIdClash(batch.agentId(), batch.host()).orElse(null),
                stepsRefused != null ? stepsRefused : result.stepsRefused());
    }
}
