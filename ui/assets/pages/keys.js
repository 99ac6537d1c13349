// API keys: the list with state, consumption against the cap and the
// thresholds reached; create (the value shown once), edit, rotate, revoke.
// The server scopes the list: a `user` sees only the keys it owns.

import { api, get } from '../api.js';
import {
  h, badge, table, fmtCredits, fmtDate, confirmDialog, secretDialog,
  formDialog, okBox, show, numberOrNull, localToIso, isoToLocal, runner,
} from '../dom.js';

const INTERVALS = ['never', 'daily', 'weekly', 'monthly'];

function consumption(key) {
  const used = Number(key.creditsConsumed) || 0;
  const cap = key.creditLimit;
  const reached = (key.notifiedThresholds || []).map((t) => `${t}%`).join(', ');
  return h('div', { class: 'consumption' },
    cap === null || cap === undefined
      ? h('span', {}, `${fmtCredits(used)} credits (no cap)`)
      : [
        h('meter', { min: 0, max: cap, value: Math.min(used, cap), high: cap * 0.8, optimum: 0, 'aria-label': `${key.keyName} consumption` }),
        h('span', {}, `${fmtCredits(used)} / ${fmtCredits(cap)} credits`),
      ],
    reached ? h('small', { class: 'thresholds' }, `Thresholds reached: ${reached}`) : null);
}

function keyFields(key, can) {
  const fields = [
    { name: 'keyName', label: 'Name', required: true, value: key ? key.keyName : '' },
    { name: 'creditLimit', label: 'Credit cap per cycle', type: 'number', min: 0, step: 'any', value: key?.creditLimit ?? '', help: 'Empty: no cap.' },
    { name: 'resetInterval', label: 'Cap resets', type: 'select', options: INTERVALS, value: key ? key.resetInterval : 'monthly' },
    { name: 'rateLimit', label: 'Rate limit (requests per minute)', type: 'number', min: 1, step: 1, value: key?.rateLimit ?? '', help: 'Empty: the server default.' },
    { name: 'tpmLimit', label: 'Token limit (tokens per minute)', type: 'number', min: 1, step: 1, value: key?.tpmLimit ?? '', help: 'Prompt + completion. Empty: no token limit.' },
    { name: 'expiresAt', label: 'Expires at (UTC)', type: 'datetime-local', value: isoToLocal(key?.expiresAt), help: 'Empty: never.' },
  ];
  if (can('keys.manage_all')) {
    fields.push({ name: 'allowHighRisk', label: 'Allow high-risk use (EU AI Act Annex III)', type: 'checkbox', value: key ? key.allowHighRisk : false });
  }
  return fields;
}

function keyBody(values) {
  const body = {
    keyName: values.keyName,
    creditLimit: numberOrNull(values.creditLimit),
    resetInterval: values.resetInterval,
    rateLimit: numberOrNull(values.rateLimit),
    tpmLimit: numberOrNull(values.tpmLimit),
    expiresAt: localToIso(values.expiresAt),
  };
  if ('allowHighRisk' in values) body.allowHighRisk = values.allowHighRisk;
  return body;
}

export async function render(root, ctx) {
  const { can } = ctx;
  const message = h('div', { class: 'messages' });
  const list = h('div', { class: 'list' });

  async function refresh() {
    const { data } = await get('/api/v1/keys');
    show(list, table([
      { label: 'Name', value: (k) => h('span', { class: 'key-name' }, k.keyName) },
      { label: 'Key', value: (k) => h('code', {}, k.hint) },
      { label: 'State', value: (k) => badge(k.state.replace('_', ' '), k.state) },
      { label: 'Consumption', value: consumption },
      { label: 'Resets', value: (k) => k.resetInterval },
      { label: 'Rate limit', value: (k) => (k.rateLimit ? `${k.rateLimit}/min` : 'default') },
      { label: 'Token limit', value: (k) => (k.tpmLimit ? `${k.tpmLimit}/min` : 'none') },
      { label: 'Expires', value: (k) => fmtDate(k.expiresAt) },
      { label: 'High risk', value: (k) => (k.allowHighRisk ? 'allowed' : 'no') },
      { label: 'Actions', value: actions, class: 'actions-cell' },
    ], data, { caption: 'API keys', empty: 'No API keys yet. Create one to call the gateway.' }));
    list.querySelector('table')?.setAttribute('data-rows', String(data.length));
    for (const row of list.querySelectorAll('tbody tr')) {
      const name = row.querySelector('.key-name');
      if (name) row.dataset.key = name.textContent;
    }
  }

  const run = runner(message);

  function actions(key) {
    if (key.state === 'revoked') return h('span', { class: 'muted' }, `revoked ${fmtDate(key.revokedAt)}`);
    return h('div', { class: 'row-actions' },
      h('button', { type: 'button', class: 'secondary small', onclick: () => edit(key) }, 'Edit'),
      h('button', { type: 'button', class: 'secondary small', onclick: () => rotate(key) }, 'Rotate'),
      h('button', { type: 'button', class: 'danger small', onclick: () => revoke(key) }, 'Revoke'));
  }

  async function create() {
    const created = await formDialog('Create an API key', keyFields(null, can), 'Create key',
      (values) => api('POST', '/api/v1/keys', keyBody(values)));
    if (!created) return;
    await secretDialog('Your new API key', 'Copy the key now: it is shown only this once. Tollgate keeps only its digest.', created.value);
    show(message, okBox(`Key ${created.key.keyName} created.`));
    await run('Listing keys', refresh);
  }

  async function edit(key) {
    const saved = await formDialog(`Edit ${key.keyName}`, keyFields(key, can), 'Save',
      (values) => api('PATCH', `/api/v1/keys/${encodeURIComponent(key.id)}`, keyBody(values)));
    if (!saved) return;
    show(message, okBox(`Key ${key.keyName} saved.`));
    await run('Listing keys', refresh);
  }

  async function rotate(key) {
    const yes = await confirmDialog(`Rotate ${key.keyName}?`, 'A new value replaces this key; the old value stops working. Its caps and settings carry over.', 'Rotate key', { danger: false });
    if (!yes) return;
    await run('Rotating the key', async () => {
      const rotated = await api('POST', `/api/v1/keys/${encodeURIComponent(key.id)}/rotate`);
      await secretDialog('The rotated API key', 'Copy the new key now: it is shown only this once.', rotated.value);
      show(message, okBox(`Key ${key.keyName} rotated.`));
      await refresh();
    });
  }

  async function revoke(key) {
    const yes = await confirmDialog(`Revoke ${key.keyName}?`, 'Calls with this key are refused from now on. This cannot be undone.', 'Revoke key');
    if (!yes) return;
    await run('Revoking the key', async () => {
      await api('POST', `/api/v1/keys/${encodeURIComponent(key.id)}/revoke`);
      show(message, okBox(`Key ${key.keyName} revoked.`));
      await refresh();
    });
  }

  root.append(
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', onclick: () => run('Creating a key', create) }, 'Create key')),
    message,
    list);
  await refresh();
}
