// The audit log (`audit.view`: auditor, owner): entries newest first,
// filtered by action (a prefix), actor and time, a page at a time; one
// entry whole (details, its hash and the one before); and Verify, which
// walks the whole hash chain on the server and says it is intact or names
// the first broken entry.

import { get } from '../api.js';
import { h, badge, table, fmtDate, errorBox, okBox, show, uid, localToIso, latestLoad } from '../dom.js';
import { facts, jsonBlock, recordDialog } from '../records.js';

const PAGE_SIZE = 50;

function field(label, input) {
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
}

function outcomeBadge(outcome) {
  if (!outcome) return '—';
  return badge(outcome, /^(ok|success|2\d\d)$/.test(outcome) ? 'active' : 'outcome');
}

function showEntry(entry) {
  return recordDialog(`Audit entry #${entry.seq}`, h('div', {},
    facts([
      ['Sequence', String(entry.seq)],
      ['Time', fmtDate(entry.at)],
      ['Tenant', entry.tenantId],
      ['Actor', h('code', {}, entry.actor)],
      ['Action', entry.action],
      ['Target', entry.target],
      ['Outcome', entry.outcome],
      ['Hash', h('code', {}, entry.hash)],
      ['Previous hash', h('code', {}, entry.prevHash)],
    ]),
    h('h3', {}, 'Details'),
    jsonBlock(entry.details, 'Entry details')));
}

export async function render(root) {
  const message = h('div', { class: 'messages' });
  const verdict = h('div', { class: 'verdict', 'aria-live': 'polite' });
  const list = h('div', {});
  const pager = h('div', { class: 'toolbar pager' });
  const action = h('input', { id: uid('action'), name: 'action', type: 'search', autocomplete: 'off', placeholder: 'e.g. POST /api/v1/keys' });
  const actor = h('input', { id: uid('actor'), name: 'actor', type: 'search', autocomplete: 'off', placeholder: 'e.g. account:…' });
  const from = h('input', { id: uid('from'), name: 'from', type: 'datetime-local' });
  const to = h('input', { id: uid('to'), name: 'to', type: 'datetime-local' });
  // Older pages are reached with `before=<seq>`; the stack keeps the way back.
  let cursors = [null];

  async function run(what, job) {
    message.replaceChildren();
    try {
      await job();
    } catch (e) {
      if (e.status !== 401) show(message, errorBox(e, what));
    }
  }

  function query(before) {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (action.value.trim()) params.set('action', action.value.trim());
    if (actor.value.trim()) params.set('actor', actor.value.trim());
    if (from.value) params.set('from', localToIso(from.value));
    if (to.value) params.set('to', localToIso(to.value));
    if (before) params.set('before', String(before));
    return `/api/v1/audit?${params}`;
  }

  const loading = latestLoad();
  async function load() {
    const isLatest = loading();
    const before = cursors[cursors.length - 1];
    const { data, nextBefore } = await get(query(before));
    if (!isLatest()) return;
    show(list, table([
      { label: 'Seq', value: (e) => String(e.seq), class: 'num' },
      { label: 'Time', value: (e) => fmtDate(e.at) },
      { label: 'Actor', value: (e) => h('code', {}, e.actor) },
      { label: 'Action', value: (e) => h('span', { class: 'audit-action' }, e.action) },
      { label: 'Target', value: (e) => (e.target ? h('code', {}, e.target) : '—') },
      { label: 'Outcome', value: (e) => outcomeBadge(e.outcome) },
      { label: 'Entry', value: (e) => h('button', { type: 'button', class: 'secondary small', 'aria-label': `Show entry ${e.seq}`, onclick: () => showEntry(e) }, 'Show'), class: 'actions-cell' },
    ], data, { caption: 'Audit entries', empty: 'No entry matches these filters.' }));
    for (const [i, row] of [...list.querySelectorAll('tbody tr')].entries()) row.dataset.seq = String(data[i].seq);
    const page = cursors.length;
    pager.replaceChildren(
      h('button', { type: 'button', class: 'secondary', disabled: page === 1, onclick: () => run('Listing entries', async () => { cursors.pop(); await load(); }) }, '← Newer'),
      h('span', { class: 'muted' }, `Page ${page}`),
      h('button', { type: 'button', class: 'secondary', disabled: !nextBefore, onclick: () => run('Listing entries', async () => { cursors.push(nextBefore); await load(); }) }, 'Older →'));
  }

  async function verify() {
    verdict.replaceChildren(h('p', { class: 'muted' }, 'Verifying the whole chain…'));
    const result = await get('/api/v1/audit/verify');
    if (result.valid) {
      show(verdict, okBox(`The chain is intact: ${result.entries} entries verified.`));
    } else {
      show(verdict, h('div', { class: 'notice error', role: 'alert' },
        h('strong', {}, `The chain is broken at entry #${result.firstBroken.seq}: `),
        result.firstBroken.reason,
        ` (${result.entries} entries before it verified).`));
    }
  }

  const filters = h('form', { class: 'inline-form', 'aria-label': 'Filter entries' },
    field('Action starts with', action),
    field('Actor', actor),
    field('From (UTC)', from),
    field('To (UTC)', to),
    h('button', { type: 'submit', class: 'primary' }, 'Apply filters'));
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    cursors = [null];
    run('Listing entries', load);
  });

  root.append(
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', class: 'secondary', onclick: () => run('Verifying the chain', verify) }, 'Verify chain'),
      h('span', { class: 'muted' }, 'Checks every entry\'s hash against the one before it.')),
    verdict,
    filters,
    message,
    list,
    pager);
  await load();
}
