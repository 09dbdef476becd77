package dev.trainwatch.collector.state;

import dev.trainwatch.collector.state.window.RankWindows;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.List;

/** Applies a run's step reports (each rank's window, the lead rank's step series, each step counted once). */
final class StepIngest {
    private final Registry registry;
    private final RunObservations observations;
    private final EvaluationSchedule events;

    StepIngest(Registry registry, RunObservations observations, EvaluationSchedule events) {
        this.registry = registry;
        this.observations = observations;
        this.events = events;
    }

    /** A steps request whose newest report was read this long before it was sent delivers a backlog. */
    static final double BACKLOG_SECONDS = 15;
    /** A run's silence after such a request is taken for late data this long (a replay's next request is close). */
    static final double LATE_GRACE_SECONDS = 30;

    /**
     * Applies the reports; a {@code request} of their own (not carried in a batch, whose send time fed the clock and
     * whose caller judges the run) feeds the agent's clock with its send time, and the run is judged when due.
     */
    List<StepEvent> apply(String runId, List<StepEvent> steps, String agentId, Double requestSentAt, boolean request,
                          double now, double wallOffset) {
        List<StepEvent> counted = new ArrayList<>(steps.size());
        RunState run = registry.runOrCreate(runId, now);
        AgentState agent = agentId == null ? null : registry.agent(agentId);
        boolean sent = agentId != null && requestSentAt != null && Double.isFinite(requestSentAt);
        if (agent != null && sent && request) {
            agent.clock.observeRequest(requestSentAt, now);
        }
        double offset;
        if (agent != null && agent.clock.known()) {
            offset = agent.clock.seconds();
        } else if (sent) {
            // No batch of that agent yet: this request's send time says how far its clock is off.
            offset = requestSentAt - now;
        } else {
            offset = agent == null ? wallOffset : agent.clock.seconds();
        }
        if (sent) {
            markBacklog(run, steps, requestSentAt, now);
        }
        for (StepEvent e : steps) {
            if (e == null || e.step() == null || e.step() < 0 || e.timeS() == null
                    || !Double.isFinite(e.timeS()) || e.timeS() <= 0) {
                continue;
            }
            StepEvent applied = applyStep(run, runId, e, offset, now);
            if (applied != null) {
                counted.add(applied);
            }
        }
        run.stepsApplied(now);
        events.stepsCounted(runId, counted);
        if (request) {
            events.maybeEvaluate(run, now, StepEvent.anyNonFiniteLoss(steps));
        }
        return counted;
    }

    /** How long before this request was sent its newest report was read: a backlog makes the steps late for now. */
    private static void markBacklog(RunState run, List<StepEvent> steps, double requestSentAt, double now) {
        double newest = Double.NEGATIVE_INFINITY;
        for (StepEvent e : steps) {
            if (e != null && e.ts() != null && Double.isFinite(e.ts())) {
                newest = Math.max(newest, e.ts());
            }
        }
        if (newest > Double.NEGATIVE_INFINITY) {
            run.stepsLateUntil(requestSentAt - newest > BACKLOG_SECONDS ? now + LATE_GRACE_SECONDS
                    : Double.NEGATIVE_INFINITY);
        }
    }

    /**
     * Applies one well-formed report to the run; the report as counted (its {@code interval_steps} at most the steps
     * since the run's last counted one), or null when it does not count as a step of the run.
     */
    private StepEvent applyStep(RunState run, String runId, StepEvent e, double offset, double now) {
        int rank = e.rank() != null && e.rank() >= 0 ? e.rank() : -1;
        if (e.source() != null) {
            // Within one source a rank's steps only go up: one at or below the last applied was applied already.
            Long applied = registry.ledger.lastStep(runId, e.source(), rank);
            if (applied != null && e.step() <= applied) {
                return null;
            }
            registry.ledger.appliedStep(runId, e.source(), rank, e.step());
        }
        double ts = e.ts() == null ? now : Timestamps.stamp(e.ts() - offset, now);
        boolean counts = true;
        if (rank >= 0) {
            RankWindows ranks = run.ranksOrCreate(registry.windowSeconds, registry.rankBudget);
            long refusedBefore = ranks.refused();
            counts = ranks.add(e, ts);
            if (ranks.refused() > refusedBefore) {
                registry.slots.refuse(Slots.Kind.RANKS, registry.rankBudget.max(), 0, now);
            }
        }
        if (counts && rank != run.lastCountedRank()
                && (e.step() == run.lastCountedStep() || ts < run.lastCountedTs())) {
            // Another source's report of a step already counted, or an older one of a rank replaying its spool.
            counts = false;
        }
        if (counts && run.failure() != null && !run.ended() && ts > run.failureTs()) {
            // Steps after the failure: the run goes on (an elastic restart, another node's ranks).
            run.clearFailure();
        }
        if (counts) {
            long last = run.lastCountedStep();
            if (e.intervalSteps() != null && last >= 0 && e.step() > last && e.intervalSteps() > e.step() - last) {
                // The mean covers steps another report counted already: the agent's previous line was read from
                // another file, or by an earlier agent before a restart (its log position not yet committed).
                e = e.withIntervalSteps((int) (e.step() - last));
            }
            run.countStep(e, rank, ts, observations.encodingSecondsPerStep(run));
        }
        run.stepSeen(e, ts);
        return counts ? e : null;
    }
}
