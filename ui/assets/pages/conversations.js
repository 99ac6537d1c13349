// The conversation log (Articles 12 and 26; `conversations.view`: auditor,
// owner): records searched by end user, key, risk level and time, a page
// at a time; one record whole with its request, answer, classification and
// cost. Bodies are shown as stored: with `piiRedaction` at `logs` (the
// default) personal data is already a placeholder such as [EMAIL_1].

import { get } from '../api.js';
import { h, table, fmtDate, fmtCredits, errorBox, show, uid, localToIso, latestLoad } from '../dom.js';
import { excerpt, facts, jsonBlock, lastUserText, levelBadge, recordDialog, transcript } from '../records.js';

const LEVELS = ['minimal', 'limited', 'high', 'prohibited'];
const PAGE_SIZE = 50;

function field(label, input) {
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
}

function showRecord(record) {
  return recordDialog(`Request ${record.requestId}`, h('div', { class: 'conversation-record' },
    facts([
      ['Time', fmtDate(record.at)],
      ['Key', h('code', {}, record.keyId)],
      ['End user', record.endUserId],
      ['Purpose', record.purpose],
      ['Model', h('code', {}, record.model)],
      ['Risk level', levelBadge(record.riskLevel)],
      ['Triggered rules', (record.triggeredRules || []).join(', ')],
      ['Cost (credits)', fmtCredits(record.cost)],
      ['Kept until', fmtDate(record.expiresAt)],
      ['Erased', record.erased ? 'yes: the bodies were erased on request' : 'no'],
    ]),
    h('h3', {}, 'Request and answer'),
    transcript(record.request, record.response),
    record.deployerContext ? [h('h3', {}, 'Deployer context'), jsonBlock(record.deployerContext, 'Deployer context')] : null));
}

export async function render(root) {
  const message = h('div', { class: 'messages' });
  const list = h('div', {});
  const pager = h('div', { class: 'toolbar pager' });
  const endUser = h('input', { id: uid('enduser'), name: 'endUserId', type: 'search', autocomplete: 'off' });
  const key = h('input', { id: uid('key'), name: 'keyId', type: 'search', autocomplete: 'off', placeholder: 'key id' });
  const level = h('select', { id: uid('level'), name: 'level' },
    h('option', { value: '' }, 'any'), LEVELS.map((l) => h('option', { value: l }, l)));
  const from = h('input', { id: uid('from'), name: 'from', type: 'datetime-local' });
  const to = h('input', { id: uid('to'), name: 'to', type: 'datetime-local' });
  // Further pages come with the answer's cursor; the stack keeps the way back.
  let cursors = [null];

  async function run(what, job) {
    message.replaceChildren();
    try {
      await job();
    } catch (e) {
      if (e.status !== 401) show(message, errorBox(e, what));
    }
  }

  function query(cursor) {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (endUser.value.trim()) params.set('endUserId', endUser.value.trim());
    if (key.value.trim()) params.set('keyId', key.value.trim());
    if (level.value) params.set('level', level.value);
    if (from.value) params.set('from', localToIso(from.value));
    if (to.value) params.set('to', localToIso(to.value));
    if (cursor) params.set('cursor', cursor);
    return `/api/v1/conversations?${params}`;
  }

  async function open(record) {
    // The list carries the bodies too; the record is read again so the
    // dialog shows what the log holds now (an erasure may have emptied it).
    await showRecord(await get(`/api/v1/conversations/${encodeURIComponent(record.requestId)}`));
  }

  const loading = latestLoad();
  async function load() {
    const isLatest = loading();
    const { data, nextCursor } = await get(query(cursors[cursors.length - 1]));
    if (!isLatest()) return;
    show(list, table([
      { label: 'Time', value: (c) => fmtDate(c.at) },
      { label: 'Request', value: (c) => h('span', { class: 'excerpt' }, c.erased ? '(erased)' : excerpt(lastUserText(c.request), 90) || '—') },
      { label: 'End user', value: (c) => c.endUserId || '—' },
      { label: 'Key', value: (c) => h('code', {}, c.keyId) },
      { label: 'Model', value: (c) => h('code', {}, c.model) },
      { label: 'Level', value: (c) => levelBadge(c.riskLevel) },
      { label: 'Credits', value: (c) => fmtCredits(c.cost), class: 'num' },
      { label: 'Record', value: (c) => h('button', { type: 'button', class: 'secondary small', 'aria-label': `Open request ${c.requestId}`, onclick: () => run('Opening the record', () => open(c)) }, 'Open'), class: 'actions-cell' },
    ], data, { caption: 'Conversation records', empty: 'No record matches this search.' }));
    for (const [i, row] of [...list.querySelectorAll('tbody tr')].entries()) row.dataset.request = data[i].requestId;
    const page = cursors.length;
    pager.replaceChildren(
      h('button', { type: 'button', class: 'secondary', disabled: page === 1, onclick: () => run('Listing records', async () => { cursors.pop(); await load(); }) }, '← Newer'),
      h('span', { class: 'muted' }, `Page ${page}`),
      h('button', { type: 'button', class: 'secondary', disabled: !nextCursor, onclick: () => run('Listing records', async () => { cursors.push(nextCursor); await load(); }) }, 'Older →'));
  }

  const search = h('form', { class: 'inline-form', 'aria-label': 'Search records' },
    field('End user id', endUser),
    field('Key id', key),
    field('Risk level', level),
    field('From (UTC)', from),
    field('To (UTC)', to),
    h('button', { type: 'submit', class: 'primary' }, 'Search'));
  search.addEventListener('submit', (event) => {
    event.preventDefault();
    cursors = [null];
    run('Searching records', load);
  });

  root.append(
    h('p', { class: 'lead' }, 'Each served request as the log keeps it: personal data appears as the placeholders the tenant\'s PII redaction left.'),
    search, message, list, pager);
  await load();
}
