// What the page knows: the runs from the last poll, the selected run's detail, each run's points over time, and
// what can be said about a run from its view (severity, predictions, whether it can be called calm).
import { num, first, toSeconds, fmtTimes } from './format.js';
import { seriesUrl } from './api.js';

export const MAX_POINTS = 1800;   // 30 minutes at one point a second

export const state = {
  runs: [],
  detail: null,
  selected: null,
  history: {},            // run id -> [point], the page's rolling buffer
  seriesFor: null,        // the run whose whole series was fetched last, and when (ms)
  seriesFullAt: 0,
  serverNow: null,        // the collector's clock may differ from the browser's
  timer: null,
  pastRuns: null,         // GET /v1/history while the history view is open
  historyAt: 0,
  plans: { for: null, at: 0, body: null, error: null }  // GET /v1/runs/{id}/plans
};

export function now() { return state.serverNow !== null ? state.serverNow : Date.now() / 1000; }

// The collector's clock when it is ahead of the browser's (a skewed host, the demo running fast).
export function serverNow(runs) {
  let t = Date.now() / 1000;
  runs.forEach((run) => { const seen = num(run.last_seen_ts); if (seen !== null && seen > t) { t = seen; } });
  return t;
}

export function runIdOf(run) { return run.run_id || ''; }
export function isSynthetic(run) { return run.synthetic === true || runIdOf(run).indexOf('demo-') === 0; }
export function anomaliesOf(run) { return Array.isArray(run.anomalies) ? run.anomalies : []; }
// An anomaly that ended with its run was not fixed: it still tells how the run stands.
export function activeAnomalies(run) { return anomaliesOf(run).filter((a) => a.active !== false || a.ended_with_run === true); }
export function worstSeverity(run) {
  const active = activeAnomalies(run);
  if (active.some((a) => a.severity === 'critical')) { return 'critical'; }
  return active.length ? 'warning' : 'ok';
}
export function stateOf(run) { return run.ended === true ? 'ended' : worstSeverity(run); }
export function stateLabel(run) {
  const s = stateOf(run);
  return { ok: 'healthy', warning: 'warning', critical: 'critical' }[s] || s;
}

const SEVERITY_RANK = { critical: 0, warning: 1, ok: 2 };
// The runs that need attention first; then by run id, so equal runs keep their places from poll to poll.
export function bySeverity(a, b) {
  const ia = runIdOf(a), ib = runIdOf(b);
  return (SEVERITY_RANK[worstSeverity(a)] - SEVERITY_RANK[worstSeverity(b)]) ||
    (activeAnomalies(b).length - activeAnomalies(a).length) || (ia < ib ? -1 : ia > ib ? 1 : 0);
}

export function predictedPeak(run) { return first((run.comparison || {}).predicted_peak_memory_bytes, (run.estimate || {}).peak_memory_bytes); }
export function predictedStep(run) { return first((run.comparison || {}).predicted_step_seconds, (run.estimate || {}).step_seconds); }
export function predictedThroughput(run) { return first((run.comparison || {}).predicted_samples_per_second, (run.estimate || {}).samples_per_second); }
export function capacityOf(run) { return first((run.comparison || {}).capacity_bytes, (run.observed || {}).memory_total_bytes, (run.estimate || {}).gpu_memory_bytes); }

// What a run without anomalies can honestly be said to be. Returns {chip, text}.
const FIRST_EVALUATION_SECONDS = 60;
export function calmState(run) {
  const o = run.observed || {};
  const c = run.comparison || {};
  const hasSteps = num(o.last_step) !== null;
  const gpus = num(o.gpu_count) || (Array.isArray(run.gpus) ? run.gpus.length : 0);
  if (!hasSteps && !gpus && run.unmatched && run.unmatched.message) {
    return { chip: 'no data', text: 'No data: ' + run.unmatched.message + '.' };
  }
  if (!hasSteps && !gpus) {
    return { chip: 'no data', text: 'No data yet: no step report and no GPU reading has arrived for this run. ' +
      'If a training job is running, check that its agent names the run ' + runIdOf(run) + ' (or push steps to /v1/runs/' + runIdOf(run) + '/steps).' };
  }
  if (!run.estimate) {
    return { chip: 'no spec', text: 'No prediction: the run has no spec, so nothing is compared with what it should cost. ' +
      'Register one with PUT /v1/runs/' + runIdOf(run) + ' (or start it with trainwatch watch/run and --model).' };
  }
  if (!gpus) {
    return { chip: 'no GPU readings', text: 'No GPU readings: steps arrive, but no agent reports this run\'s GPUs ' +
      '(no NVML on the node, or the agent names the run differently), so memory and utilisation are not checked.' };
  }
  const firstSeen = num(run.first_seen_ts);
  if (firstSeen !== null && now() - firstSeen < FIRST_EVALUATION_SECONDS) {
    return { chip: 'collecting evidence', text: 'Collecting evidence: the detectors judge after about a minute of data.' };
  }
  const stepRatio = num(c.step_time_ratio);
  const memoryRatio = num(c.memory_ratio);
  const off = [];
  if (stepRatio !== null && (stepRatio > 1.2 || stepRatio < 0.8)) { off.push('steps take ' + fmtTimes(stepRatio, 2) + ' the predicted time'); }
  if (memoryRatio !== null && (memoryRatio > 1.15 || memoryRatio < 0.7)) { off.push('memory is ' + fmtTimes(memoryRatio, 2) + ' the prediction'); }
  if (off.length) {
    return { chip: 'off the prediction', text: 'No anomaly raised, but ' + off.join(' and ') +
      ' (below the thresholds that raise one; see docs/DETECTORS.md).' };
  }
  const detail = [];
  if (stepRatio !== null) { detail.push('step ' + fmtTimes(stepRatio, 2)); }
  if (memoryRatio !== null) { detail.push('memory ' + fmtTimes(memoryRatio, 2)); }
  return { chip: 'no active anomalies', text: 'No anomalies: the run behaves as predicted' +
    (detail.length ? ' (' + detail.join(', ') + ' of the prediction).' : '.') };
}

/** One point of a run's charts at time t (unix seconds); idle is the share of buffered GPU samples at idle. */
function pointOf(run, t, idle) {
  const o = run.observed || {}, c = run.comparison || {};
  return {
    t: t,
    memory: num(o.memory_used_bytes),
    peak: num(o.peak_memory_bytes),
    memoryPredicted: predictedPeak(run),
    capacity: capacityOf(run),
    step: num(o.step_seconds),
    stepPredicted: predictedStep(run),
    utilization: num(o.gpu_utilization_ratio),
    utilizationMin: num(o.gpu_utilization_min_ratio),
    idle: num(idle),
    dataWait: num(o.data_wait_ratio),
    encoding: encodingRatio(o),
    throughput: num(o.samples_per_second),
    throughputPredicted: predictedThroughput(run),
    lastStep: num(o.last_step),
    stepRatio: num(c.step_time_ratio)
  };
}

/** Share of the step in online encoding (Sana's text encoder and VAE); null when the log does not report it. */
export function encodingRatio(o) {
  if (num(o.encoding_ratio) !== null) { return o.encoding_ratio; }
  const lm = num(o.text_encoder_ratio), vae = num(o.vae_ratio);
  return lm === null && vae === null ? null : (lm || 0) + (vae || 0);
}

/** Adds a point from a run's view (runs polled but not selected). */
export function record(run, t) {
  const id = runIdOf(run);
  if (!id || !run.observed) { return; }
  const buffer = state.history[id] || (state.history[id] = []);
  buffer.push(pointOf(run, t, null));
  if (buffer.length > MAX_POINTS) { buffer.splice(0, buffer.length - MAX_POINTS); }
}

// The collector's series replace the page's own buffer for their span; what the page recorded before stays, so a
// page left open keeps more than the collector's window.
const SERIES_POINTS = 600;           // the collector's default window at one point a second
const SERIES_FULL_EVERY_MS = 60000;  // between whole fetches, ask only for the last few seconds (since=…)
const SERIES_OVERLAP_SECONDS = 5;    // the newest entries may still be merging polls: fetch them again

/** The whole window now and then, else only what is new. */
export function seriesRequest(id) {
  const buffer = state.history[id] || [];
  const incremental = state.seriesFor === id && buffer.length > 0 && Date.now() - state.seriesFullAt < SERIES_FULL_EVERY_MS;
  const since = incremental ? Math.floor((buffer[buffer.length - 1].t - SERIES_OVERLAP_SECONDS) * 1000) : null;
  return { url: seriesUrl(id, SERIES_POINTS, since), full: !incremental };
}

/** The series answer as chart points, with the run's predictions from the answer (else from its view). */
export function seriesPoints(body, run) {
  const points = Array.isArray(body) ? body : (body && (body.points || body.series)) || [];
  const e = run.estimate || {};
  const predicted = (body && body.predicted) || {};
  const comparison = Object.assign({}, run.comparison || {});
  if (num(predicted.peak_memory_bytes) !== null) { comparison.predicted_peak_memory_bytes = predicted.peak_memory_bytes; }
  if (num(predicted.step_seconds) !== null) { comparison.predicted_step_seconds = predicted.step_seconds; }
  if (num(predicted.samples_per_second) !== null) { comparison.predicted_samples_per_second = predicted.samples_per_second; }
  if (body && num(body.capacity_bytes) !== null) { comparison.capacity_bytes = body.capacity_bytes; }
  return points.map((p) => {
    const t = toSeconds(p.ts !== undefined ? p.ts : p.t);
    const observed = Object.assign({}, p, { last_step: p.last_step !== undefined ? p.last_step : p.step });
    return pointOf({ observed: observed, estimate: e, comparison: comparison }, t, p.gpu_idle_ratio);
  }).filter((p) => p.t !== null);
}

export function mergeSeries(id, points) {
  if (!points.length) { return; }
  const older = (state.history[id] || []).filter((p) => p.t < points[0].t);
  state.history[id] = older.concat(points).slice(-MAX_POINTS);
  document.body.dataset.series = 'true';
}

