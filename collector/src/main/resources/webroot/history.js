// The history view (#/history): past runs with how far each prediction was off, the calibration it led to, alerts.
import { esc, num, fmtSeconds, fmtBytes, fmtDateTime, toSeconds } from './format.js';
import { calibrationRequest } from './api.js';
import { anomaliesOf } from './store.js';

// How far off a prediction was: observed / predicted as a signed percentage, coloured when it matters.
function offBy(ratio) {
  ratio = num(ratio);
  if (ratio === null) { return '–'; }
  const pct = (ratio - 1) * 100;
  const text = (pct >= 0 ? '+' : '') + pct.toFixed(0) + ' %';
  const cls = pct > 15 ? 'off-high' : pct < -15 ? 'off-low' : '';
  return '<span class="' + cls + '">' + esc(text) + '</span>';
}

// The alerts the history recorded, after the live runs' active anomalies it has not (yet). Returns {rows, unrecorded}.
function alertRows(h, runs) {
  const recorded = Array.isArray(h.alerts) ? h.alerts : [];
  const live = [];
  (runs || []).forEach((run) => {
    anomaliesOf(run).filter((a) => a.active !== false).forEach((a) => {
      const known = recorded.some((r) => r.run_id === run.run_id && r.kind === a.kind && num(r.resolved_at) === null);
      if (!known) {
        live.push({ since: toSeconds(a.since), run_id: run.run_id, kind: a.kind, severity: a.severity || 'warning',
          message: a.message, suggestion: a.suggestion, resolved_at: null });
      }
    });
  });
  live.sort((a, b) => (b.since || 0) - (a.since || 0));
  // An episode the history closed when its run ended was not fixed: the live run says so (ended_with_run).
  const marked = recorded.map((r) => endedWithRun(r, runs) ? Object.assign({}, r, { ended_with_run: true }) : r);
  return { rows: live.concat(marked), unrecorded: live.length };
}

function endedWithRun(row, runs) {
  const closed = num(row.resolved_at);
  return closed !== null && (runs || []).some((run) => run.run_id === row.run_id &&
    anomaliesOf(run).some((a) => a.kind === row.kind && a.ended_with_run === true &&
      Math.abs(toSeconds(a.resolved_at) - closed) < 2));
}

// Draws GET /v1/history (h) into #run; onChange is called after a calibration change was accepted.
export function renderHistory(h, liveRuns, onChange) {
  const section = document.getElementById('run');
  if (!h) { section.innerHTML = '<p class="muted">Loading history…</p>'; return; }
  if (h.error) { section.innerHTML = '<p class="muted">History unavailable: ' + esc(h.error) + '</p>'; return; }
  let html = '<div class="run-head"><h2>History</h2></div>';
  if (!h.persistent) {
    html += '<p class="muted">This collector keeps no history: start it with <code>--data-dir DIR</code> to remember runs, ' +
      'alerts and calibration across restarts.</p>';
  }
  const runs = Array.isArray(h.runs) ? h.runs : [];
  html += '<h2>Past runs: prediction against what happened</h2>';
  html += runs.length ? '<table class="history" data-table="runs"><thead><tr><th>run</th><th>last seen</th><th>step</th>' +
    '<th>s/step observed</th><th>predicted</th><th>off by</th><th>peak VRAM</th><th>predicted</th><th>off by</th></tr></thead><tbody>' +
    runs.map((r) => '<tr><td>' + esc(r.run_id) + (r.synthetic ? ' <span class="chip synthetic">synthetic (demo)</span>' : '') +
        (num(r.ended_at) !== null ? ' <span class="chip state">ended</span>' : '') + '</td>' +
        '<td class="time">' + (num(r.last_seen) !== null ? esc(fmtDateTime(r.last_seen)) : '–') + '</td>' +
        '<td>' + esc(num(r.last_step) !== null ? r.last_step : '–') + '</td>' +
        '<td>' + esc(fmtSeconds(r.step_seconds)) + '</td><td>' + esc(fmtSeconds(r.predicted_step_seconds)) + '</td>' +
        '<td class="num">' + offBy(r.step_time_error_ratio) + '</td>' +
        '<td>' + esc(fmtBytes(r.peak_memory_bytes)) + '</td><td>' + esc(fmtBytes(r.predicted_peak_memory_bytes)) + '</td>' +
        '<td class="num">' + offBy(r.memory_error_ratio) + '</td></tr>').join('') + '</tbody></table>' :
    '<p class="muted">No runs recorded yet.</p>';
  const calibration = Array.isArray(h.calibration) ? h.calibration : [];
  html += '<h2>Calibration</h2>';
  const runButtons = (ids, action, label) => (ids || []).map((id) =>
    '<button type="button" class="calibration-action" data-method="POST" data-path="v1/calibration/runs/' +
    encodeURIComponent(id) + '/' + action + '" title="' + esc(label + ' ' + id) + '">' + esc(id) + ' ' + esc(label === 'leave out' ? '✕' : '↺') + '</button>').join(' ');
  html += calibration.length ? '<table class="history" data-table="calibration"><thead><tr><th>GPU</th><th>model family</th>' +
    '<th>step time factor</th><th>memory factor</th><th>runs (click to leave one out)</th><th>outliers</th><th>left out</th><th></th></tr></thead><tbody>' +
    calibration.map((c) => {
      const applied = c.applied !== false;
      return '<tr data-applied="' + applied + '"><td>' + esc(c.gpu) + '</td><td>' + esc(c.family) + '</td><td>' +
        (applied ? '×' + esc(Number(c.step_time_factor).toFixed(2)) : 'not applied: ' + esc((c.used_runs || []).length) + ' of ' + esc(c.min_runs || 3) + ' runs') +
        '</td><td>' + (applied ? '×' + esc(Number(c.memory_factor).toFixed(2)) : '–') + '</td>' +
        '<td>' + runButtons(c.used_runs, 'exclude', 'leave out') + '</td>' +
        '<td>' + esc((c.outlier_runs || []).join(', ') || '–') + '</td>' +
        '<td>' + runButtons(c.excluded_runs, 'include', 'count again') + '</td>' +
        '<td><button type="button" class="calibration-action" data-method="DELETE" data-path="v1/calibration/' +
        encodeURIComponent(c.gpu) + '/' + encodeURIComponent(c.family) + '">reset</button></td></tr>';
    }).join('') + '</tbody></table><p class="muted" id="calibration-status"></p>' :
    '<p class="muted">None yet: once three finished runs of a GPU and model family agree, they move its estimates.</p>';
  const { rows: alerts, unrecorded } = alertRows(h, liveRuns);
  html += '<h2>Alerts</h2>';
  if (unrecorded) {
    html += '<p class="muted" data-unrecorded="' + unrecorded + '">' + unrecorded + ' active alert' + (unrecorded === 1 ? '' : 's') +
      ' from the live runs ' + (h.persistent ? (unrecorded === 1 ? 'is' : 'are') + ' not recorded yet.'
        : 'listed here: this collector records none (start it with <code>--data-dir DIR</code> to keep them).') + '</p>';
  }
  html += alerts.length ? '<table class="history" data-table="alerts"><thead><tr><th>since</th><th>run</th><th>kind</th><th>severity</th>' +
    '<th>resolved</th><th>message</th></tr></thead><tbody>' + alerts.map((a) =>
      '<tr><td class="time">' + esc(fmtDateTime(a.since)) + '</td><td>' + esc(a.run_id) +
      '</td><td>' + esc(a.kind) + '</td><td><span class="chip ' + esc(a.severity) + '">' + esc(a.severity) + '</span></td><td class="time">' +
      (a.ended_with_run ? 'unresolved when the run ended' : num(a.resolved_at) !== null ? esc(fmtDateTime(a.resolved_at))
        : 'active') + '</td><td>' +
      esc(a.message || '') + (a.suggestion ? '<div class="muted">' + esc(a.suggestion) + '</div>' : '') + '</td></tr>').join('') +
    '</tbody></table>' : '<p class="muted">No alerts recorded.</p>';
  section.innerHTML = html;
  section.querySelectorAll('button.calibration-action').forEach((button) => {
    button.addEventListener('click', () => calibrationAction(button.getAttribute('data-method'), button.getAttribute('data-path'), onChange));
  });
  document.body.dataset.history = 'true';
}

// Leave a run out of calibration, count it again, or reset a group. A collector with a bearer token refuses the
// page (it holds no token): say how to do it with curl instead.
function calibrationAction(method, path, onChange) {
  const status = document.getElementById('calibration-status');
  const say = (text) => { if (status) { status.textContent = text; } };
  calibrationRequest(method, path).then((answer) => {
    if (answer.ok) {
      say('Done; estimates priced from now on use the new calibration.');
      onChange();
      return;
    }
    say(answer.status === 401
      ? 'This collector needs its bearer token for changes: curl -X ' + method + ' -H "Authorization: Bearer $(cat TOKEN_FILE)" ' + location.origin + '/' + path
      : 'Refused: ' + answer.message);
  }, () => say('The collector did not answer.'));
}
