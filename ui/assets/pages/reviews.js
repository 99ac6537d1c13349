// The review queue (Article 14 human oversight; `reviews.decide`: reviewer,
// owner): held answers with their risk level, triggered rules, purpose, an
// excerpt of the request and the answer, age and time left. Approving or
// rejecting opens a dialog with the whole request and answer and a note;
// the decided item leaves the pending list and the menu's count follows.

import { api, get } from '../api.js';
import { h, table, fmtDate, errorBox, okBox, show, uid, runner, latestLoad } from '../dom.js';
import { excerpt, fmtSpan, lastUserText, answerText, levelBadge, transcript, untilMs } from '../records.js';

const STATUSES = ['pending', 'approved', 'rejected', 'expired'];

/**
 * Asks for a note and sends the decision; resolves with the decided item,
 * or null when cancelled. A refusal (say, someone decided first) stays in
 * the dialog.
 */
function decideDialog(item, decision) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = uid('dlg');
    const noteId = uid('field');
    const verb = decision === 'approve' ? 'Approve' : 'Reject';
    const note = h('textarea', { id: noteId, name: 'note', rows: 3 });
    const errorSlot = h('div', { class: 'form-error' });
    const submit = h('button', { type: 'submit', class: decision === 'approve' ? 'primary' : 'danger' }, verb);
    const form = h('form', { method: 'dialog' },
      h('h2', { id: titleId }, `${verb} this answer?`),
      h('p', { class: 'muted' }, decision === 'approve'
        ? 'The caller receives the answer below when it next polls.'
        : 'The caller is refused with review_rejected; the note is in the message.'),
      transcript(item.request, item.completion),
      h('div', { class: 'field' }, h('label', { for: noteId }, 'Note (optional, kept in the audit log)'), note),
      errorSlot,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel'),
        submit));
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: 'record-dialog' }, form);
    let decided = null;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        const text = note.value.trim();
        decided = await api('POST', `/api/v1/reviews/${encodeURIComponent(item.id)}/${decision}`, text ? { note: text } : {});
        dialog.close();
      } catch (e) {
        show(errorSlot, errorBox(e));
      } finally {
        submit.disabled = false;
      }
    });
    document.body.append(dialog);
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener && opener.isConnected) opener.focus();
      resolve(decided);
    });
    dialog.showModal();
    note.focus();
  });
}

function purposeOf(item) {
  const purpose = item.request && typeof item.request === 'object' ? item.request.purpose : null;
  return purpose || h('span', { class: 'muted' }, 'none given');
}

function timeLeft(item) {
  if (item.status !== 'pending') return '—';
  const left = untilMs(item.expiresAt);
  return left > 0 ? fmtSpan(left) : 'expiring';
}

function decision(item) {
  if (item.status === 'pending') return null;
  return h('div', { class: 'decision' },
    h('span', {}, item.decidedBy ? `${item.status} by ${item.decidedBy}` : item.status),
    item.decidedAt ? h('small', { class: 'muted' }, fmtDate(item.decidedAt)) : null,
    item.note ? h('small', {}, `Note: ${item.note}`) : null);
}

export async function render(root, ctx) {
  const message = h('div', { class: 'messages' });
  const list = h('div', { class: 'list' });
  const statusId = uid('status');
  const status = h('select', { id: statusId }, STATUSES.map((s) => h('option', { value: s }, s)));

  const run = runner(message);

  async function decide(item, verb) {
    const decided = await decideDialog(item, verb);
    if (!decided) return;
    show(message, okBox(`Review ${decided.id} ${decided.status}.`));
    await refresh();
    if (ctx.refreshReviewCount) ctx.refreshReviewCount();
  }

  function actions(item) {
    if (item.status !== 'pending') return decision(item);
    return h('div', { class: 'row-actions' },
      h('button', { type: 'button', class: 'primary small', onclick: () => run('Approving', () => decide(item, 'approve')) }, 'Approve…'),
      h('button', { type: 'button', class: 'danger small', onclick: () => run('Rejecting', () => decide(item, 'reject')) }, 'Reject…'));
  }

  const listing = latestLoad();
  async function refresh() {
    const isLatest = listing();
    const { data } = await get(`/api/v1/reviews?status=${status.value}`);
    if (!isLatest()) return;
    show(list, table([
      { label: 'Risk', value: (r) => levelBadge(r.riskLevel) },
      { label: 'Rules', value: (r) => (r.triggeredRules?.length ? r.triggeredRules.join(', ') : '—') },
      { label: 'Purpose', value: purposeOf },
      { label: 'Request', value: (r) => h('span', { class: 'excerpt' }, excerpt(lastUserText(r.request))) },
      { label: 'Answer', value: (r) => h('span', { class: 'excerpt' }, excerpt(answerText(r.completion))) },
      { label: 'Model', value: (r) => h('code', {}, r.model) },
      { label: 'Age', value: (r) => fmtSpan(-untilMs(r.createdAt)) },
      { label: 'Time left', value: timeLeft },
      { label: status.value === 'pending' ? 'Decide' : 'Decision', value: actions, class: 'actions-cell' },
    ], data, { caption: `Reviews ${status.value}`, empty: status.value === 'pending' ? 'Nothing waits for a review.' : `No ${status.value} reviews.` }));
    for (const [i, row] of [...list.querySelectorAll('tbody tr')].entries()) row.dataset.review = data[i].id;
  }

  status.addEventListener('change', () => run('Listing reviews', refresh));
  root.append(
    h('p', { class: 'lead' }, 'Answers held for a person to approve before the caller receives them (EU AI Act Article 14).'),
    h('div', { class: 'toolbar' }, h('label', { for: statusId }, 'Show'), status),
    message,
    list);
  await refresh();
}
