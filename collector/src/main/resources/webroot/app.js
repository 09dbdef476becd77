// trainwatch's live page: polls the collector's JSON API and draws the runs with plain DOM and SVG.
// No framework and nothing fetched from the internet, so the page works on an air-gapped cluster.
(function () {
  'use strict';

  var POLL_MS = 1000;
  var MAX_POINTS = 1800;          // 30 minutes at one point a second
  var MIN_WINDOW_SECONDS = 60;    // a chart spans at least this much time, so the first points do not fill it
  var IDLE_UTILIZATION = 0.2;     // below this the GPU counts as idle in the utilisation chart's shaded gaps
  var GIB = 1024 * 1024 * 1024;

  var state = {
    runs: [],
    detail: null,
    selected: null,
    history: {},            // run id -> [point], the client-side rolling buffer
    seriesEndpoint: true,   // set false once the collector shows it has no /v1/runs/{id}/series (unknownRunError)
    seriesFor: null,        // the run whose whole series was fetched last, and when (ms): later polls ask only
    seriesFullAt: 0,        // for what is new
    metricsEndpoint: true,  // set false when /metrics is missing or too large to read every second
    serverNow: null,        // the collector's idea of now (its clock may differ from the browser's)
    timer: null,
    pastRuns: null,         // the body of GET /v1/history while the history view is open
    historyAt: 0            // when it was fetched (ms), to re-read it every few seconds only
  };
  var HISTORY_EVERY_MS = 5000;

  function historyView() { return location.hash === '#/history'; }

  // ---------- helpers ----------

  function esc(value) {
    return String(value).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function runIdOf(run) { return run.run_id || run.id || (run.spec && run.spec.run_id) || ''; }
  function isSynthetic(run) {
    var id = runIdOf(run);
    return run.synthetic === true || (run.labels && (run.labels.synthetic === true || run.labels.synthetic === 'true')) ||
      id.indexOf('demo-') === 0;
  }
  function anomaliesOf(run) { return Array.isArray(run.anomalies) ? run.anomalies : []; }
  function activeAnomalies(run) { return anomaliesOf(run).filter(function (a) { return a.active !== false; }); }
  function worstSeverity(run) {
    var active = activeAnomalies(run);
    if (active.some(function (a) { return a.severity === 'critical'; })) { return 'critical'; }
    return active.length ? 'warning' : 'ok';
  }
  function stateOf(run) {
    if (run.ended === true) { return 'ended'; }
    var s = typeof run.state === 'string' ? run.state : null;
    if (s && s !== 'running' && s !== 'active') { return s; }
    return worstSeverity(run);
  }
  function stateLabel(run) {
    var s = stateOf(run);
    return { ok: 'healthy', warning: 'warning', critical: 'critical' }[s] || s;
  }

  function fmtBytes(b) {
    b = num(b);
    if (b === null) { return '–'; }
    if (b === 0 || Math.abs(b) >= GIB) { return (b / GIB).toFixed(b === 0 ? 0 : 1) + ' GiB'; }
    return (b / (1024 * 1024)).toFixed(0) + ' MiB';
  }
  function fmtSeconds(s) {
    s = num(s);
    if (s === null) { return '–'; }
    return s < 10 ? s.toFixed(2) + ' s' : s.toFixed(1) + ' s';
  }
  function fmtRatio(r) { r = num(r); return r === null ? '–' : (r * 100).toFixed(0) + ' %'; }
  function fmtRate(r) { r = num(r); return r === null ? '–' : (r >= 100 ? r.toFixed(0) : r.toFixed(1)); }
  function fmtDuration(s) {
    s = num(s);
    if (s === null || s < 0) { return '–'; }
    var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    if (d > 0) { return d + 'd ' + h + 'h'; }
    if (h > 0) { return h + 'h ' + m + 'm'; }
    if (m > 0) { return m + 'm ' + Math.floor(s % 60) + 's'; }
    return Math.floor(s) + 's';
  }
  function toSeconds(t) {
    if (typeof t === 'number') { return t > 1e12 ? t / 1000 : t; }
    if (typeof t === 'string') { var ms = Date.parse(t); return isNaN(ms) ? null : ms / 1000; }
    return null;
  }
  function fmtClock(t) {
    var d = new Date(t * 1000);
    function two(n) { return (n < 10 ? '0' : '') + n; }
    return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds());
  }
  function fmtSince(t) {
    var s = toSeconds(t);
    if (s === null) { return ''; }
    var now = state.serverNow !== null ? state.serverNow : Date.now() / 1000;
    return 'since ' + fmtClock(s) + ' (' + fmtDuration(Math.max(0, now - s)) + ' ago)';
  }
  // Evidence values carry their unit in their key, as the API's names do.
  function fmtEvidence(key, value) {
    if (typeof value === 'number') {
      if (/_bytes$/.test(key)) { return fmtBytes(value); }
      if (/_bytes_per_second$/.test(key)) { return fmtBytes(value * 60) + '/min'; }
      if (/^seconds_/.test(key)) { return fmtDuration(value); }
      if (/_ratio$|_share$|_fraction$/.test(key)) { return fmtRatio(value); }
      if (/_seconds$|_s$/.test(key)) { return fmtSeconds(value); }
      if (/_hz$/.test(key)) { return (value / 1e6).toFixed(0) + ' MHz'; }
      if (/_celsius$/.test(key)) { return value.toFixed(0) + ' °C'; }
      if (/_watts$/.test(key)) { return value.toFixed(0) + ' W'; }
      return Number.isInteger(value) ? String(value) : value.toPrecision(4);
    }
    if (Array.isArray(value)) { return value.map(function (v) { return typeof v === 'object' ? JSON.stringify(v) : String(v); }).join(', '); }
    if (value && typeof value === 'object') { return JSON.stringify(value); }
    return String(value);
  }

  function getJson(url) {
    return fetch(url, { headers: { 'Accept': 'application/json' }, cache: 'no-store' }).then(function (res) {
      if (!res.ok) {
        var err = new Error(url + ' answered ' + res.status);
        err.status = res.status;
        // The API's errors are {"error": "…"}; keep the body so callers can tell one refusal from another.
        return res.text().then(function (text) {
          try { err.body = JSON.parse(text); } catch (e) { err.body = null; }
          throw err;
        }, function () { throw err; });
      }
      return res.json();
    });
  }

  // A 404 from the series endpoint means either that the run is unknown (forgotten since the run list was read) or
  // that the collector predates the endpoint. Only the API's own unknown-run error is the former (an older
  // collector answers "no such endpoint: …" or something else entirely), and only the latter may turn the series
  // path off: one vanished run must not send every other run back to polling /metrics.
  function unknownRunError(err) {
    var message = err && err.status === 404 && err.body && err.body.error;
    return typeof message === 'string' && message.indexOf('unknown run ') === 0;
  }

  // ---------- the rolling buffer ----------

  function first() {
    for (var i = 0; i < arguments.length; i++) { if (num(arguments[i]) !== null) { return arguments[i]; } }
    return null;
  }
  // The predictions live in the comparison (and in the estimate it came from).
  function predictedPeak(run) { return first((run.comparison || {}).predicted_peak_memory_bytes, (run.estimate || {}).peak_memory_bytes); }
  function predictedStep(run) { return first((run.comparison || {}).predicted_step_seconds, (run.estimate || {}).step_seconds); }
  function predictedThroughput(run) { return first((run.comparison || {}).predicted_samples_per_second, (run.estimate || {}).samples_per_second); }
  function capacityOf(run) { return first((run.comparison || {}).capacity_bytes, (run.observed || {}).memory_total_bytes, (run.estimate || {}).gpu_memory_bytes); }

  function pointOf(run, t, gpus) {
    var o = run.observed || {}, c = run.comparison || {};
    gpus = gpus || {};
    return {
      t: t,
      memory: num(o.memory_used_bytes),
      peak: num(o.peak_memory_bytes),
      memoryPredicted: predictedPeak(run),
      capacity: capacityOf(run),
      step: num(o.step_seconds),
      stepPredicted: predictedStep(run),
      // Point readings of the run's GPUs (from /metrics) when there are any, else the run's one-minute mean.
      utilization: num(gpus.utilization) !== null ? gpus.utilization : num(o.gpu_utilization_ratio),
      utilizationMin: num(gpus.utilizationMin) !== null ? gpus.utilizationMin : num(o.gpu_utilization_min_ratio),
      idle: num(gpus.idle),
      dataWait: num(o.data_wait_ratio),
      throughput: num(o.samples_per_second),
      throughputPredicted: predictedThroughput(run),
      lastStep: num(o.last_step),
      stepRatio: num(c.step_time_ratio)
    };
  }

  function record(run, t, gpus) {
    var id = runIdOf(run);
    if (!id || !run.observed) { return; }
    var buffer = state.history[id] || (state.history[id] = []);
    buffer.push(pointOf(run, t, gpus));
    if (buffer.length > MAX_POINTS) { buffer.splice(0, buffer.length - MAX_POINTS); }
  }

  // The collector keeps each run's recent history (GET /v1/runs/{id}/series: the run's points, the step reports and
  // each GPU's; see docs/API.md). Its points replace the page's own buffer for that span, so a freshly opened page
  // shows the past too; what the page recorded before that span stays, so a page left open keeps more than the
  // collector's window.
  var SERIES_POINTS = 600;           // the collector's default window at one point a second
  var SERIES_FULL_EVERY_MS = 60000;  // between whole fetches, ask only for the last few seconds (since=…)
  var SERIES_OVERLAP_SECONDS = 5;    // the newest entries may still be merging polls: fetch them again

  function seriesRequest(id) {
    var url = '/v1/runs/' + encodeURIComponent(id) + '/series?gpus=false&max_points=' + SERIES_POINTS;
    var buffer = state.history[id] || [];
    var incremental = state.seriesFor === id && buffer.length > 0 && Date.now() - state.seriesFullAt < SERIES_FULL_EVERY_MS;
    if (incremental) {
      url += '&since=' + Math.floor((buffer[buffer.length - 1].t - SERIES_OVERLAP_SECONDS) * 1000);
    }
    return { url: url, full: !incremental };
  }

  function seriesPoints(body, run) {
    var points = Array.isArray(body) ? body : (body && (body.points || body.series)) || [];
    var e = run.estimate || {};
    var predicted = (body && body.predicted) || {};
    var comparison = Object.assign({}, run.comparison || {});
    if (num(predicted.peak_memory_bytes) !== null) { comparison.predicted_peak_memory_bytes = predicted.peak_memory_bytes; }
    if (num(predicted.step_seconds) !== null) { comparison.predicted_step_seconds = predicted.step_seconds; }
    if (num(predicted.samples_per_second) !== null) { comparison.predicted_samples_per_second = predicted.samples_per_second; }
    if (body && num(body.capacity_bytes) !== null) { comparison.capacity_bytes = body.capacity_bytes; }
    return points.map(function (p) {
      var t = toSeconds(p.ts !== undefined ? p.ts : p.t);
      var observed = Object.assign({}, p, { last_step: p.last_step !== undefined ? p.last_step : p.step });
      return pointOf({ observed: observed, estimate: e, comparison: comparison }, t, { idle: p.gpu_idle_ratio });
    }).filter(function (p) { return p.t !== null; });
  }

  function mergeSeries(id, points) {
    if (!points.length) { return; }
    var older = (state.history[id] || []).filter(function (p) { return p.t < points[0].t; });
    state.history[id] = older.concat(points).slice(-MAX_POINTS);
    document.body.dataset.series = 'true';
  }

  // ---------- polling ----------

  function chooseSelected() {
    var fromHash = decodeURIComponent((location.hash.match(/^#\/runs\/(.+)$/) || [])[1] || '');
    var ids = state.runs.map(runIdOf);
    if (fromHash && ids.indexOf(fromHash) >= 0) { return fromHash; }
    if (state.selected && ids.indexOf(state.selected) >= 0) { return state.selected; }
    // With nothing chosen, show the run that most needs attention.
    var sorted = state.runs.slice().sort(bySeverity);
    return sorted.length ? runIdOf(sorted[0]) : null;
  }

  // The collector's clock, when it is ahead of the browser's (a skewed host, or the demo running faster than
  // real time): times on the page are then the collector's, as the anomalies' "since" are.
  function serverNow(runs) {
    var now = Date.now() / 1000;
    runs.forEach(function (run) { var seen = num(run.last_seen_ts); if (seen !== null && seen > now) { now = seen; } });
    return now;
  }

  // Per-GPU point readings from the Prometheus exposition (docs/METRICS.md names): utilisation, the lowest of the
  // driver's buffered samples and the share of them at idle, which show the short gaps a one-minute mean hides.
  var GPU_SERIES = {
    trainwatch_gpu_utilization_ratio: 'utilization',
    trainwatch_gpu_utilization_min_ratio: 'utilizationMin',
    trainwatch_gpu_idle_fraction_ratio: 'idle'
  };
  var MAX_METRICS_CHARS = 4 * 1024 * 1024;

  function gpuReadings() {
    if (!state.metricsEndpoint) { return Promise.resolve(null); }
    return fetch('/metrics', { cache: 'no-store' }).then(function (res) {
      if (!res.ok) { state.metricsEndpoint = false; return null; }
      return res.text();
    }).then(function (text) {
      if (text === null) { return null; }
      if (text.length > MAX_METRICS_CHARS) { state.metricsEndpoint = false; }
      return parseGpuMetrics(text);
    }, function () { return null; });
  }

  function parseGpuMetrics(text) {
    var byUuid = {};
    text.split('\n').forEach(function (line) {
      var m = /^(trainwatch_gpu_[a-z_]+)\{([^}]*)\}\s+(\S+)/.exec(line);
      if (!m || !GPU_SERIES[m[1]]) { return; }
      var uuid = /(?:^|,)gpu_uuid="((?:[^"\\]|\\.)*)"/.exec(m[2]);
      var value = Number(m[3]);
      if (!uuid || !isFinite(value)) { return; }
      (byUuid[uuid[1]] || (byUuid[uuid[1]] = {}))[GPU_SERIES[m[1]]] = value;
    });
    return byUuid;
  }

  function summarizeGpus(readings, run) {
    if (!readings || !Array.isArray(run.gpus)) { return null; }
    var util = [], min = [], idle = [];
    run.gpus.forEach(function (g) {
      var r = readings[g.uuid];
      if (!r) { return; }
      if (num(r.utilization) !== null) { util.push(r.utilization); }
      if (num(r.utilizationMin) !== null) { min.push(r.utilizationMin); }
      if (num(r.idle) !== null) { idle.push(r.idle); }
    });
    function mean(a) { return a.length ? a.reduce(function (x, y) { return x + y; }, 0) / a.length : null; }
    return {
      utilization: mean(util),
      utilizationMin: min.length ? Math.min.apply(null, min) : null,
      idle: idle.length ? Math.max.apply(null, idle) : null
    };
  }

  // A limit that refused new entries in the last 15 minutes (or is full) is said at the top: those runs, GPUs or
  // agents are not watched, and the collector refused them rather than forget live ones.
  var LIMIT_NOTICE_SECONDS = 900;
  function showLimits(limits) {
    var now = Date.now() / 1000;
    var notes = limits.filter(function (l) {
      var last = num(l.last_refused_ts);
      return l.limit !== 'ranks' && ((last !== null && now - last < LIMIT_NOTICE_SECONDS) || (num(l.used) !== null && l.used >= l.max));
    }).map(function (l) {
      var text = l.limit.replace(/s$/, '') + ' limit full (' + l.used.toLocaleString('en-US') + ' of ' + l.max.toLocaleString('en-US') + ')';
      if (num(l.refused) > 0) {
        text += ': ' + l.refused.toLocaleString('en-US') + ' new ' + l.limit + ' refused';
        if (num(l.last_refused_ts) !== null) { text += ', last at ' + fmtClock(l.last_refused_ts); }
      }
      return text;
    });
    var banner = document.getElementById('limit-banner');
    banner.hidden = notes.length === 0;
    banner.textContent = notes.join(' · ');
    banner.title = notes.length ? 'Every slot holds a live entry, so new ones are refused (HTTP 429) instead of forgetting them; see trainwatch_limit_* in /metrics' : '';
  }

  function poll() {
    clearTimeout(state.timer);
    getJson('/v1/runs').then(function (body) {
      state.runs = Array.isArray(body) ? body : (body.runs || []);
      showLimits(Array.isArray(body) ? [] : (body.limits || []));
      var now = state.serverNow = serverNow(state.runs);
      if (historyView()) {
        if (Date.now() - state.historyAt < HISTORY_EVERY_MS && state.pastRuns) { return null; }
        return getJson('/v1/history').then(function (history) {
          state.pastRuns = history;
          state.historyAt = Date.now();
        }, function (err) {
          state.pastRuns = { error: err.message };
          state.historyAt = Date.now();
        });
      }
      state.selected = chooseSelected();
      state.runs.forEach(function (run) { if (runIdOf(run) !== state.selected) { record(run, now); } });
      if (!state.selected) { return null; }
      var id = state.selected;
      // With the collector's series the page records nothing itself for the selected run (and needs no /metrics).
      var series = state.seriesEndpoint;
      return Promise.all([getJson('/v1/runs/' + encodeURIComponent(id)), series ? null : gpuReadings()]).then(function (results) {
        var detail = results[0];
        state.detail = detail;
        if (!series) {
          record(detail, now, summarizeGpus(results[1], detail));
          return;
        }
        var request = seriesRequest(id);
        return getJson(request.url).then(function (body) {
          mergeSeries(id, seriesPoints(body, detail));
          if (request.full) {
            state.seriesFor = id;
            state.seriesFullAt = Date.now();
          } else {
            document.body.dataset.seriesUpdates = String(Number(document.body.dataset.seriesUpdates || 0) + 1);
          }
        }, function (err) {
          if (err.status === 405 || (err.status === 404 && !unknownRunError(err))) { state.seriesEndpoint = false; }
        });
      });
    }).then(function () {
      setConnection(true);
      render();
    }, function (err) {
      setConnection(false, err && err.message);
      render();
    }).then(function () {
      state.timer = setTimeout(poll, POLL_MS);
    });
  }

  function setConnection(ok, message) {
    var el = document.getElementById('connection');
    el.textContent = ok ? 'live · updated ' + fmtClock(Date.now() / 1000) : 'collector unreachable' + (message ? ': ' + message : '');
    el.className = ok ? 'connection' : 'connection down';
  }

  // ---------- rendering ----------

  function render() {
    renderList();
    if (historyView()) { renderHistory(); } else { renderRun(); }
    var synthetic = state.runs.some(isSynthetic);
    document.getElementById('synthetic-banner').hidden = !synthetic;
    document.body.dataset.runs = String(state.runs.length);
  }

  function specLine(spec, estimate) {
    spec = spec || {};
    estimate = estimate || {};
    var parts = [];
    var model = estimate.model || spec.model;
    var gpu = estimate.gpu || spec.gpu;
    if (model) { parts.push(model); }
    if (gpu) { parts.push((spec.gpus && spec.gpus > 1 ? spec.gpus + '×' : '') + gpu); }
    if (spec.batch) { parts.push('batch ' + spec.batch + '/GPU'); }
    if (spec.height && spec.width) { parts.push(spec.width + '×' + spec.height + ' px'); } else if (spec.resolution) { parts.push(spec.resolution + ' px'); }
    if (spec.frames) { parts.push(spec.frames + ' frames'); }
    if (spec.precision) { parts.push(spec.precision); }
    if (spec.optimizer) { parts.push(spec.optimizer); }
    if (spec.features) { parts.push(spec.features + ' features'); }
    if (spec.grad_checkpointing) { parts.push('grad checkpointing'); }
    if (spec.ema) { parts.push('EMA'); }
    if (spec.zero) { parts.push('ZeRO-' + spec.zero); }
    return parts.join(' · ');
  }

  // What a run without anomalies can honestly be said to be: nothing is "as predicted" where nothing was predicted
  // or observed. Returns {chip, text}.
  var FIRST_EVALUATION_SECONDS = 60;
  function calmState(run) {
    var o = run.observed || {};
    var c = run.comparison || {};
    var hasSteps = num(o.last_step) !== null;
    var gpus = num(o.gpu_count) || (Array.isArray(run.gpus) ? run.gpus.length : 0);
    if (!hasSteps && !gpus && run.unmatched && run.unmatched.message) {
      // The collector knows which runs the agents do report: say so (the usual split: spec under $SLURM_JOB_ID,
      // agent naming the run by a random TORCHELASTIC_RUN_ID).
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
    var first = num(run.first_seen_ts);
    var now = state.serverNow !== null ? state.serverNow : Date.now() / 1000;
    if (first !== null && now - first < FIRST_EVALUATION_SECONDS) {
      return { chip: 'collecting evidence', text: 'Collecting evidence: the detectors judge after about a minute of data.' };
    }
    var stepRatio = num(c.step_time_ratio);
    var memoryRatio = num(c.memory_ratio);
    var off = [];
    if (stepRatio !== null && (stepRatio > 1.2 || stepRatio < 0.8)) { off.push('steps take ×' + stepRatio.toFixed(2) + ' the predicted time'); }
    if (memoryRatio !== null && (memoryRatio > 1.15 || memoryRatio < 0.7)) { off.push('memory is ×' + memoryRatio.toFixed(2) + ' the prediction'); }
    if (off.length) {
      return { chip: 'off the prediction', text: 'No anomaly raised, but ' + off.join(' and ') +
        ' (below the thresholds that raise one; see docs/DETECTORS.md).' };
    }
    var detail = [];
    if (stepRatio !== null) { detail.push('step ×' + stepRatio.toFixed(2)); }
    if (memoryRatio !== null) { detail.push('memory ×' + memoryRatio.toFixed(2)); }
    return { chip: 'no active anomalies', text: 'No anomalies: the run behaves as predicted' +
      (detail.length ? ' (' + detail.join(', ') + ' of the prediction).' : '.') };
  }

  var SEVERITY_RANK = { critical: 0, warning: 1, ok: 2 };
  function bySeverity(a, b) {
    return (SEVERITY_RANK[worstSeverity(a)] - SEVERITY_RANK[worstSeverity(b)]) ||
      (activeAnomalies(b).length - activeAnomalies(a).length) || ((num(b.last_seen_ts) || 0) - (num(a.last_seen_ts) || 0));
  }

  function renderList() {
    var ul = document.getElementById('runs');
    document.getElementById('no-runs').hidden = state.runs.length > 0;
    // The runs that need attention first.
    ul.innerHTML = state.runs.slice().sort(bySeverity).map(function (run) {
      var id = runIdOf(run);
      var o = run.observed || {};
      var chips = activeAnomalies(run).map(function (a) {
        return '<span class="chip ' + esc(a.severity || 'warning') + '">' + esc(a.kind) + '</span>';
      });
      if (!chips.length) {
        var calm = calmState(run);
        chips.push('<span class="chip ' + (calm.chip === 'no active anomalies' ? 'ok' : 'muted') + '">' + esc(calm.chip) + '</span>');
      }
      if (isSynthetic(run)) { chips.unshift('<span class="chip synthetic">synthetic (demo)</span>'); }
      var step = num(o.last_step) !== null ? 'step ' + o.last_step : 'no steps yet';
      return '<li class="state-' + esc(stateOf(run)) + (id === state.selected ? ' selected' : '') + '" data-run-id="' + esc(id) + '">' +
        '<a href="#/runs/' + encodeURIComponent(id) + '">' +
        '<div class="run-id">' + esc(id) + '</div>' +
        '<div class="run-meta">' + esc(stateLabel(run)) + ' · ' + esc(step) + ' · ' + esc(specLine(run.spec, run.estimate)) + '</div>' +
        '<div class="chips">' + chips.join('') + '</div></a></li>';
    }).join('');
  }

  function tile(label, value, sub, tone) {
    return '<div class="tile' + (tone ? ' ' + tone : '') + '"><div class="label">' + esc(label) + '</div><div class="value">' +
      esc(value) + '</div>' + (sub ? '<div class="sub">' + esc(sub) + '</div>' : '') + '</div>';
  }

  function fmtPercent(r) { r = num(r); return r === null ? '–' : (r * 100).toFixed(r < 0.1 ? 1 : 0) + ' %'; }
  function fmtGpuHours(h) { h = num(h); return h === null ? '–' : (h >= 100 ? h.toFixed(0) : h >= 1 ? h.toFixed(1) : h.toFixed(2)) + ' GPU-h'; }
  function fmtMoney(v) { v = num(v); return v === null ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2); }
  function fmtEnergy(j) {
    j = num(j);
    if (j === null) { return '–'; }
    var kwh = j / 3.6e6;
    return kwh >= 1000 ? (kwh / 1000).toFixed(1) + ' MWh' : kwh >= 1 ? kwh.toFixed(1) + ' kWh' : (j / 3600).toFixed(0) + ' Wh';
  }
  // "12 % where this model reaches 30 % on this GPU": observed MFU beside the prediction's.
  function mfuSub(o, c) {
    var parts = [];
    if (num(c.predicted_mfu_ratio) !== null) { parts.push('predicted ' + fmtPercent(c.predicted_mfu_ratio)); }
    if (num(o.hfu_ratio) !== null && num(o.mfu_ratio) !== null && o.hfu_ratio > o.mfu_ratio * 1.01) { parts.push('HFU ' + fmtPercent(o.hfu_ratio)); }
    return parts.length ? parts.join(' · ') : (num(o.mfu_ratio) === null ? 'needs a spec and steps' : null);
  }
  function mfuTone(o, c) {
    var m = num(o.mfu_ratio), p = num(c.predicted_mfu_ratio);
    return m !== null && p !== null && m < 0.67 * p ? 'warn' : '';
  }
  var WALL_LABELS = { productive: 'training', startup: 'start-up', data_wait: 'data wait', encoding: 'online encoding',
    stall: 'stalled', checkpoint: 'checkpoints', evaluation: 'evaluation', lost_work: 'repeated after restart',
    idle: 'idle', pending: 'since the last report' };
  var WALL_COLORS = { productive: 'var(--ok)', startup: '#98a2b3', data_wait: 'var(--warning)', encoding: '#f5b971',
    stall: 'var(--critical)', checkpoint: '#7f9cf5', evaluation: '#b794f4', lost_work: '#e57373', idle: '#d0d5dd', pending: '#eaecf0' };
  function goodputSub(o) {
    var w = o.wall_seconds;
    if (!w) { return null; }
    var worst = null;
    Object.keys(w).forEach(function (k) {
      if (k !== 'productive' && k !== 'pending' && (worst === null || w[k] > w[worst])) { worst = k; }
    });
    return worst && w[worst] > 0 ? 'most lost to ' + WALL_LABELS[worst] + ' (' + fmtDuration(w[worst]) + ')' : 'of the wall time';
  }
  function energySub(o, c) {
    var parts = [];
    if (num(o.gpu_hours) !== null) { parts.push(fmtGpuHours(o.gpu_hours)); }
    if (num(o.cost) !== null) { parts.push('cost ' + fmtMoney(o.cost)); }
    if (num(c.projected_energy_joules) !== null) { parts.push(fmtEnergy(c.projected_energy_joules) + ' by the end'); }
    return parts.join(' · ') || null;
  }
  // Where the run's wall time went: one bar split by reason, with the seconds of each part.
  function wallBar(o) {
    var w = o.wall_seconds;
    if (!w) { return ''; }
    var total = Object.keys(w).reduce(function (sum, k) { return sum + (num(w[k]) || 0); }, 0);
    if (!(total > 0)) { return ''; }
    var order = ['productive', 'startup', 'data_wait', 'encoding', 'stall', 'checkpoint', 'evaluation', 'lost_work', 'idle', 'pending'];
    var parts = order.filter(function (k) { return num(w[k]) !== null && w[k] > 0; });
    return '<h2>Where the time went</h2><div class="wall" data-total="' + esc(total.toFixed(0)) + '"><div class="wall-bar">' +
      parts.map(function (k) {
        return '<span class="wall-part" data-reason="' + esc(k) + '" style="width:' + (100 * w[k] / total).toFixed(2) +
          '%;background:' + WALL_COLORS[k] + '" title="' + esc(WALL_LABELS[k] + ': ' + fmtDuration(w[k])) + '"></span>';
      }).join('') + '</div><div class="wall-legend">' + parts.map(function (k) {
        return '<span><i style="background:' + WALL_COLORS[k] + '"></i>' + esc(WALL_LABELS[k]) + ' ' + esc(fmtDuration(w[k])) +
          ' (' + (100 * w[k] / total).toFixed(0) + ' %)</span>';
      }).join('') + '</div></div>';
  }

  function etaSeconds(run) {
    var o = run.observed || {}, spec = run.spec || {};
    var eta = first((run.comparison || {}).eta_seconds, o.eta_seconds);
    if (eta !== null) { return eta; }
    var total = num(spec.total_steps), last = num(o.last_step), step = num(o.step_seconds);
    if (total === null || last === null || step === null) { return null; }
    return Math.max(0, total - last) * step;
  }

  function renderRun() {
    var section = document.getElementById('run');
    var run = state.detail;
    if (!state.selected || !run || runIdOf(run) !== state.selected) {
      section.innerHTML = '<p class="muted">' + (state.runs.length ? 'Loading…' : 'Select a run.') + '</p>';
      return;
    }
    var id = runIdOf(run);
    var o = run.observed || {}, e = run.estimate || {}, c = run.comparison || {}, spec = run.spec || {};
    var stepRatio = num(c.step_time_ratio);
    var memoryRatio = num(c.memory_ratio);
    var capacity = capacityOf(run);
    var headroom = num(c.headroom_bytes);
    var total = num(spec.total_steps);
    var tiles = [
      tile('Step', num(o.last_step) !== null ? String(o.last_step) : '–',
        total !== null && num(o.last_step) !== null ? 'of ' + total + ' (' + (100 * o.last_step / total).toFixed(1) + ' %)' : null),
      tile('Seconds per step', fmtSeconds(o.step_seconds), 'predicted ' + fmtSeconds(predictedStep(run)) +
        (stepRatio !== null ? ' · ×' + stepRatio.toFixed(2) : ''), stepRatio !== null && stepRatio > 1.5 ? 'bad' : stepRatio !== null && stepRatio > 1.2 ? 'warn' : ''),
      tile('VRAM (peak)', fmtBytes(num(o.peak_memory_bytes) !== null ? o.peak_memory_bytes : o.memory_used_bytes),
        'predicted ' + fmtBytes(predictedPeak(run)) + ' of ' + fmtBytes(capacity) +
        (headroom !== null ? ' · ' + fmtBytes(headroom) + ' free' : ''),
        headroom !== null && capacity && headroom < 0.05 * capacity ? 'bad' : memoryRatio !== null && memoryRatio > 1.1 ? 'warn' : ''),
      tile('GPU utilisation', fmtRatio(o.gpu_utilization_ratio), 'last minute', num(o.gpu_utilization_ratio) !== null && o.gpu_utilization_ratio < 0.6 ? 'warn' : ''),
      tile('Data wait', fmtRatio(o.data_wait_ratio), 'of each step',
        num(o.data_wait_ratio) !== null && o.data_wait_ratio > 0.3 ? 'warn' : ''),
      tile('Samples per second', fmtRate(o.samples_per_second), 'predicted ' + fmtRate(predictedThroughput(run))),
      tile('ETA', fmtDuration(etaSeconds(run)), total === null ? 'no total_steps in the spec' : 'at the observed pace' +
        (num(c.projected_gpu_hours) !== null ? ' · ' + fmtGpuHours(c.projected_gpu_hours) + ' in all' : '') +
        (num(c.projected_cost) !== null ? ' · cost ' + fmtMoney(c.projected_cost) : '')),
      tile('Loss', o.loss_nonfinite ? 'NaN' : (num(o.loss) !== null ? o.loss.toPrecision(4) : '–'),
        num(o.loss_nonfinite_reports) !== null ? o.loss_nonfinite_reports + ' report' + (o.loss_nonfinite_reports === 1 ? '' : 's') +
          ' not finite' + (num(o.loss) !== null ? ' · last finite ' + o.loss.toPrecision(4) : '') : 'newest report',
        o.loss_nonfinite ? 'bad' : ''),
      tile('MFU', fmtPercent(o.mfu_ratio), mfuSub(o, c), mfuTone(o, c)),
      tile('Goodput', fmtPercent(o.goodput_ratio), goodputSub(o), num(o.goodput_ratio) !== null && o.goodput_ratio < 0.5 ? 'warn' : ''),
      tile('Energy', fmtEnergy(o.energy_joules), energySub(o, c))
    ];

    var points = state.history[id] || [];
    var charts = [
      chart('vram', 'VRAM: observed vs predicted vs capacity', points, [
        { key: 'memory', label: 'observed', color: 'var(--accent)' },
        { key: 'memoryPredicted', label: 'predicted peak', color: 'var(--predicted)', dashed: true },
        { key: 'capacity', label: 'capacity', color: 'var(--capacity)', dashed: true }
      ], { format: fmtBytes, min: 0, unit: GIB }),
      chart('step-time', 'Step time: observed vs predicted', points, [
        { key: 'step', label: 'observed s/step', color: 'var(--accent)' },
        { key: 'stepPredicted', label: 'predicted', color: 'var(--predicted)', dashed: true }
      ], { format: fmtSeconds, min: 0 }),
      chart('utilization', 'GPU utilisation and idle gaps', points, [
        { key: 'utilization', label: 'utilisation (mean of the run\'s GPUs)', color: 'var(--accent)' },
        { key: 'utilizationMin', label: 'lowest buffered sample', color: '#98a2b3', dashed: true }
      ], { format: fmtRatio, min: 0, max: 1, idleBands: true }),
      chart('data-wait', 'Data-wait share of each step', points, [
        { key: 'dataWait', label: 'waiting for data / online encoders', color: 'var(--warning)' }
      ], { format: fmtRatio, min: 0, max: 1 }),
      chart('throughput', 'Throughput (samples/s) · ETA ' + fmtDuration(etaSeconds(run)), points, [
        { key: 'throughput', label: 'observed', color: 'var(--ok)' },
        { key: 'throughputPredicted', label: 'predicted', color: 'var(--predicted)', dashed: true }
      ], { format: fmtRate, min: 0 })
    ];

    var anomalies = anomaliesOf(run).slice().sort(function (a, b) {
      return (b.active !== false) - (a.active !== false) || (a.severity === 'critical' ? -1 : 0) - (b.severity === 'critical' ? -1 : 0);
    });
    var anomalyHtml = anomalies.length ? anomalies.map(renderAnomaly).join('') :
      '<p class="muted calm" data-calm="' + esc(calmState(run).chip) + '">' + esc(calmState(run).text) + '</p>';

    section.innerHTML =
      '<div class="run-head"><h2>' + esc(id) + '</h2>' +
      (isSynthetic(run) ? '<span class="chip synthetic">synthetic (demo)</span>' : '') +
      '<span class="chip ' + esc(worstSeverity(run)) + '">' + esc(stateLabel(run)) + '</span></div>' +
      '<div class="run-spec">' + esc(specLine(spec, e)) + '</div>' +
      '<div class="tiles">' + tiles.join('') + '</div>' +
      '<h2>Anomalies</h2><div class="anomalies">' + anomalyHtml + '</div>' + wallBar(o) +
      '<h2>Live</h2><div class="charts">' + charts.join('') + '</div>' + gpuTable(run);

    var drawn = section.querySelectorAll('svg.plot[data-points]');
    var withData = Array.prototype.filter.call(drawn, function (svg) { return Number(svg.getAttribute('data-points')) > 0; });
    if (drawn.length === charts.length && withData.length > 0) {
      document.body.dataset.ready = 'true';
    }
  }

  // How far off a prediction was: observed / predicted as a signed percentage, coloured when it matters.
  function offBy(ratio) {
    ratio = num(ratio);
    if (ratio === null) { return '–'; }
    var pct = (ratio - 1) * 100;
    var text = (pct >= 0 ? '+' : '') + pct.toFixed(0) + ' %';
    var cls = pct > 15 ? 'off-high' : pct < -15 ? 'off-low' : '';
    return '<span class="' + cls + '">' + esc(text) + '</span>';
  }

  // The history view: past runs with how far each prediction was off, the calibration it led to, alerts.
  function renderHistory() {
    var section = document.getElementById('run');
    var h = state.pastRuns;
    if (!h) { section.innerHTML = '<p class="muted">Loading history…</p>'; return; }
    if (h.error) { section.innerHTML = '<p class="muted">History unavailable: ' + esc(h.error) + '</p>'; return; }
    var html = '<div class="run-head"><h2>History</h2></div>';
    if (!h.persistent) {
      html += '<p class="muted">This collector keeps no history: start it with <code>--data-dir DIR</code> to remember runs, ' +
        'alerts and calibration across restarts.</p>';
    }
    var runs = Array.isArray(h.runs) ? h.runs : [];
    html += '<h2>Past runs: prediction against what happened</h2>';
    html += runs.length ? '<table class="history" data-table="runs"><thead><tr><th>run</th><th>last seen</th><th>step</th>' +
      '<th>s/step observed</th><th>predicted</th><th>off by</th><th>peak VRAM</th><th>predicted</th><th>off by</th></tr></thead><tbody>' +
      runs.map(function (r) {
        return '<tr><td>' + esc(r.run_id) + (r.synthetic ? ' <span class="chip synthetic">synthetic (demo)</span>' : '') +
          (num(r.ended_at) !== null ? ' <span class="chip state">ended</span>' : '') + '</td>' +
          '<td>' + (num(r.last_seen) !== null ? esc(new Date(r.last_seen * 1000).toLocaleString()) : '–') + '</td>' +
          '<td>' + esc(num(r.last_step) !== null ? r.last_step : '–') + '</td>' +
          '<td>' + esc(fmtSeconds(r.step_seconds)) + '</td><td>' + esc(fmtSeconds(r.predicted_step_seconds)) + '</td>' +
          '<td>' + offBy(r.step_time_error_ratio) + '</td>' +
          '<td>' + esc(fmtBytes(r.peak_memory_bytes)) + '</td><td>' + esc(fmtBytes(r.predicted_peak_memory_bytes)) + '</td>' +
          '<td>' + offBy(r.memory_error_ratio) + '</td></tr>';
      }).join('') + '</tbody></table>' : '<p class="muted">No runs recorded yet.</p>';
    var calibration = Array.isArray(h.calibration) ? h.calibration : [];
    html += '<h2>Calibration</h2>';
    function runButtons(ids, action, label) {
      return (ids || []).map(function (id) {
        return '<button type="button" class="calibration-action" data-method="POST" data-path="v1/calibration/runs/' +
          encodeURIComponent(id) + '/' + action + '" title="' + esc(label + ' ' + id) + '">' + esc(id) + ' ' + esc(label === 'leave out' ? '✕' : '↺') + '</button>';
      }).join(' ');
    }
    html += calibration.length ? '<table class="history" data-table="calibration"><thead><tr><th>GPU</th><th>model family</th>' +
      '<th>step time factor</th><th>memory factor</th><th>runs (click to leave one out)</th><th>outliers</th><th>left out</th><th></th></tr></thead><tbody>' +
      calibration.map(function (c) {
        var applied = c.applied !== false;
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
    var alerts = Array.isArray(h.alerts) ? h.alerts : [];
    html += '<h2>Alerts</h2>';
    html += alerts.length ? '<table class="history" data-table="alerts"><thead><tr><th>since</th><th>run</th><th>kind</th><th>severity</th>' +
      '<th>resolved</th><th>message</th></tr></thead><tbody>' + alerts.map(function (a) {
        return '<tr><td>' + (num(a.since) !== null ? esc(new Date(a.since * 1000).toLocaleString()) : '–') + '</td><td>' + esc(a.run_id) +
          '</td><td>' + esc(a.kind) + '</td><td><span class="chip ' + esc(a.severity) + '">' + esc(a.severity) + '</span></td><td>' +
          (num(a.resolved_at) !== null ? esc(new Date(a.resolved_at * 1000).toLocaleString()) : 'active') + '</td><td>' +
          esc(a.message || '') + (a.suggestion ? '<div class="muted">' + esc(a.suggestion) + '</div>' : '') + '</td></tr>';
      }).join('') + '</tbody></table>' : '<p class="muted">No alerts recorded.</p>';
    section.innerHTML = html;
    Array.prototype.forEach.call(section.querySelectorAll('button.calibration-action'), function (button) {
      button.addEventListener('click', function () { calibrationAction(button.getAttribute('data-method'), button.getAttribute('data-path')); });
    });
    document.body.dataset.history = 'true';
  }

  // Leave a run out of calibration, count it again, or reset a group. A collector with a bearer token refuses the
  // page (it holds no token): say how to do it with curl instead.
  function calibrationAction(method, path) {
    var status = document.getElementById('calibration-status');
    fetch(path, { method: method, cache: 'no-store' }).then(function (res) {
      return res.text().then(function (text) {
        if (res.ok) {
          state.historyAt = 0;
          if (status) { status.textContent = 'Done; estimates priced from now on use the new calibration.'; }
          poll();
          return;
        }
        var message = text;
        try { message = JSON.parse(text).error || text; } catch (e) { /* not JSON */ }
        if (status) {
          status.textContent = res.status === 401
            ? 'This collector needs its bearer token for changes: curl -X ' + method + ' -H "Authorization: Bearer $(cat TOKEN_FILE)" ' + location.origin + '/' + path
            : 'Refused: ' + message;
        }
      });
    }, function () { if (status) { status.textContent = 'The collector did not answer.'; } });
  }

  // One row per GPU: a throttled or lagging GPU of a multi-GPU run stands out here.
  function gpuTable(run) {
    var gpus = Array.isArray(run.gpus) ? run.gpus : [];
    if (!gpus.length) { return ''; }
    var rows = gpus.map(function (g) {
      var clock = num(g.sm_clock_ratio), util = num(g.utilization_ratio);
      var slow = clock !== null && clock < 0.9;
      return '<tr' + (g.lost ? ' class="lost"' : slow ? ' class="slow"' : '') + '><td>' + esc(g.host || '') + '</td><td>' + esc(g.index) + '</td>' +
        '<td>' + esc(g.name || '') + '</td><td>' + esc((g.ranks || []).join(', ')) + '</td>' +
        '<td>' + esc(fmtBytes(g.memory_used_bytes)) + ' / ' + esc(fmtBytes(g.memory_total_bytes)) + '</td>' +
        '<td>' + esc(fmtBytes(g.peak_memory_bytes)) + '</td><td>' + esc(fmtRatio(util)) + '</td>' +
        '<td>' + esc(fmtRatio(clock)) + (slow ? ' ⚠' : '') + '</td><td>' + (g.lost ? 'lost' : 'ok') + '</td>' +
        '<td>' + esc(processText(g.process)) + '</td></tr>';
    });
    return '<h2>GPUs</h2><table class="gpus"><thead><tr><th>host</th><th>GPU</th><th>name</th><th>ranks</th><th>memory</th>' +
      '<th>peak</th><th>utilisation (1 min)</th><th>SM clock / max</th><th>state</th><th>rank process</th></tr></thead><tbody>' +
      rows.join('') + '</tbody></table>' + hostMemoryText(run);
  }

  var PROCESS_STATES = { R: 'running', S: 'sleeping', D: 'in I/O', Z: 'zombie', T: 'stopped' };
  // "running · 1.0 cores · 6.0 GiB + 4 workers 9.0 GiB": what a hung or leaking rank looks like at a glance.
  function processText(p) {
    if (!p) { return '–'; }
    var parts = [PROCESS_STATES[p.state] || p.state || '?'];
    if (num(p.cpu_ratio) !== null) { parts.push(p.cpu_ratio.toFixed(1) + ' cores'); }
    if (num(p.rss_bytes) !== null) {
      parts.push(fmtBytes(p.rss_bytes) + (num(p.workers) !== null && p.workers > 0
        ? ' + ' + p.workers + ' workers ' + fmtBytes(p.workers_rss_bytes) : ''));
    }
    return parts.join(' · ');
  }

  function hostMemoryText(run) {
    var hosts = Array.isArray(run.host_memory) ? run.host_memory : [];
    if (!hosts.length) { return ''; }
    return '<p class="muted host-memory">' + hosts.map(function (h) {
      var line = esc(h.host) + ': ' + esc(fmtBytes(h.mem_available_bytes)) + ' of ' + esc(fmtBytes(h.mem_total_bytes)) + ' RAM available';
      if (num(h.shm_total_bytes) !== null && h.shm_total_bytes > 0) {
        line += ' · /dev/shm ' + esc(fmtBytes(h.shm_used_bytes)) + ' of ' + esc(fmtBytes(h.shm_total_bytes));
      }
      return line;
    }).join('<br>') + '</p>';
  }

  function renderAnomaly(a) {
    var evidence = '';
    if (a.evidence && typeof a.evidence === 'object' && !Array.isArray(a.evidence)) {
      evidence = '<dl class="evidence">' + Object.keys(a.evidence).map(function (k) {
        return '<div><dt>' + esc(k.replace(/_/g, ' ')) + '</dt><dd>' + esc(fmtEvidence(k, a.evidence[k])) + '</dd></div>';
      }).join('') + '</dl>';
    } else if (a.evidence !== undefined && a.evidence !== null) {
      evidence = '<dl class="evidence"><div><dt>evidence</dt><dd>' + esc(fmtEvidence('', a.evidence)) + '</dd></div></dl>';
    }
    var active = a.active !== false;
    return '<article class="anomaly ' + esc(a.severity || 'warning') + (active ? '' : ' resolved') + '" data-kind="' + esc(a.kind) + '">' +
      '<div class="title"><span class="kind">' + esc(a.kind) + '</span>' +
      '<span class="chip ' + esc(a.severity || 'warning') + '">' + esc(a.severity || 'warning') + '</span>' +
      '<span class="muted">' + (active ? 'active ' : 'resolved · was ') + esc(fmtSince(a.since)) + '</span></div>' +
      (a.message ? '<div class="message">' + esc(a.message) + '</div>' : '') + evidence +
      (a.suggestion ? '<div class="suggestion">' + esc(a.suggestion) + '</div>' : '') + '</article>';
  }

  // ---------- SVG charts ----------

  var W = 560, H = 190, ML = 62, MR = 12, MT = 10, MB = 24;

  // The smallest 1, 2, 2.5 or 5 × 10^k multiple of four ticks (in the axis' display unit) that holds value.
  function niceCeiling(value, unit) {
    var raw = value / unit / 4;
    if (!(raw > 0)) { return unit; }
    var magnitude = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) {
      if (steps[i] * magnitude >= raw) { return steps[i] * magnitude * 4 * unit; }
    }
    return 10 * magnitude * 4 * unit;
  }

  function chart(name, title, points, series, options) {
    var legend = series.map(function (s) {
      return '<span><span class="swatch' + (s.dashed ? ' dashed' : '') + '" style="background:' + s.color + ';color:' + s.color + '"></span>' + esc(s.label) + '</span>';
    });
    if (options.idleBands) { legend.push('<span><span class="swatch band" style="background:var(--idle-strong)"></span>time idle (shade = share)</span>'); }
    return '<div class="chart" data-chart="' + esc(name) + '"><h3>' + esc(title) + '</h3><div class="legend">' + legend.join('') + '</div>' +
      plot(name, points, series, options) + '</div>';
  }

  function plot(name, points, series, options) {
    var values = [];
    var plotted = 0;
    points.forEach(function (p) {
      var any = false;
      series.forEach(function (s) { if (p[s.key] !== null && p[s.key] !== undefined) { values.push(p[s.key]); any = true; } });
      if (any) { plotted++; }
    });
    // data-from: the oldest point's time (unix seconds), so a test can tell history fetched from the collector
    // from what the page recorded itself since it was opened.
    var open = '<svg class="plot" data-plot="' + esc(name) + '" data-points="' + plotted + '"' +
      (plotted ? ' data-from="' + points[0].t + '"' : '') + ' viewBox="0 0 ' + W + ' ' + H + '" role="img">';
    if (!plotted) {
      return open + '<text class="empty" x="' + (W / 2) + '" y="' + (H / 2) + '" text-anchor="middle">waiting for data…</text></svg>';
    }
    var tMax = points[points.length - 1].t, tMin = Math.min(points[0].t, tMax - MIN_WINDOW_SECONDS);
    var yMin = options.min !== undefined ? options.min : Math.min.apply(null, values);
    var yMax = options.max !== undefined ? options.max : niceCeiling(Math.max.apply(null, values) * 1.05, options.unit || 1);
    if (!(yMax > yMin)) { yMax = yMin + (options.unit || 1); }
    function x(t) { return ML + (t - tMin) / (tMax - tMin || 1) * (W - ML - MR); }
    function y(v) { return MT + (1 - (v - yMin) / (yMax - yMin)) * (H - MT - MB); }

    var out = [open];
    for (var i = 0; i <= 4; i++) {
      var v = yMin + (yMax - yMin) * i / 4, gy = y(v).toFixed(1);
      out.push('<line class="grid" x1="' + ML + '" x2="' + (W - MR) + '" y1="' + gy + '" y2="' + gy + '"/>');
      out.push('<text x="' + (ML - 6) + '" y="' + (Number(gy) + 4) + '" text-anchor="end">' + esc(options.format(v)) + '</text>');
    }
    [tMin, (tMin + tMax) / 2, tMax].forEach(function (t, k) {
      out.push('<text x="' + x(t).toFixed(1) + '" y="' + (H - 6) + '" text-anchor="' + ['start', 'middle', 'end'][k] + '">' + fmtClock(t) + '</text>');
    });
    if (options.idleBands) {
      // A gap is a poll whose buffered samples were partly idle (shaded by that share), or a poll at idle.
      points.forEach(function (p, k) {
        var share = p.idle !== null && p.idle !== undefined ? p.idle
          : (p.utilization !== null && p.utilization < IDLE_UTILIZATION ? 1 : 0);
        if (!(share > 0.05)) { return; }
        var prev = k > 0 ? points[k - 1].t : p.t - 1, next = k + 1 < points.length ? points[k + 1].t : p.t;
        var x0 = x((prev + p.t) / 2), x1 = x((p.t + next) / 2);
        out.push('<rect class="idle-gap" x="' + x0.toFixed(1) + '" y="' + MT + '" width="' + Math.max(2, x1 - x0).toFixed(1) +
          '" height="' + (H - MT - MB) + '" fill="var(--idle-strong)" fill-opacity="' + Math.min(1, share).toFixed(2) + '"/>');
      });
    }
    series.forEach(function (s) {
      var d = '', last = null;
      points.forEach(function (p) {
        var v = p[s.key];
        if (v === null || v === undefined) { d += ' '; last = null; return; }
        var cmd = last === null ? 'M' : 'L';
        d += cmd + x(p.t).toFixed(1) + ',' + y(Math.min(Math.max(v, yMin), yMax)).toFixed(1) + ' ';
        last = p;
      });
      if (d.trim()) {
        out.push('<path d="' + d.trim() + '" fill="none" stroke="' + s.color + '" stroke-width="2"' + (s.dashed ? ' stroke-dasharray="6 4"' : '') + ' stroke-linejoin="round"/>');
      }
      var end = null;
      for (var j = points.length - 1; j >= 0 && end === null; j--) { if (points[j][s.key] !== null && points[j][s.key] !== undefined) { end = points[j]; } }
      if (end && !s.dashed) {
        out.push('<circle cx="' + x(end.t).toFixed(1) + '" cy="' + y(Math.min(Math.max(end[s.key], yMin), yMax)).toFixed(1) + '" r="3" fill="' + s.color + '"/>');
      }
    });
    out.push('</svg>');
    return out.join('');
  }

  window.addEventListener('hashchange', function () {
    state.selected = null;
    state.detail = null;
    state.historyAt = 0;
    render();
    poll();
  });
  poll();
}());
