// One run: its tiles, anomalies, where the time went, live charts and GPUs.
import {
  GIB, esc, num, first, fmtBytes, fmtTimes, fmtDateTime, fmtSeconds, fmtRatio, fmtPercent, fmtRate, fmtDuration, fmtGpuHours, fmtMoney,
  fmtEnergy, fmtSince, fmtEvidence, specLine
} from './format.js';
import {
  state, now, runIdOf, isSynthetic, anomaliesOf, worstSeverity, stateLabel, calmState, predictedPeak,
  predictedStep, predictedThroughput, capacityOf, encodingRatio
} from './store.js';
import { chart } from './charts.js';

function tile(label, value, sub, tone) {
  return '<div class="tile' + (tone ? ' ' + tone : '') + '"><div class="label">' + esc(label) + '</div><div class="value">' +
    esc(value) + '</div>' + (sub ? '<div class="sub">' + esc(sub) + '</div>' : '') + '</div>';
}

// "12 % where this model reaches 30 % on this GPU": observed MFU beside the prediction's.
function mfuSub(o, c) {
  const parts = [];
  if (num(c.predicted_mfu_ratio) !== null) { parts.push('predicted ' + fmtPercent(c.predicted_mfu_ratio)); }
  if (num(o.hfu_ratio) !== null && num(o.mfu_ratio) !== null && o.hfu_ratio > o.mfu_ratio * 1.01) { parts.push('HFU ' + fmtPercent(o.hfu_ratio)); }
  // The hardware's own figure (tensor pipes busy, GPM) beside the FLOP model's: far apart, the spec is wrong.
  if (num(o.hardware_mfu_ratio) !== null) { parts.push('hardware ' + fmtPercent(o.hardware_mfu_ratio)); }
  return parts.length ? parts.join(' · ') : (num(o.mfu_ratio) === null ? 'needs a spec and steps' : null);
}
function mfuTone(o, c) {
  const m = num(o.mfu_ratio), p = num(c.predicted_mfu_ratio);
  return m !== null && p !== null && m < 0.67 * p ? 'warn' : '';
}

const WALL_LABELS = { productive: 'training', startup: 'start-up', data_wait: 'data wait', encoding: 'online encoding',
  stall: 'stalled', checkpoint: 'checkpoints', evaluation: 'evaluation', lost_work: 'repeated after restart',
  idle: 'idle', pending: 'since the last report' };
const WALL_COLORS = { productive: 'var(--ok)', startup: '#98a2b3', data_wait: 'var(--warning)', encoding: '#f5b971',
  stall: 'var(--critical)', checkpoint: '#7f9cf5', evaluation: '#b794f4', lost_work: '#e57373', idle: '#d0d5dd', pending: '#eaecf0' };
const WALL_ORDER = ['productive', 'startup', 'data_wait', 'encoding', 'stall', 'checkpoint', 'evaluation', 'lost_work', 'idle', 'pending'];

function goodputSub(w) {
  if (!w) { return null; }
  let worst = null;
  Object.keys(w).forEach((k) => {
    if (k !== 'productive' && k !== 'pending' && (worst === null || w[k] > w[worst])) { worst = k; }
  });
  const lost = worst === null ? 0 : num(w[worst]) || 0;
  const pending = num(w.pending) || 0;
  // The time since the newest report is not lost yet; when it is the larger part, that is what keeps goodput low.
  if (pending >= 1 && pending >= lost) { return fmtDuration(pending) + ' since the last report, not yet explained'; }
  return lost >= 1 ? 'most lost to ' + WALL_LABELS[worst] + ' (' + fmtDuration(lost) + ')' : 'of the wall time';
}
function energySub(o, c) {
  const parts = [];
  if (num(o.gpu_hours) !== null) { parts.push(fmtGpuHours(o.gpu_hours)); }
  if (num(o.cost) !== null) { parts.push('cost ' + fmtMoney(o.cost)); }
  if (num(c.projected_energy_joules) !== null) { parts.push(fmtEnergy(c.projected_energy_joules) + ' by the end'); }
  return parts.join(' · ') || null;
}

// Where the run's wall time went: one bar split by reason, with the seconds of each part.
function wallBar(w) {
  if (!w) { return ''; }
  const total = Object.keys(w).reduce((sum, k) => sum + (num(w[k]) || 0), 0);
  if (!(total > 0)) { return ''; }
  const parts = WALL_ORDER.filter((k) => num(w[k]) !== null && w[k] > 0);
  return '<h2>Where the time went</h2><div class="wall" data-total="' + esc(total.toFixed(0)) + '"><div class="wall-bar">' +
    parts.map((k) => '<span class="wall-part" data-reason="' + esc(k) + '" style="width:' + (100 * w[k] / total).toFixed(2) +
      '%;background:' + WALL_COLORS[k] + '" title="' + esc(WALL_LABELS[k] + ': ' + fmtDuration(w[k])) + '"></span>').join('') +
    '</div><div class="wall-legend">' + parts.map((k) =>
      '<span><i style="background:' + WALL_COLORS[k] + '"></i>' + esc(WALL_LABELS[k]) + ' ' + esc(fmtDuration(w[k])) +
      ' (' + (100 * w[k] / total).toFixed(0) + ' %)</span>').join('') + '</div></div>';
}

export function etaSeconds(run) {
  const o = run.observed || {}, spec = run.spec || {};
  const eta = first((run.comparison || {}).eta_seconds, o.eta_seconds);
  if (eta !== null) { return eta; }
  const total = num(spec.total_steps), last = num(o.last_step), step = num(o.step_seconds);
  if (total === null || last === null || step === null) { return null; }
  return Math.max(0, total - last) * step;
}

export function renderRun() {
  const section = document.getElementById('run');
  const run = state.detail;
  if (!state.selected || !run || runIdOf(run) !== state.selected) {
    section.innerHTML = '<p class="muted">' + (state.runs.length ? 'Loading…' : 'Select a run.') + '</p>';
    return;
  }
  const id = runIdOf(run);
  const o = run.observed || {}, e = run.estimate || {}, c = run.comparison || {}, spec = run.spec || {};
  const stepRatio = num(c.step_time_ratio);
  const memoryRatio = num(c.memory_ratio);
  const capacity = capacityOf(run);
  const headroom = num(c.headroom_bytes);
  const total = num(spec.total_steps);
  const wall = o.wall_seconds || null;
  const points = state.history[id] || [];
  const encoding = first(encodingRatio(o), ...points.slice(-1).map((p) => p.encoding));
  const tiles = [
    tile('Step', num(o.last_step) !== null ? String(o.last_step) : '–',
      total !== null && num(o.last_step) !== null ? 'of ' + total + ' (' + (100 * o.last_step / total).toFixed(1) + ' %)' : null),
    tile('Seconds per step', fmtSeconds(o.step_seconds), 'predicted ' + fmtSeconds(predictedStep(run)) +
      (stepRatio !== null ? ' · ' + fmtTimes(stepRatio, 2) : ''), stepRatio !== null && stepRatio > 1.5 ? 'bad' : stepRatio !== null && stepRatio > 1.2 ? 'warn' : ''),
    tile('VRAM (peak)', fmtBytes(num(o.peak_memory_bytes) !== null ? o.peak_memory_bytes : o.memory_used_bytes),
      'predicted ' + fmtBytes(predictedPeak(run)) + ' of ' + fmtBytes(capacity) +
      (headroom !== null ? ' · ' + fmtBytes(headroom) + ' free' : ''),
      headroom !== null && capacity && headroom < 0.05 * capacity ? 'bad' : memoryRatio !== null && memoryRatio > 1.1 ? 'warn' : ''),
    tile('GPU utilisation', fmtRatio(o.gpu_utilization_ratio), 'last minute', num(o.gpu_utilization_ratio) !== null && o.gpu_utilization_ratio < 0.6 ? 'warn' : ''),
    tile('Data wait', fmtRatio(o.data_wait_ratio), num(o.data_wait_ratio) === null && encoding === null && num(o.step_seconds) !== null
      ? 'the log does not report data time' : 'of each step' + (encoding !== null ? ' · online encoding ' + fmtRatio(encoding) : ''),
      num(o.data_wait_ratio) !== null && o.data_wait_ratio > 0.3 ? 'warn' : ''),
    tile('Samples per second', fmtRate(o.samples_per_second), 'predicted ' + fmtRate(predictedThroughput(run))),
    tile('ETA', fmtDuration(etaSeconds(run)), total === null ? 'no total_steps in the spec' : 'at the observed pace' +
      (num(c.projected_gpu_hours) !== null ? ' · ' + fmtGpuHours(c.projected_gpu_hours) + ' in all' : '') +
      (num(c.projected_cost) !== null ? ' · cost ' + fmtMoney(c.projected_cost) : '')),
    tile('Loss', o.loss_nonfinite ? 'NaN' : (num(o.loss) !== null ? o.loss.toPrecision(4) : '–'),
      num(o.loss_nonfinite_reports) !== null ? o.loss_nonfinite_reports + ' report' + (o.loss_nonfinite_reports === 1 ? '' : 's') +
        ' not finite' + (num(o.loss) !== null ? ' · last finite ' + o.loss.toPrecision(4) : '') : 'newest report',
      o.loss_nonfinite ? 'bad' : ''),
    o.spec_mismatch ? tile('MFU', 'spec mismatch', o.spec_mismatch, 'warn')
      : tile('MFU', fmtPercent(o.mfu_ratio), mfuSub(o, c), mfuTone(o, c)),
    tile('Goodput', fmtPercent(o.goodput_ratio), goodputSub(wall), num(o.goodput_ratio) !== null && o.goodput_ratio < 0.5 ? 'warn' : ''),
    tile('Energy', fmtEnergy(o.energy_joules), energySub(o, c))
  ];

  const empty = emptyTexts(run, points);
  const charts = [
    chart('vram', 'VRAM: observed vs predicted vs capacity', points, [
      { key: 'memory', label: 'observed', color: 'var(--accent)' },
      { key: 'memoryPredicted', label: 'predicted peak', color: 'var(--predicted)', dashed: true },
      { key: 'capacity', label: 'capacity', color: 'var(--capacity)', dashed: true }
    ], { format: fmtBytes, min: 0, unit: GIB, empty: empty.other }),
    chart('step-time', 'Step time: observed vs predicted', points, [
      { key: 'step', label: 'observed s/step', color: 'var(--accent)' },
      { key: 'stepPredicted', label: 'predicted', color: 'var(--predicted)', dashed: true }
    ], { format: fmtSeconds, min: 0, empty: empty.other }),
    chart('utilization', 'GPU utilisation and idle gaps', points, [
      { key: 'utilization', label: 'utilisation (mean of the run\'s GPUs)', color: 'var(--accent)' },
      { key: 'utilizationMin', label: 'lowest buffered sample', color: '#98a2b3', dashed: true }
    ], { format: fmtRatio, min: 0, max: 1, idleBands: true, empty: empty.other }),
    chart('data-wait', 'Data wait and online encoding, share of each step', points, [
      { key: 'dataWait', label: dataWaitLabel(run), color: 'var(--warning)' },
      { key: 'encoding', label: 'online encoding (text encoder, VAE), where the log reports it apart', color: '#f5b971' }
    ], { format: fmtRatio, min: 0, max: 1, empty: empty.dataWait }),
    chart('throughput', 'Throughput (samples/s) · ETA ' + fmtDuration(etaSeconds(run)), points, [
      { key: 'throughput', label: 'observed', color: 'var(--ok)' },
      { key: 'throughputPredicted', label: 'predicted', color: 'var(--predicted)', dashed: true }
    ], { format: fmtRate, min: 0, empty: empty.throughput })
  ];

  const anomalies = anomaliesOf(run).slice().sort((a, b) =>
    (b.active !== false) - (a.active !== false) || (a.severity === 'critical' ? -1 : 0) - (b.severity === 'critical' ? -1 : 0));
  const calm = calmState(run);
  const anomalyHtml = anomalies.length ? anomalies.map(renderAnomaly).join('') :
    '<p class="muted calm" data-calm="' + esc(calm.chip) + '">' + esc(calm.text) + '</p>';

  section.innerHTML =
    '<div class="run-head"><h2>' + esc(id) + '</h2>' +
    (isSynthetic(run) ? '<span class="chip synthetic">synthetic (demo)</span>' : '') +
    '<span class="chip ' + esc(worstSeverity(run)) + '">' + esc(stateLabel(run)) + '</span></div>' +
    '<div class="run-spec">' + esc(specLine(spec, e)) + '</div>' +
    (Array.isArray(spec.notes) && spec.notes.length ? '<ul class="spec-notes">' +
      spec.notes.map((n) => '<li>' + esc(n) + '</li>').join('') + '</ul>' : '') +
    (run.ended === true && run.ending && run.ending.message
      ? '<div class="run-ending" data-ending="no-cause">The run ' + esc(run.ending.message) + '.</div>' : '') +
    (run.phase ? '<div class="run-phase" data-phase="' + esc(run.phase.kind) + '">' + esc(phaseLine(run.phase)) +
      '</div>' : '') +
    '<div class="tiles">' + tiles.join('') + '</div>' +
    '<h2>Anomalies</h2><div class="anomalies">' + anomalyHtml + '</div>' + wallBar(wall) +
    '<h2>Live</h2><div class="charts">' + charts.join('') + '</div>' + gpuTable(run) + plansTable(id);

  const drawn = section.querySelectorAll('svg.plot[data-points]');
  const withData = Array.prototype.filter.call(drawn, (svg) => Number(svg.getAttribute('data-points')) > 0);
  if (drawn.length === charts.length && withData.length > 0) {
    document.body.dataset.ready = 'true';
  }
}

// What an empty chart says: "waiting for data…" only while data can still come.
function emptyTexts(run, points) {
  const ended = run.ended === true;
  const endedText = 'the run ended' + (num(run.ended_at) !== null ? ' at ' + fmtDateTime(run.ended_at) : '') +
    (run.ending ? ': ' + run.ending.message : '') + ' with nothing to draw here';
  const other = ended ? endedText : 'waiting for data…';
  const reported = points.some((p) => p.step !== null);
  return {
    other: other,
    dataWait: reported ? 'this run\'s log does not report data time' : other,
    throughput: reported ? 'no throughput: the log reports no samples and the run has no spec with a batch' : other
  };
}

// "SM 91 % · tensor 60 % · NVLink 12 GB/s": what the SMs do, where the GPU counts it (GPM); utilisation only says a
// kernel ran, so a GPU spinning in a collective reads 100 % there and shows idle tensor pipes here.
function activityText(g) {
  const parts = [];
  if (num(g.sm_active_ratio) !== null) { parts.push('SM ' + fmtRatio(g.sm_active_ratio)); }
  if (num(g.tensor_active_ratio) !== null) { parts.push('tensor ' + fmtRatio(g.tensor_active_ratio)); }
  if (num(g.dram_active_ratio) !== null) { parts.push('DRAM ' + fmtRatio(g.dram_active_ratio)); }
  if (num(g.nvlink_bytes_per_second) !== null) { parts.push('NVLink ' + (g.nvlink_bytes_per_second / 1e9).toFixed(1) + ' GB/s'); }
  return parts.length ? parts.join(' · ') : '–';
}

// The run on other GPUs, re-priced from its own steps (GET /v1/runs/{id}/plans), for a user deciding what to rent.
function plansTable(id) {
  const p = state.plans;
  if (p.for !== id || (!p.body && !p.error)) { return ''; }
  if (!p.body) { return '<h2>On other GPUs</h2><p class="muted plans-error">' + esc(p.error) + '</p>'; }
  const plans = Array.isArray(p.body.plans) ? p.body.plans : [];
  const rows = plans.map((x, i) => '<tr data-plan-gpu="' + esc(x.gpu) + '"' + (i === 0 ? ' class="own"' : '') + '>' +
    '<td>' + esc(x.gpus + ' × ' + x.gpu) + (i === 0 ? ' (this run)' : '') + '</td>' +
    '<td>' + (x.fits ? 'yes' : 'no') + '</td>' +
    '<td>' + esc(x.grad_accumulation > 1 ? x.batch + ' × ' + x.grad_accumulation : String(x.batch)) + '</td>' +
    '<td>' + esc(fmtSeconds(x.step_seconds)) + '</td><td>' + esc(fmtRate(x.samples_per_second)) + '</td>' +
    '<td>' + esc(num(x.remaining_seconds) !== null ? fmtDuration(x.remaining_seconds) + ' left'
      : num(x.total_seconds) !== null ? fmtDuration(x.total_seconds) : '–') + '</td>' +
    '<td>' + esc(num(x.cost) !== null ? fmtMoney(x.cost) : '–') + '</td>' +
    '<td class="muted">' + esc(x.note || '') + '</td></tr>').join('');
  const anchor = plans.length && num(plans[0].anchor) !== null ? ' (its GPU work took ' + fmtTimes(plans[0].anchor, 2) +
    ' the time the estimator gives it)' : '';
  return '<h2>On other GPUs</h2><p class="muted">Re-priced from this run\'s own steps' + esc(anchor) +
    ', as trainwatch estimate --from-run does.</p><table class="plans"><thead><tr><th>GPUs</th><th>fits</th>' +
    '<th>batch</th><th>step</th><th>samples/s</th><th>to finish</th><th>cost</th><th></th></tr></thead><tbody>' +
    rows + '</tbody></table>';
}

function gpuTable(run) {
  const gpus = Array.isArray(run.gpus) ? run.gpus : [];
  if (!gpus.length) { return ''; }
  const counters = gpus.some((g) => num(g.sm_active_ratio) !== null || num(g.nvlink_bytes_per_second) !== null);
  const rows = gpus.map((g) => {
    const clock = num(g.sm_clock_ratio), util = num(g.utilization_ratio);
    const slow = clock !== null && clock < 0.9;
    return '<tr' + (g.lost ? ' class="lost"' : slow ? ' class="slow"' : '') + '><td>' + esc(g.host || '') + '</td><td>' + esc(g.index) + '</td>' +
      '<td>' + esc(g.name || '') + '</td><td>' + esc((g.ranks || []).join(', ')) + '</td>' +
      '<td>' + esc(fmtBytes(g.memory_used_bytes)) + ' / ' + esc(fmtBytes(g.memory_total_bytes)) + '</td>' +
      '<td>' + esc(fmtBytes(g.peak_memory_bytes)) + '</td><td>' + esc(fmtRatio(util)) + '</td>' +
      (counters ? '<td>' + esc(activityText(g)) + '</td>' : '') +
      '<td>' + esc(fmtRatio(clock)) + (slow ? ' ⚠' : '') + '</td><td>' + (g.lost ? 'lost' : 'ok') + '</td>' +
      '<td>' + esc(processText(g.process)) + '</td></tr>';
  });
  return '<h2>GPUs</h2><table class="gpus"><thead><tr><th>host</th><th>GPU</th><th>name</th><th>ranks</th><th>memory</th>' +
    '<th>peak</th><th>utilisation (1 min)</th>' + (counters ? '<th>what the SMs do (1 min)</th>' : '') + '<th>SM clock / max</th><th>state</th><th>rank process</th></tr></thead><tbody>' +
    rows.join('') + '</tbody></table>' + hostMemoryText(run);
}

const PROCESS_STATES = { R: 'running', S: 'sleeping', D: 'in I/O', Z: 'zombie', T: 'stopped' };
// "running · 1.0 cores · 6.0 GiB + 4 workers 9.0 GiB": what a hung or leaking rank looks like at a glance.
function processText(p) {
  if (!p) { return '–'; }
  // An agent that knows the rank's pid but not its state (the demo's, or /proc unreadable) says the pid.
  const known = PROCESS_STATES[p.state] || p.state;
  const parts = [known || (num(p.pid) !== null ? 'pid ' + p.pid : '–')];
  if (num(p.cpu_ratio) !== null) { parts.push(p.cpu_ratio.toFixed(1) + ' cores'); }
  if (num(p.rss_bytes) !== null) {
    parts.push(fmtBytes(p.rss_bytes) + (num(p.workers) !== null && p.workers > 0
      ? ' + ' + p.workers + ' workers ' + fmtBytes(p.workers_rss_bytes) : ''));
  }
  return parts.join(' · ');
}

function hostMemoryText(run) {
  const hosts = Array.isArray(run.host_memory) ? run.host_memory : [];
  if (!hosts.length) { return ''; }
  return '<p class="muted host-memory">' + hosts.map((h) => {
    let line = esc(h.host) + ': ' + esc(fmtBytes(h.mem_available_bytes)) + ' of ' + esc(fmtBytes(h.mem_total_bytes)) + ' RAM available';
    if (num(h.shm_total_bytes) !== null && h.shm_total_bytes > 0) {
      line += ' · /dev/shm ' + esc(fmtBytes(h.shm_used_bytes)) + ' of ' + esc(fmtBytes(h.shm_total_bytes));
    }
    return line;
  }).join('<br>') + '</p>';
}

/** PixArt's time_data holds its online T5 and VAE encoding; other logs time the loader alone. */
function dataWaitLabel(run) {
  const model = String((run.spec && run.spec.model) || (run.estimate && run.estimate.model) || '');
  return model.startsWith('pixart') ? 'data wait (PixArt\'s time_data: includes its online encoding)' : 'data wait';
}

function renderAnomaly(a) {
  const ev = a.evidence;
  const terms = ev && typeof ev === 'object' && !Array.isArray(ev) ? Object.keys(ev).map((k) => [k.replace(/_/g, ' '), fmtEvidence(k, ev[k])])
    : ev !== undefined && ev !== null ? [['evidence', fmtEvidence('', ev)]] : null;
  const evidence = terms ? '<dl class="evidence">' + terms.map(([dt, dd]) => '<div><dt>' + esc(dt) + '</dt><dd>' + esc(dd) + '</dd></div>').join('') + '</dl>' : '';
  const active = a.active !== false;
  const unfixed = !active && a.ended_with_run === true;
  const state = active ? 'active ' : unfixed ? 'unresolved when the run ended · since ' : 'resolved · was ';
  return '<article class="anomaly ' + esc(a.severity || 'warning') + (active || unfixed ? '' : ' resolved') +
    (unfixed ? ' ended-with-run' : '') + '" data-kind="' + esc(a.kind) + '">' +
    '<div class="title"><span class="kind">' + esc(a.kind) + '</span>' +
    '<span class="chip ' + esc(a.severity || 'warning') + '">' + esc(a.severity || 'warning') + '</span>' +
    '<span class="muted">' + state + esc(fmtSince(a.since, now())) + '</span></div>' +
    (a.message ? '<div class="message">' + esc(a.message) + '</div>' : '') + evidence +
    (a.suggestion ? '<div class="suggestion">' + esc(a.suggestion) + '</div>' : '') + '</article>';
}

/** "caching 504/14080 (0.6/s)": the phase the log announced last, with its bar's progress. */
function phaseLine(phase) {
  const p = phase.progress;
  return phase.kind + (p ? ' ' + p.done + (p.total != null ? '/' + p.total : '') +
    (num(p.per_second) !== null ? ' (' + fmtRate(p.per_second) + '/s)' : '') : '');
}
