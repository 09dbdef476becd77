package dev.trainwatch.collector.state.view;

/**
 * One rank's own step reports over the window (an entry of {@code observed.ranks} in {@code GET /v1/runs/{id}}),
 * for runs in which several ranks report each step. Seconds, ratios 0–1, unix seconds; null = the rank's
 * reports do not say. Immutable.
 *
 * @param rank              the rank
 * @param lead              true for the rank whose reports make the run's step series, null for the others
 * @param reports           its reports in the window (at most the 16 newest are kept per rank)
 * @param stepSeconds       mean seconds per step over those reports
 * @param dataWaitRatio     share of its step time spent waiting for data
 * @param textEncoderRatio  share in the text encoder
 * @param vaeRatio          share in the VAE encoder
 * @param lastStep          its newest step number
 * @param lastTs            unix seconds of its newest report
 */
public record RankView(int rank, Boolean lead, int reports, Double stepSeconds, Double dataWaitRatio,
                       Double textEncoderRatio, Double vaeRatio, long lastStep, double lastTs) {
}
