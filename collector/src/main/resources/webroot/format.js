// How the page writes numbers, times and units. Pure functions: no DOM, no state.

export const GIB = 1024 * 1024 * 1024;

export function esc(value) {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
export function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
/** The first argument that is a finite number, else null. */
export function first(...values) {
  for (const v of values) { if (num(v) !== null) { return v; } }
  return null;
}

export function fmtBytes(b) {
  b = num(b);
  if (b === null) { return '–'; }
  if (b === 0 || Math.abs(b) >= GIB) { return (b / GIB).toFixed(b === 0 ? 0 : 1) + ' GiB'; }
  return (b / (1024 * 1024)).toFixed(0) + ' MiB';
}
export function fmtSeconds(s) {
  s = num(s);
  if (s === null) { return '–'; }
  return s < 10 ? s.toFixed(2) + ' s' : s.toFixed(1) + ' s';
}
export function fmtRatio(r) { r = num(r); return r === null ? '–' : (r * 100).toFixed(0) + ' %'; }
/** How many times one figure is another, as the collector's messages write it: "87.5×" (digits: after the point). */
export function fmtTimes(r, digits) { r = num(r); return r === null ? '–' : r.toFixed(digits === undefined ? 1 : digits) + '×'; }
export function fmtPercent(r) { r = num(r); return r === null ? '–' : (r * 100).toFixed(r < 0.1 ? 1 : 0) + ' %'; }
export function fmtRate(r) { r = num(r); return r === null ? '–' : (r >= 100 ? r.toFixed(0) : r.toFixed(1)); }
export function fmtDuration(s) {
  s = num(s);
  if (s === null || s < 0) { return '–'; }
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d > 0) { return d + 'd ' + h + 'h'; }
  if (h > 0) { return h + 'h ' + m + 'm'; }
  if (m > 0) { return m + 'm ' + Math.floor(s % 60) + 's'; }
  return Math.floor(s) + 's';
}
export function fmtGpuHours(h) { h = num(h); return h === null ? '–' : (h >= 100 ? h.toFixed(0) : h >= 1 ? h.toFixed(1) : h.toFixed(2)) + ' GPU-h'; }
export function fmtMoney(v) { v = num(v); return v === null ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2); }
export function fmtEnergy(j) {
  j = num(j);
  if (j === null) { return '–'; }
  const kwh = j / 3.6e6;
  return kwh >= 1000 ? (kwh / 1000).toFixed(1) + ' MWh' : kwh >= 1 ? kwh.toFixed(1) + ' kWh' : (j / 3600).toFixed(0) + ' Wh';
}

/** Unix seconds from unix seconds, unix milliseconds or an ISO time; null when it is none of them. */
export function toSeconds(t) {
  if (typeof t === 'number') { return t > 1e12 ? t / 1000 : t; }
  if (typeof t === 'string') { const ms = Date.parse(t); return isNaN(ms) ? null : ms / 1000; }
  return null;
}
function two(n) { return (n < 10 ? '0' : '') + n; }
export function fmtClock(t) {
  const d = new Date(t * 1000);
  return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds());
}
/** "2026-11-25 14:03:04": a date and time, local, on the same 24-hour clock as fmtClock. */
export function fmtDateTime(t) {
  const s = toSeconds(t);
  if (s === null) { return '–'; }
  const d = new Date(s * 1000);
  return d.getFullYear() + '-' + two(d.getMonth() + 1) + '-' + two(d.getDate()) + ' ' + fmtClock(s);
}
/** "since 12:03:04 (5m 2s ago)", with now the collector's clock (unix seconds). */
export function fmtSince(t, now) {
  const s = toSeconds(t);
  if (s === null) { return ''; }
  return 'since ' + fmtClock(s) + ' (' + fmtDuration(Math.max(0, now - s)) + ' ago)';
}

// Ratios of one figure to the same figure predicted or of the others (step time, memory, the slowest rank): the
// anomaly's message says "87.5× slower", so its evidence says 87.5× too, not 8745 %.
const TIMES_KEYS = /^(step_time|memory|slowest_rank|throughput)_ratio$/;

// Evidence values carry their unit in their key, as the API's names do.
export function fmtEvidence(key, value) {
  if (typeof value === 'number') {
    if (TIMES_KEYS.test(key)) { return fmtTimes(value); }
    // Unix seconds (last_step_ts, announced_phase_ts, …): a date, never "1.797e+9".
    if (/_ts$|_at$/.test(key) && value > 1e8) { return fmtDateTime(value); }
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
  if (Array.isArray(value)) { return value.map((v) => typeof v === 'object' ? JSON.stringify(v) : String(v)).join(', '); }
  if (value && typeof value === 'object') { return JSON.stringify(value); }
  return String(value);
}

/** "DiT-XL/2 · 2×a100-80gb · batch 32/GPU · …": a spec in one line. */
export function specLine(spec, estimate) {
  spec = spec || {};
  estimate = estimate || {};
  const parts = [];
  const model = estimate.model || spec.model;
  const gpu = estimate.gpu || spec.gpu;
  if (model) { parts.push(model); }
  if (gpu) { parts.push((spec.gpus && spec.gpus > 1 ? spec.gpus + '×' : '') + gpu); }
  if (spec.batch) { parts.push('batch ' + spec.batch + '/GPU'); }
  if (spec.height && spec.width) { parts.push(spec.width + '×' + spec.height + ' px'); } else if (spec.resolution) { parts.push(spec.resolution + ' px'); }
  if (spec.frames) { parts.push(spec.frames + ' frames'); }
  parts.push(spec.precision, spec.optimizer, spec.features && spec.features + ' features',
    spec.grad_checkpointing && 'grad checkpointing', spec.ema && 'EMA', spec.zero && 'ZeRO-' + spec.zero);
  return parts.filter(Boolean).join(' · ');
}
