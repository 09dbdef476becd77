package dev.trainwatch.collector.state;

import dev.trainwatch.collector.state.window.RankWindows;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies a run's step reports: each rank's reports into its window, the run's own step series from the lead rank
 * (or reports naming no rank), each step counted once, and what a counted step moves (goodput ledger, losses, the
 * last step, the largest bucket). Only called under the {@link Fleet}'s lock.
 */
final class StepIngest {
    private final Registry registry;
    private final RunObservations observations;
    private final RunEvents events;

    StepIngest(Registry registry, RunObservations observations, RunEvents events) {
        this.registry = registry;
        this.observations = observations;
        this.events = events;
    }

    /**
     * @param agentId the agent that read the reports from a log, when it said so: its clock offset moves their
     *                time stamps onto the collector's clock; null for none
     * @param wallOffset seconds the collector's wall clock is ahead of its own (monotonic) clock: a report pushed
     *                   with no agent carries the sender's wall time, moved by this onto the fleet's clock
     * @param requestSentAt when the request left the agent, on its clock ({@code Trainwatch-Sent-At}), or null
     * @return the reports counted as the run's steps, in order (see {@link Fleet#ingestSteps})
     */
    /** A steps request whose newest report was read this long before it was sent delivers a backlog. */
    static final double BACKLOG_SECONDS = 15;
    /**
     * How long after such a request the run's silence is taken for late data: the next request of a replay comes
     * within a second or two; an agent that died meanwhile is named after this (and by {@code agent_lost}).
     */
    static final double LATE_GRACE_SECONDS = 30;

    List<StepEvent> apply(String runId, List<StepEvent> steps, String agentId, Double requestSentAt, double now,
                          double wallOffset) {
        List<StepEvent> counted = apply(runId, steps, agentId, requestSentAt, true, now, wallOffset);
        events.maybeEvaluate(registry.run(runId), now, StepEvent.anyNonFiniteLoss(steps));
        return counted;
    }

    /**
     * The same, leaving the judgement of the run (created if new) to the caller, for steps carried in an agent's
     * batch: the batch's send time already fed the agent's clock, so {@code observeClock} is false there.
     */
    List<StepEvent> apply(String runId, List<StepEvent> steps, String agentId, Double requestSentAt,
                          boolean observeClock, double now, double wallOffset) {
        List<StepEvent> counted = new ArrayList<>(steps.size());
        RunState run = registry.runOrCreate(runId, now);
        AgentState agent = agentId == null ? null : registry.agent(agentId);
        boolean sent = agentId != null && requestSentAt != null && Double.isFinite(requestSentAt);
        if (agent != null && sent && observeClock) {
            agent.clock.observeRequest(requestSentAt, now);
        }
        double offset;
        if (agent != null && agent.clock.known()) {
            offset = agent.clock.seconds();
        } else if (sent) {
            // No batch of that agent yet (the collector just restarted and its steps came first): this request's own
            // send time says how far its clock is off, give or take the request's delay.
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
            if (applyStep(run, runId, e, offset, now)) {
                counted.add(e);
            }
        }
        run.stepsApplied(now);
        events.stepsCounted(runId, counted);
        return counted;
    }

    /**
     * How long before this request was sent its newest report was read (both on the agent's clock): a backlog when it
     * is well beyond a poll or two, and the run's steps are late until a grace after now.
     */
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

    /** Applies one well-formed report to the run; true when it counts as a step of the run. */
    private boolean applyStep(RunState run, String runId, StepEvent e, double offset, double now) {
        int rank = e.rank() != null && e.rank() >= 0 ? e.rank() : -1;
        if (e.source() != null) {
            // A report read from a log: within one source a rank's steps only go up, so a step at or below
            // the last one applied from that source was applied already (re-read after an agent restart,
            // re-sent after an answer was lost, replayed from a spool): never again.
            Long applied = registry.ledger.lastStep(runId, e.source(), rank);
            if (applied != null && e.step() <= applied) {
                return false;
            }
            registry.ledger.appliedStep(runId, e.source(), rank, e.step());
        }
        double ts = Timestamps.stamp(e.ts() == null ? null : e.ts() - offset, now);
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
            // Another source's report of a step already counted: the same step again (bar and timer
            // line), or an older report from a rank that took the lead back while replaying what its
            // agent spooled (the ranks that led meanwhile counted those steps).
            counts = false;
        }
        if (counts && run.failure() != null && !run.ended() && ts > run.failureTs()) {
            // Steps after the failure: the run goes on (an elastic restart, another node's ranks).
            run.clearFailure();
        }
        if (counts) {
            run.countStep(e, rank, ts, observations.encodingSecondsPerStep(run));
        }
        run.stepSeen(e, ts);
        return counts;
    }
}
