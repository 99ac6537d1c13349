// Overview: requests, errors, credits and tokens over the last days as SVG
// charts, with the top models and keys. Roles that see no usage get a short
// pointer to what they can do instead.

import { get } from '../api.js';
import { h, fmtNumber, fmtCredits, table } from '../dom.js';
import { lineChart } from '../chart.js';

const DAYS = 14;

function tile(label, value) {
  return h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, label), h('span', { class: 'tile-value' }, value));
}

export async function render(root, ctx) {
  const { me, can } = ctx;
  root.append(h('p', { class: 'lead' }, `Signed in as ${me.email} (${me.role}) in tenant ${me.tenant.name}.`));
  if (!can('usage.view_all') && !can('usage.view_own')) {
    root.append(h('p', {}, 'Your role does not see usage. The menu lists the pages open to it.'));
    return;
  }
  const stats = await get(`/api/v1/stats?days=${DAYS}`);
  const t = stats.totals;
  const series = stats.series || [];
  const days = series.map((d) => d.day);
  const pick = (field) => series.map((d) => Number(d[field]) || 0);
  root.append(
    h('section', { class: 'tiles', 'aria-label': `Totals over ${DAYS} days` },
      tile('Requests', fmtNumber(t.requests)),
      tile('Errors', fmtNumber(t.errors)),
      tile('Credits spent', fmtCredits(t.credits)),
      tile('Tokens', fmtNumber((t.promptTokens || 0) + (t.completionTokens || 0)))),
    h('section', { class: 'charts', 'aria-label': 'Charts' },
      lineChart('Requests and errors per day', days, [
        { name: 'requests', values: pick('requests') },
        { name: 'errors', values: pick('errors') },
      ]),
      lineChart('Credits spent per day', days, [{ name: 'credits', values: pick('credits') }]),
      lineChart('Tokens per day', days, [
        { name: 'prompt tokens', values: pick('promptTokens') },
        { name: 'completion tokens', values: pick('completionTokens') },
      ])),
    h('div', { class: 'two-col' },
      h('section', {}, h('h2', {}, 'Top models'),
        table([
          { label: 'Model', value: (r) => r.model },
          { label: 'Requests', value: (r) => fmtNumber(r.requests), class: 'num' },
          { label: 'Credits', value: (r) => fmtCredits(r.credits), class: 'num' },
        ], stats.topModels || [], { caption: 'Top models', empty: 'No requests in this period.' })),
      h('section', {}, h('h2', {}, 'Top keys'),
        table([
          { label: 'Key', value: (r) => r.keyName || r.keyId },
          { label: 'Requests', value: (r) => fmtNumber(r.requests), class: 'num' },
          { label: 'Credits', value: (r) => fmtCredits(r.credits), class: 'num' },
        ], stats.topKeys || [], { caption: 'Top keys', empty: 'No requests in this period.' }))));
}
