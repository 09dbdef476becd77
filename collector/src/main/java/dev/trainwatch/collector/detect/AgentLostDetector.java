package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code agent_lost}: an agent on one of the run's nodes has sent nothing for many of its polling intervals, so
 * the collector is blind there. Resolved by its next batch (the agent replays what it spooled meanwhile).
 */
public final class AgentLostDetector extends BaseDetector {

    private final DetectorSettings.AgentLost s;

    public AgentLostDetector(DetectorSettings settings) {
        super(AnomalyKind.AGENT_LOST);
        this.s = settings.agentLost();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        List<RunContext.AgentStatus> lost = new ArrayList<>();
        double longest = 0;
        double expected = 0;
        for (RunContext.AgentStatus a : run.agents()) {
            double interval = a.intervalSeconds() != null ? a.intervalSeconds() : seconds(s.defaultInterval());
            double limit = Math.max(seconds(s.minSilence()), s.missedIntervals() * interval);
            double silence = run.now() - a.lastSeenTs();
            if (silence > limit) {
                lost.add(a);
                if (silence > longest) {
                    longest = silence;
                    expected = interval;
                }
            }
        }
        if (lost.isEmpty()) {
            return Optional.empty();
        }
        List<String> hosts = lost.stream().map(RunContext.AgentStatus::host).distinct().toList();
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("agents", lost.stream().map(RunContext.AgentStatus::agentId).toList());
        evidence.put("hosts", hosts);
        evidence.put("seconds_since_last_batch", Math.round(longest));
        evidence.put("interval_seconds", expected);
        String message = String.format(Locale.ROOT, "no data from the agent on %s for %s (it reports every %s)",
                String.join(", ", hosts), Texts.secs(longest), Texts.secs(expected));
        return Optional.of(new Finding(Severity.WARNING, message, evidence,
                "check the agent on that node (systemctl status trainwatch-agent, its log) and the network path "
                        + "to the collector; the agent spools and replays its batches when it comes back, and a "
                        + "node that went down takes the run's ranks with it"));
    }
}
