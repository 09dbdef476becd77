// Line charts as inline SVG: a run's points over time, with dashed predictions and shaded idle gaps.
import { esc, fmtClock } from './format.js';

const MIN_WINDOW_SECONDS = 60;    // a chart spans at least this much time, so the first points do not fill it
const IDLE_BAND_SHARE = 0.5;    // a poll is shaded when its GPUs were idle at least this share of it
const IDLE_UTILIZATION = 0.2;     // below this the GPU counts as idle in the utilisation chart's shaded gaps
const W = 560, H = 190, ML = 62, MR = 12, MT = 10, MB = 24;

// The smallest 1, 2, 2.5 or 5 × 10^k multiple of four ticks (in the axis' display unit) that holds value.
function niceCeiling(value, unit) {
  const raw = value / unit / 4;
  if (!(raw > 0)) { return unit; }
  const magnitude = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * magnitude >= raw) { return step * magnitude * 4 * unit; }
  }
  return 10 * magnitude * 4 * unit;
}

/**
 * A titled chart with its legend. series: [{key, label, color, dashed}]; options: {format, min, max, unit,
 * idleBands, empty (what to say when no point has a value: "waiting for data…" unless the caller knows why)}.
 */
export function chart(name, title, points, series, options) {
  const legend = series.map((s) =>
    '<span><span class="swatch' + (s.dashed ? ' dashed' : '') + '" style="background:' + s.color + ';color:' + s.color + '"></span>' + esc(s.label) + '</span>');
  if (options.idleBands) { legend.push('<span><span class="swatch band" style="background:var(--idle-strong)"></span>mostly idle (over half the time; shade = share)</span>'); }
  return '<div class="chart" data-chart="' + esc(name) + '"><h3>' + esc(title) + '</h3><div class="legend">' + legend.join('') + '</div>' +
    plot(name, points, series, options) + '</div>';
}

function plot(name, points, series, options) {
  const values = [];
  let plotted = 0;
  points.forEach((p) => {
    let any = false;
    series.forEach((s) => { if (p[s.key] !== null && p[s.key] !== undefined) { values.push(p[s.key]); any = true; } });
    if (any) { plotted++; }
  });
  // data-from: the oldest point's time (unix seconds), so a test can tell history fetched from the collector
  // from what the page recorded itself since it was opened.
  const open = '<svg class="plot" data-plot="' + esc(name) + '" data-points="' + plotted + '"' +
    (plotted ? ' data-from="' + points[0].t + '"' : '') + ' viewBox="0 0 ' + W + ' ' + H + '" role="img">';
  if (!plotted) {
    return open + '<text class="empty" x="' + (W / 2) + '" y="' + (H / 2) + '" text-anchor="middle">' + esc(options.empty || 'waiting for data…') + '</text></svg>';
  }
  const tMax = points[points.length - 1].t, tMin = Math.min(points[0].t, tMax - MIN_WINDOW_SECONDS);
  const yMin = options.min !== undefined ? options.min : Math.min(...values);
  let yMax = options.max !== undefined ? options.max : niceCeiling(Math.max(...values) * 1.05, options.unit || 1);
  if (!(yMax > yMin)) { yMax = yMin + (options.unit || 1); }
  const x = (t) => ML + (t - tMin) / (tMax - tMin || 1) * (W - ML - MR);
  const y = (v) => MT + (1 - (v - yMin) / (yMax - yMin)) * (H - MT - MB);

  const out = [open];
  for (let i = 0; i <= 4; i++) {
    const v = yMin + (yMax - yMin) * i / 4, gy = y(v).toFixed(1);
    out.push('<line class="grid" x1="' + ML + '" x2="' + (W - MR) + '" y1="' + gy + '" y2="' + gy + '"/>');
    out.push('<text x="' + (ML - 6) + '" y="' + (Number(gy) + 4) + '" text-anchor="end">' + esc(options.format(v)) + '</text>');
  }
  [tMin, (tMin + tMax) / 2, tMax].forEach((t, k) => {
    out.push('<text x="' + x(t).toFixed(1) + '" y="' + (H - 6) + '" text-anchor="' + ['start', 'middle', 'end'][k] + '">' + fmtClock(t) + '</text>');
  });
  if (options.idleBands) {
    // A gap is a poll whose buffered samples were partly idle (shaded by that share), or a poll at idle.
    points.forEach((p, k) => {
      const share = p.idle !== null && p.idle !== undefined ? p.idle
        : (p.utilization !== null && p.utilization < IDLE_UTILIZATION ? 1 : 0);
      // Only where the GPUs were idle more than busy: a band over 75%-busy GPUs would read as "idle".
      if (!(share >= IDLE_BAND_SHARE)) { return; }
      const prev = k > 0 ? points[k - 1].t : p.t - 1, next = k + 1 < points.length ? points[k + 1].t : p.t;
      const x0 = x((prev + p.t) / 2), x1 = x((p.t + next) / 2);
      out.push('<rect class="idle-gap" x="' + x0.toFixed(1) + '" y="' + MT + '" width="' + Math.max(2, x1 - x0).toFixed(1) +
        '" height="' + (H - MT - MB) + '" fill="var(--idle-strong)" fill-opacity="' + Math.min(1, share).toFixed(2) + '"/>');
    });
  }
  series.forEach((s) => {
    let end = null;
    for (let j = points.length - 1; j >= 0 && end === null; j--) { if (points[j][s.key] !== null && points[j][s.key] !== undefined) { end = points[j]; } }
    let d = '', last = null;
    points.forEach((p) => {
      const v = p[s.key];
      if (v === null || v === undefined) { d += ' '; last = null; return; }
      const cmd = last === null ? 'M' : 'L';
      d += cmd + x(p.t).toFixed(1) + ',' + y(Math.min(Math.max(v, yMin), yMax)).toFixed(1) + ' ';
      last = p;
    });
    if (d.trim()) {
      // data-series and data-last: which line this is and its newest value, for tests and tooltips alike.
      out.push('<path data-series="' + esc(s.key) + '" data-last="' + Number(end[s.key].toFixed(4)) + '" d="' + d.trim() + '" fill="none" stroke="' + s.color + '" stroke-width="2"' + (s.dashed ? ' stroke-dasharray="6 4"' : '') + ' stroke-linejoin="round"/>');
    }
    if (end && !s.dashed) {
      out.push('<circle cx="' + x(end.t).toFixed(1) + '" cy="' + y(Math.min(Math.max(end[s.key], yMin), yMax)).toFixed(1) + '" r="3" fill="' + s.color + '"/>');
    }
  });
  out.push('</svg>');
  return out.join('');
}
