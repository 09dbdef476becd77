package dev.trainwatch.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.plan.RunPlans;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads one run's stored spec and observed figures from a collector's history ({@code trainwatch.db}, docs/API.md),
 * read-only, so a collector can keep running on it. One use.
 */
final class RunHistoryReader {

    private RunHistoryReader() {
    }

    private static Double ratio(JsonNode summary, String field) {
        JsonNode v = summary.get(field);
        return v != null && v.isNumber() && v.asDouble() >= 0 && v.asDouble() < 1 ? v.asDouble() : null;
    }

    /** The history database a collector keeps in {@code dataDir}; a usage error when there is none. */
    static Path database(Path dataDir) {
        Path db = dataDir.resolve("trainwatch.db");
        if (!Files.isRegularFile(db)) {
            throw new UserError(ExitCodes.USAGE, "no run history in " + dataDir + " (a collector started with --data-dir "
                    + dataDir + " writes it)");
        }
        return db;
    }

    static ObservedRun observed(Path dataDir, String runId, Estimator estimator) {
        Path db = database(dataDir);
        String specJson;
        String summaryJson;
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:file:" + db.toAbsolutePath() + "?mode=ro");
             PreparedStatement ps = c.prepareStatement("SELECT spec_json, summary_json FROM runs WHERE run_id = ?")) {
            ps.setString(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new UserError(ExitCodes.USAGE, "no run '" + runId + "' in " + db + "; recorded runs: "
                            + String.join(", ", runIds(c)));
                }
                specJson = rs.getString(1);
                summaryJson = rs.getString(2);
            }
        } catch (SQLException e) {
            throw new UserError(ExitCodes.FAILURE, "cannot read " + db + ": "
                    + Errors.firstLine(e.getMessage(), "unknown error"));
        }
        try {
            JsonNode summary = summaryJson == null ? null : Json.MAPPER.readTree(summaryJson);
            RunSpec spec = specJson != null ? Json.MAPPER.readValue(specJson, RunSpec.class)
                    : summary != null && summary.hasNonNull("spec") ? Json.MAPPER.treeToValue(summary.get("spec"), RunSpec.class)
                    : null;
            if (spec == null || spec.model() == null || spec.gpu() == null) {
                throw new UserError(ExitCodes.USAGE, "run '" + runId + "' has no spec with its model and GPU in " + db
                        + " (register one with PUT /v1/runs/" + runId + " or start it with the estimate options)");
            }
            JsonNode step = summary == null ? null : summary.get("step_seconds");
            if (step == null || !step.isNumber() || !(step.asDouble() > 0)) {
                throw new UserError(ExitCodes.USAGE, "run '" + runId + "' has no observed step time yet in " + db
                        + " (the collector records it once steps are reported)");
            }
            JsonNode last = summary.get("last_step");
            // The anchor the collector's own re-pricing takes: the data and encoder shares of the summary (absent in older
            // histories: the whole step is GPU work).
            return RunPlans.observed(estimator.estimate(spec), step.asDouble(), ratio(summary, "data_wait_ratio"),
                    ratio(summary, "text_encoder_ratio"), ratio(summary, "vae_ratio"),
                    last != null && last.isNumber() ? last.asLong() : null);
        } catch (JsonProcessingException e) {
            throw new UserError(ExitCodes.FAILURE, "run '" + runId + "' in " + db + " has an unreadable record: "
                    + Errors.firstLine(e.getOriginalMessage(), "unknown error"));
        }
    }

    private static List<String> runIds(Connection c) throws SQLException {
        List<String> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT run_id FROM runs ORDER BY last_seen_ms DESC LIMIT 10");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids.isEmpty() ? List.of("none") : ids;
    }
}
