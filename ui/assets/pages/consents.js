// Consents (owner and admin, `consents.manage`): record an end user's
// consent to a purpose, list the records (all, or one subject's), and
// withdraw one. A withdrawn record stays, with when it was withdrawn: a
// high-risk request that names it is refused from then on.

import { api, get } from '../api.js';
import {
  h, badge, table, fmtDate, formDialog, confirmDialog, okBox, show, uid,
  runner,
} from '../dom.js';

export async function render(root) {
  const message = h('div', { class: 'messages' });
  const list = h('div', {});
  const filterId = uid('subject');
  const filter = h('input', { id: filterId, name: 'endUserId', type: 'search', autocomplete: 'off' });
  let subject = '';

  const run = runner(message);

  function actions(consent) {
    if (consent.status === 'withdrawn') return h('span', { class: 'muted' }, `withdrawn ${fmtDate(consent.withdrawnAt)}`);
    return h('button', { type: 'button', class: 'danger small', onclick: () => run('Withdrawing the consent', () => withdraw(consent)) }, 'Withdraw');
  }

  async function refresh() {
    const query = subject ? `?endUserId=${encodeURIComponent(subject)}` : '';
    const { data } = await get(`/api/v1/consents${query}`);
    show(list, table([
      { label: 'Record', value: (c) => h('code', { class: 'consent-id' }, c.id) },
      { label: 'End user', value: (c) => c.endUserId },
      { label: 'Purpose', value: (c) => c.purpose },
      { label: 'Status', value: (c) => badge(c.status, c.status === 'active' ? 'active' : 'revoked') },
      { label: 'Granted', value: (c) => fmtDate(c.grantedAt) },
      { label: 'Actions', value: actions, class: 'actions-cell' },
    ], data, {
      caption: 'Consent records',
      empty: subject ? `No consent recorded for ${subject}.` : 'No consent recorded yet.',
    }));
    for (const row of list.querySelectorAll('tbody tr')) {
      row.dataset.consent = row.querySelector('.consent-id').textContent;
    }
  }

  async function record() {
    const created = await formDialog('Record a consent', [
      { name: 'endUserId', label: 'End user id', required: true, value: subject, help: 'The end_user_id your application sends with its requests.' },
      { name: 'purpose', label: 'Purpose consented to', required: true },
    ], 'Record consent', (values) => api('POST', '/api/v1/consents', values));
    if (!created) return;
    show(message, okBox(`Consent ${created.id} recorded for ${created.endUserId}. Requests send it as user_consent_id.`));
    await refresh();
  }

  async function withdraw(consent) {
    const yes = await confirmDialog(`Withdraw consent ${consent.id}?`,
      `High-risk requests of ${consent.endUserId} that name this record are refused from now on. The record stays, marked withdrawn.`, 'Withdraw');
    if (!yes) return;
    await api('DELETE', `/api/v1/consents/${encodeURIComponent(consent.id)}`);
    show(message, okBox(`Consent ${consent.id} withdrawn.`));
    await refresh();
  }

  const form = h('form', { class: 'inline-form', role: 'search' },
    h('div', { class: 'field' }, h('label', { for: filterId }, 'End user id'), filter),
    h('button', { type: 'submit', class: 'secondary' }, 'Filter'),
    h('button', { type: 'button', class: 'secondary', onclick: () => { filter.value = ''; form.requestSubmit(); } }, 'Show all'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    subject = filter.value.trim();
    run('Listing consents', refresh);
  });

  root.append(
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', onclick: () => run('Recording a consent', record) }, 'Record consent')),
    form,
    message,
    list);
  await refresh();
}
