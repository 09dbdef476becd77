package dev.trainwatch.collector.state.view;

/** One rank's own step reports over the window (an entry of {@code observed.ranks}); {@code lead} is true or null. */
public record RankView(int rank, Boolean lead, int reports, Double stepSeconds, Double dataWaitRatio,
                       Double textEncoderRatio, Double vaeRatio, long lastStep, double lastTs) {
}
