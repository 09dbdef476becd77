// The sidebar: every run, the ones that need attention first, each with its state and anomaly chips.
import { esc, num, specLine } from './format.js';
import { state, runIdOf, isSynthetic, activeAnomalies, stateOf, stateLabel, bySeverity, calmState } from './store.js';

export function renderList() {
  const ul = document.getElementById('runs');
  document.getElementById('no-runs').hidden = state.runs.length > 0;
  ul.innerHTML = state.runs.slice().sort(bySeverity).map((run) => {
    const id = runIdOf(run);
    const o = run.observed || {};
    const chips = activeAnomalies(run).map((a) => '<span class="chip ' + esc(a.severity || 'warning') + '">' + esc(a.kind) + '</span>');
    if (!chips.length) {
      const calm = calmState(run);
      chips.push('<span class="chip ' + (calm.chip === 'no active anomalies' ? 'ok' : 'muted') + '">' + esc(calm.chip) + '</span>');
    }
    if (isSynthetic(run)) { chips.unshift('<span class="chip synthetic">synthetic (demo)</span>'); }
    const step = num(o.last_step) !== null ? 'step ' + o.last_step : 'no steps yet';
    return '<li class="state-' + esc(stateOf(run)) + (id === state.selected ? ' selected' : '') + '" data-run-id="' + esc(id) + '">' +
      '<a href="#/runs/' + encodeURIComponent(id) + '">' +
      '<div class="run-id">' + esc(id) + '</div>' +
      '<div class="run-meta">' + esc(stateLabel(run)) + ' · ' + esc(step) + ' · ' + esc(specLine(run.spec, run.estimate)) + '</div>' +
      '<div class="chips">' + chips.join('') + '</div></a></li>';
  }).join('');
}
