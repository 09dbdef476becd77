package dev.trainwatch.protocol;

import java.util.List;

/**
 * Step reports of one run carried in an agent's batch ({@code run_steps} of {@code POST /v1/samples}): what the
 * agent read from the run's log since its previous batch. The collector applies them as it applies
 * {@code POST /v1/runs/{run_id}/steps?agent_id=…} from the same agent, in the same request as the readings they go
 * with. Immutable.
 *
 * @param steps its step reports, oldest first
 */
public record RunSteps(String runId, List<StepEvent> steps) {
}
