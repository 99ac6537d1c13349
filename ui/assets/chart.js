// A small hand-written SVG line chart: one or more series over days, with
// a zero-based y axis, gridlines and a legend. Colours come from CSS
// classes (series-0, series-1, ...), so the page's stylesheet owns them and
// no inline style is needed under the Content-Security-Policy.

import { h, s, fmtNumber } from './dom.js';

const WIDTH = 600;
const HEIGHT = 220;
const PAD = { top: 14, right: 14, bottom: 30, left: 70 };

function niceMax(value) {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (value <= step * magnitude) return step * magnitude;
  }
  return 10 * magnitude;
}

function short(n) {
  if (n >= 1e6) return `${fmtNumber(n / 1e6)}M`;
  if (n >= 1e4) return `${fmtNumber(n / 1e3)}k`;
  if (Number.isInteger(n)) return fmtNumber(n);
  return n >= 1 ? n.toFixed(1) : String(Number(n.toPrecision(2)));
}

/**
 * days: ['2025-01-01', ...]; series: [{name, values: [numbers]}].
 * Returns a <figure> with the SVG, a legend and a text summary for screen
 * readers.
 */
export function lineChart(title, days, series) {
  const max = niceMax(Math.max(0, ...series.flatMap((one) => one.values)));
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i) => PAD.left + (days.length <= 1 ? innerW / 2 : (i * innerW) / (days.length - 1));
  const y = (v) => PAD.top + innerH - (v / max) * innerH;

  const grid = [0, 0.5, 1].map((f) => {
    const value = max * f;
    return s('g', { class: 'grid' },
      s('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }),
      s('text', { x: PAD.left - 6, y: y(value) + 4, 'text-anchor': 'end' }, short(value)));
  });
  const labelAt = [...new Set([0, Math.floor((days.length - 1) / 2), days.length - 1])].filter((i) => i >= 0);
  const xLabels = labelAt.map((i) => s('text', {
    class: 'axis-label', x: x(i), y: HEIGHT - 8,
    'text-anchor': i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle',
  }, days[i].slice(5)));
  const lines = series.map((one, n) => s('g', { class: `series series-${n}` },
    s('polyline', { fill: 'none', points: one.values.map((v, i) => `${x(i)},${y(v)}`).join(' ') }),
    one.values.map((v, i) => s('circle', { cx: x(i), cy: y(v), r: 3 },
      s('title', {}, `${days[i]}: ${fmtNumber(v)} ${one.name}`)))));

  const totals = series.map((one) => `${one.name} ${short(one.values.reduce((a, b) => a + b, 0))}`).join(', ');
  const summary = `${title}, ${days[0] || ''} to ${days[days.length - 1] || ''}: ${totals}.`;
  return h('figure', { class: 'chart' },
    h('figcaption', {}, title),
    s('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': summary, focusable: 'false' },
      grid, xLabels, lines),
    h('ul', { class: 'legend' }, series.map((one, n) => h('li', {},
      h('span', { class: `swatch series-${n}`, 'aria-hidden': 'true' }), one.name))));
}
