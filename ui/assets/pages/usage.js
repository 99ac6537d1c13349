// Usage and billing: requests per day by model and by key as SVG charts,
// usage grouped by key, model, endpoint and day, with a CSV export of the
// rows; the period and the endpoint are filters that query the API again.
// For the roles that see billing, the wallet balance, its history, and
// (with `credits.top_up`) a top-up form.

import { api, get } from '../api.js';
import { h, table, fmtNumber, fmtCredits, fmtDate, errorBox, okBox, show, uid, latestLoad } from '../dom.js';
import { lineChart } from '../chart.js';

const RANGES = [7, 30, 90];
const DAY_MS = 86_400_000;
// The API's closed set (docs/billing.md#endpoints), with their labels.
const ENDPOINTS = [
  ['chat', 'Chat completions'],
  ['messages', 'Messages (Anthropic)'],
  ['generate_content', 'Generate content (Gemini)'],
  ['images', 'Images'],
  ['audio', 'Audio'],
  ['embeddings', 'Embeddings'],
  ['responses', 'Responses'],
  ['completions', 'Completions (legacy)'],
];
const ENDPOINT_LABELS = new Map(ENDPOINTS);
// Series a chart draws; the rest are summed as one "other" series.
const MAX_SERIES = 5;

function group(rows, field) {
  const sums = new Map();
  for (const row of rows) {
    const key = row[field];
    const sum = sums.get(key) || { [field]: key, requests: 0, promptTokens: 0, completionTokens: 0, cost: 0 };
    sum.requests += row.requests;
    sum.promptTokens += row.promptTokens;
    sum.completionTokens += row.completionTokens;
    sum.cost += Number(row.cost) || 0;
    sums.set(key, sum);
  }
  return [...sums.values()];
}

const COUNTS = [
  { label: 'Requests', value: (r) => fmtNumber(r.requests), class: 'num' },
  { label: 'Prompt tokens', value: (r) => fmtNumber(r.promptTokens), class: 'num' },
  { label: 'Completion tokens', value: (r) => fmtNumber(r.completionTokens), class: 'num' },
  { label: 'Credits', value: (r) => fmtCredits(r.cost), class: 'num' },
];

// The report's rows are per day, key, model and endpoint; the CSV keeps its
// day, key and model columns, so rows of one day, key and model are summed.
function withoutEndpoint(rows) {
  const sums = new Map();
  for (const row of rows) {
    const id = JSON.stringify([row.day, row.keyId, row.model]);
    const sum = sums.get(id) || { day: row.day, keyId: row.keyId, model: row.model, requests: 0, promptTokens: 0, completionTokens: 0, cost: 0 };
    sum.requests += row.requests;
    sum.promptTokens += row.promptTokens;
    sum.completionTokens += row.completionTokens;
    sum.cost = Number((sum.cost + (Number(row.cost) || 0)).toFixed(6));
    sums.set(id, sum);
  }
  return [...sums.values()];
}

// Every UTC day from `from` to `to` (RFC 3339), as YYYY-MM-DD.
function daysBetween(from, to) {
  const days = [];
  const last = new Date(to).getTime() - 1;
  for (let t = Date.parse(`${from.slice(0, 10)}T00:00:00Z`); t <= last; t += DAY_MS) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

// Requests per day for each value of `field`: the busiest MAX_SERIES, then
// "other" for the rest.
function seriesBy(rows, field, days, label) {
  const index = new Map(days.map((d, i) => [d, i]));
  const per = new Map();
  for (const row of rows) {
    const values = per.get(row[field]) || days.map(() => 0);
    const i = index.get(row.day);
    if (i !== undefined) values[i] += row.requests;
    per.set(row[field], values);
  }
  const total = (values) => values.reduce((a, b) => a + b, 0);
  const ranked = [...per.entries()].sort((a, b) => total(b[1]) - total(a[1]) || String(a[0]).localeCompare(String(b[0])));
  const shown = ranked.slice(0, MAX_SERIES).map(([value, values]) => ({ name: label(value), values }));
  const rest = ranked.slice(MAX_SERIES);
  if (rest.length > 0) {
    shown.push({ name: `${rest.length} other`, values: days.map((_, i) => rest.reduce((sum, [, values]) => sum + values[i], 0)) });
  }
  return shown;
}

function charts(report, rows, name, endpoint) {
  if (rows.length === 0) return null;
  const days = daysBetween(report.from, report.to);
  const scope = endpoint ? ` (${ENDPOINT_LABELS.get(endpoint)})` : '';
  return h('section', { class: 'charts', 'aria-label': 'Usage charts' },
    lineChart(`Requests per day by model${scope}`, days, seriesBy(rows, 'model', days, (m) => m)),
    lineChart(`Requests per day by key${scope}`, days, seriesBy(rows, 'keyId', days, (k) => name({ keyId: k }))));
}

function csvCell(value) {
  const text = value === null || value === undefined ? '' : String(value);
  // OWASP's rule: a cell starting with = + - @, a tab or a carriage return
  // could be run as a formula by a spreadsheet, so it gets a leading quote.
  // Negative numbers too (`-2+3+cmd|...` starts like one); a usage CSV has
  // none, its counts and costs are never below zero.
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function toCsv(rows, names) {
  const header = ['day', 'keyId', 'keyName', 'model', 'requests', 'promptTokens', 'completionTokens', 'cost'];
  const lines = rows.map((r) => [r.day, r.keyId, names.get(r.keyId) || '', r.model, r.requests, r.promptTokens, r.completionTokens, r.cost].map(csvCell).join(','));
  return `${[header.join(','), ...lines].join('\n')}\n`;
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const link = h('a', { href: url, download: name, class: 'sr-only' }, name);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function keyNames(can) {
  if (!can('keys.manage_all') && !can('keys.manage_own')) return new Map();
  try {
    const { data } = await get('/api/v1/keys');
    return new Map(data.map((k) => [k.id, k.keyName]));
  } catch (e) {
    if (e.status === 401) throw e;
    return new Map();
  }
}

function usageSection(can) {
  const rangeId = uid('range');
  const endpointId = uid('endpoint');
  const select = h('select', { id: rangeId }, RANGES.map((d) => h('option', { value: d, selected: d === 30 }, `Last ${d} days`)));
  const endpointSelect = h('select', { id: endpointId },
    h('option', { value: '' }, 'All endpoints'),
    ENDPOINTS.map(([value, label]) => h('option', { value }, label)));
  const results = h('div', { class: 'usage-results' });
  const exportButton = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Export CSV');
  let current = { rows: [], names: new Map(), days: 30 };
  exportButton.addEventListener('click', () => {
    const scope = current.endpoint ? `-${current.endpoint}` : '';
    download(`tollgate-usage-${current.days}d${scope}.csv`, toCsv(current.rows, current.names));
  });

  const loading = latestLoad();
  async function load() {
    const isLatest = loading();
    const days = Number(select.value);
    const endpoint = endpointSelect.value;
    const from = new Date(Date.now() - days * DAY_MS).toISOString();
    const query = `from=${encodeURIComponent(from)}${endpoint ? `&endpoint=${encodeURIComponent(endpoint)}` : ''}`;
    const [report, names] = await Promise.all([get(`/api/v1/usage?${query}`), keyNames(can)]);
    if (!isLatest()) return;
    const rows = report.data || [];
    current = { rows: withoutEndpoint(rows), names, days, endpoint };
    exportButton.disabled = rows.length === 0;
    const name = (r) => names.get(r.keyId) || r.keyId;
    const scope = endpoint ? ` on ${ENDPOINT_LABELS.get(endpoint)}` : '';
    show(results, h('div', {},
      h('p', {}, `${fmtNumber(report.totals.requests)} requests, ${fmtCredits(report.totals.cost)} credits${scope} from ${fmtDate(report.from)} to ${fmtDate(report.to)}.`),
      charts(report, rows, name, endpoint),
      h('h3', {}, 'By endpoint'),
      table([{ label: 'Endpoint', value: (r) => ENDPOINT_LABELS.get(r.endpoint) || r.endpoint }, ...COUNTS], report.byEndpoint || [], { caption: 'Usage by endpoint', empty: 'No usage in this period.' }),
      h('h3', {}, 'By key'),
      table([{ label: 'Key', value: name }, ...COUNTS], group(rows, 'keyId'), { caption: 'Usage by key', empty: 'No usage in this period.' }),
      h('h3', {}, 'By model'),
      table([{ label: 'Model', value: (r) => r.model }, ...COUNTS], group(rows, 'model'), { caption: 'Usage by model', empty: 'No usage in this period.' }),
      h('h3', {}, 'By day'),
      table([{ label: 'Day', value: (r) => r.day }, ...COUNTS], group(rows, 'day'), { caption: 'Usage by day', empty: 'No usage in this period.' })));
  }
  const reload = () => load().catch((e) => e.status !== 401 && show(results, errorBox(e, 'Loading usage')));
  select.addEventListener('change', reload);
  endpointSelect.addEventListener('change', reload);
  const section = h('section', { 'aria-labelledby': 'usage-title' },
    h('h2', { id: 'usage-title' }, 'Usage'),
    h('div', { class: 'toolbar' },
      h('label', { for: rangeId }, 'Period'), select,
      h('label', { for: endpointId }, 'Endpoint'), endpointSelect,
      exportButton),
    results);
  return { section, load };
}

function billingSection(ctx) {
  const { can } = ctx;
  const balance = h('span', { class: 'tile-value', id: 'wallet-balance' }, fmtCredits(ctx.me.tenant.walletBalance));
  const history = h('div', {});
  const message = h('div', { class: 'messages' });

  async function loadHistory() {
    const { data } = await get('/api/v1/billing/history');
    show(history, table([
      { label: 'When', value: (r) => (r.type === 'top_up' ? fmtDate(r.at) : r.day) },
      { label: 'What', value: (r) => (r.type === 'top_up' ? 'Top-up' : `Charges (${fmtNumber(r.requests)} requests)`) },
      { label: 'Amount', value: (r) => fmtCredits(r.amount), class: 'num' },
      { label: 'Balance after', value: (r) => fmtCredits(r.balanceAfter), class: 'num' },
    ], data, { caption: 'Billing history', empty: 'No top-ups or charges yet.' }));
  }

  let topUp = null;
  if (can('credits.top_up')) {
    const amountId = uid('amount');
    const amount = h('input', { id: amountId, type: 'number', min: '0.000001', step: 'any', required: true });
    topUp = h('form', { class: 'inline-form', 'aria-label': 'Top up the wallet' },
      h('div', { class: 'field' }, h('label', { for: amountId }, 'Credits to add'), amount),
      h('button', { type: 'submit', class: 'primary' }, 'Top up'));
    topUp.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.replaceChildren();
      try {
        const tenant = await api('POST', `/api/v1/tenants/${encodeURIComponent(ctx.me.tenant.id)}/credits`, { amount: Number(amount.value) });
        balance.textContent = fmtCredits(tenant.walletBalance);
        show(message, okBox(`Added ${fmtCredits(Number(amount.value))} credits. The balance is now ${fmtCredits(tenant.walletBalance)}.`));
        amount.value = '';
        await loadHistory();
      } catch (e) {
        if (e.status !== 401) show(message, errorBox(e, 'Top-up'));
      }
    });
  }

  const section = h('section', { 'aria-labelledby': 'billing-title' },
    h('h2', { id: 'billing-title' }, 'Billing'),
    h('div', { class: 'tiles' }, h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, `Wallet of ${ctx.me.tenant.name}`), balance)),
    topUp, message,
    h('h3', {}, 'History'), history);
  return { section, load: loadHistory };
}

export async function render(root, ctx) {
  const { can } = ctx;
  const loads = [];
  if (can('usage.view_all') || can('usage.view_own')) {
    const usage = usageSection(can);
    root.append(usage.section);
    loads.push(usage.load());
  }
  if (can('billing.view')) {
    const me = await ctx.refreshMe();
    const billing = billingSection({ ...ctx, me });
    root.append(billing.section);
    loads.push(billing.load());
  }
  await Promise.all(loads);
}
