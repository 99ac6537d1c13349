// Usage and billing: usage grouped by key, model and day, with a CSV export
// of the rows; for the roles that see billing, the wallet balance, its
// history, and (with `credits.top_up`) a top-up form.

import { api, get } from '../api.js';
import { h, table, fmtNumber, fmtCredits, fmtDate, errorBox, okBox, show, uid } from '../dom.js';

const RANGES = [7, 30, 90];
const DAY_MS = 86_400_000;

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
  const select = h('select', { id: rangeId }, RANGES.map((d) => h('option', { value: d, selected: d === 30 }, `Last ${d} days`)));
  const results = h('div', { class: 'usage-results' });
  const exportButton = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Export CSV');
  let current = { rows: [], names: new Map(), days: 30 };
  exportButton.addEventListener('click', () => download(`tollgate-usage-${current.days}d.csv`, toCsv(current.rows, current.names)));

  async function load() {
    const days = Number(select.value);
    const from = new Date(Date.now() - days * DAY_MS).toISOString();
    const [report, names] = await Promise.all([get(`/api/v1/usage?from=${encodeURIComponent(from)}`), keyNames(can)]);
    const rows = report.data || [];
    current = { rows, names, days };
    exportButton.disabled = rows.length === 0;
    const name = (r) => names.get(r.keyId) || r.keyId;
    show(results, h('div', {},
      h('p', {}, `${fmtNumber(report.totals.requests)} requests, ${fmtCredits(report.totals.cost)} credits from ${fmtDate(report.from)} to ${fmtDate(report.to)}.`),
      h('h3', {}, 'By key'),
      table([{ label: 'Key', value: name }, ...COUNTS], group(rows, 'keyId'), { caption: 'Usage by key', empty: 'No usage in this period.' }),
      h('h3', {}, 'By model'),
      table([{ label: 'Model', value: (r) => r.model }, ...COUNTS], group(rows, 'model'), { caption: 'Usage by model', empty: 'No usage in this period.' }),
      h('h3', {}, 'By day'),
      table([{ label: 'Day', value: (r) => r.day }, ...COUNTS], group(rows, 'day'), { caption: 'Usage by day', empty: 'No usage in this period.' })));
  }
  select.addEventListener('change', () => load().catch((e) => e.status !== 401 && show(results, errorBox(e, 'Loading usage'))));
  const section = h('section', { 'aria-labelledby': 'usage-title' },
    h('h2', { id: 'usage-title' }, 'Usage'),
    h('div', { class: 'toolbar' }, h('label', { for: rangeId }, 'Period'), select, exportButton),
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
