// trainwatch's live page: polls the collector's JSON API once a second and draws the runs with plain DOM and SVG.
// No framework, no build step and nothing fetched from the internet, so the page works on an air-gapped cluster.
import { num, fmtClock } from './format.js';
import { getJson, runsUrl, runUrl, historyUrl, plansUrl } from './api.js';
import { state, serverNow, runIdOf, isSynthetic, bySeverity, record, seriesRequest, seriesPoints, mergeSeries } from './store.js';
import { renderList } from './run-list.js';
import { renderRun } from './run-view.js';
import { renderHistory } from './history.js';

const POLL_MS = 1000;
const HISTORY_EVERY_MS = 5000;

function historyView() { return location.hash === '#/history'; }

function chooseSelected() {
  const fromHash = decodeURIComponent((location.hash.match(/^#\/runs\/(.+)$/) || [])[1] || '');
  const ids = state.runs.map(runIdOf);
  if (fromHash && ids.indexOf(fromHash) >= 0) { return fromHash; }
  if (state.selected && ids.indexOf(state.selected) >= 0) { return state.selected; }
  // With nothing chosen, show the run that most needs attention.
  const sorted = state.runs.slice().sort(bySeverity);
  return sorted.length ? runIdOf(sorted[0]) : null;
}

// A limit that refused new entries in the last 15 minutes (or is full) is said at the top: those runs, GPUs or
// agents are not watched, and the collector refused them rather than forget live ones.
const LIMIT_NOTICE_SECONDS = 900;
function showLimits(limits) {
  const now = Date.now() / 1000;
  const notes = limits.filter((l) => {
    const last = num(l.last_refused_ts);
    return l.limit !== 'ranks' && ((last !== null && now - last < LIMIT_NOTICE_SECONDS) || (num(l.used) !== null && l.used >= l.max));
  }).map((l) => {
    let text = l.limit.replace(/s$/, '') + ' limit full (' + l.used.toLocaleString('en-US') + ' of ' + l.max.toLocaleString('en-US') + ')';
    if (num(l.refused) > 0) {
      text += ': ' + l.refused.toLocaleString('en-US') + ' new ' + l.limit + ' refused';
      if (num(l.last_refused_ts) !== null) { text += ', last at ' + fmtClock(l.last_refused_ts); }
    }
    return text;
  });
  const banner = document.getElementById('limit-banner');
  banner.hidden = notes.length === 0;
  banner.textContent = notes.join(' · ');
  banner.title = notes.length ? 'Every slot holds a live entry, so new ones are refused (HTTP 429) instead of forgetting them; see trainwatch_limit_* in /metrics' : '';
}

// The GPUs a user renting hardware compares the run's own with (catalog ids, docs/API.md).
const PLAN_GPUS = ['a100-80gb', 'h100-sxm', 'h200', 'l40s', 'b200'];
const PLANS_EVERY_MS = 60000;

// The selected run on other hardware: asked when the run has a spec and an observed step, then once a minute.
function pollPlans(id, detail) {
  const o = detail.observed || {};
  if (!detail.estimate || num(o.step_seconds) === null) { return; }
  if (state.plans.for === id && Date.now() - state.plans.at < PLANS_EVERY_MS) { return; }
  const own = detail.estimate.gpu;
  const gpus = [own].concat(PLAN_GPUS.filter((g) => g !== own));
  state.plans = { for: id, at: Date.now(), body: state.plans.for === id ? state.plans.body : null, error: null };
  getJson(plansUrl(id, gpus)).then((body) => {
    if (state.plans.for === id) { state.plans.body = body; state.plans.error = null; render(); }
  }, (err) => {
    if (state.plans.for === id) { state.plans.error = (err.body && err.body.error) || err.message; render(); }
  });
}

function pollSelected(id) {
  return getJson(runUrl(id)).then((detail) => {
    state.detail = detail;
    pollPlans(id, detail);
    const request = seriesRequest(id);
    return getJson(request.url).then((body) => {
      mergeSeries(id, seriesPoints(body, detail));
      if (request.full) {
        state.seriesFor = id;
        state.seriesFullAt = Date.now();
      } else {
        document.body.dataset.seriesUpdates = String(Number(document.body.dataset.seriesUpdates || 0) + 1);
      }
    }, () => { /* asked again at the next poll */ });
  });
}

function poll() {
  clearTimeout(state.timer);
  getJson(runsUrl()).then((body) => {
    state.runs = Array.isArray(body) ? body : (body.runs || []);
    showLimits(Array.isArray(body) ? [] : (body.limits || []));
    const now = state.serverNow = serverNow(state.runs);
    if (historyView()) {
      if (Date.now() - state.historyAt < HISTORY_EVERY_MS && state.pastRuns) { return null; }
      return getJson(historyUrl()).catch((err) => ({ error: err.message })).then((history) => {
        state.pastRuns = history;
        state.historyAt = Date.now();
      });
    }
    state.selected = chooseSelected();
    // The selected run's points come from the collector's series; the others' the page records itself.
    state.runs.forEach((run) => { if (runIdOf(run) !== state.selected) { record(run, now); } });
    return state.selected ? pollSelected(state.selected) : null;
  }).then(() => {
    setConnection(true);
    render();
  }, (err) => {
    setConnection(false, err && err.message);
    render();
  }).then(() => {
    state.timer = setTimeout(poll, POLL_MS);
  });
}

function setConnection(ok, message) {
  const el = document.getElementById('connection');
  el.textContent = ok ? 'live · updated ' + fmtClock(Date.now() / 1000) : 'collector unreachable' + (message ? ': ' + message : '');
  el.className = ok ? 'connection' : 'connection down';
}

function render() {
  renderList();
  if (historyView()) {
    renderHistory(state.pastRuns, state.runs, () => { state.historyAt = 0; poll(); });
  } else {
    renderRun();
  }
  document.getElementById('synthetic-banner').hidden = !state.runs.some(isSynthetic);
  document.body.dataset.runs = String(state.runs.length);
}

window.addEventListener('hashchange', () => {
  state.selected = null;
  state.detail = null;
  state.historyAt = 0;
  render();
  poll();
});
poll();
