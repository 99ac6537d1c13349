// Data subject requests (owner, `subjects.erase`): export everything held
// about one end user as a JSON file (GDPR Articles 15 and 20), and erase it
// (Article 17) once the id has been typed again, showing the receipt. The
// erasure answers the export it took just before erasing, so that one can
// still be downloaded afterwards.

import { api } from '../api.js';
import { h, fmtDate, fmtNumber, formDialog, okBox, show, uid, runner } from '../dom.js';

/** A file name from the subject's id (no path or odd characters). */
function fileName(subject, what) {
  const safe = subject.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return `tollgate-${what}-${safe}.json`;
}

/** Hands `data` to the browser as a JSON file download. */
function download(data, name) {
  const blob = new Blob([`${JSON.stringify(data, null, 2)}\n`], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: name, class: 'sr-only' }, name);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function summary(exported) {
  const count = (list) => fmtNumber((list || []).length);
  return h('dl', { class: 'facts' },
    h('dt', {}, 'Conversation records'), h('dd', {}, count(exported.conversations)),
    h('dt', {}, 'Consent records'), h('dd', {}, count(exported.consents)),
    h('dt', {}, 'Held reviews'), h('dd', {}, count(exported.reviews)),
    h('dt', {}, 'Usage records'), h('dd', {}, count(exported.usage)),
    h('dt', {}, 'Pseudonym'), h('dd', {}, h('code', {}, exported.pseudonym)));
}

function receipt(subject, report, again) {
  const erased = report.erased || {};
  return h('section', { class: 'receipt', 'aria-labelledby': 'erasure-receipt' },
    h('h2', { id: 'erasure-receipt' }, 'Erasure receipt'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'End user'), h('dd', {}, subject),
      h('dt', {}, 'Erased at'), h('dd', {}, fmtDate(report.erasedAt)),
      h('dt', {}, 'Pseudonym kept'), h('dd', {}, h('code', {}, report.export.pseudonym)),
      h('dt', {}, 'Conversation records emptied'), h('dd', { 'data-erased': 'conversations' }, fmtNumber(erased.conversations)),
      h('dt', {}, 'Consent records deleted'), h('dd', { 'data-erased': 'consents' }, fmtNumber(erased.consents)),
      h('dt', {}, 'Held reviews emptied'), h('dd', { 'data-erased': 'reviews' }, fmtNumber(erased.reviews))),
    h('p', { class: 'muted' }, 'Usage records and the audit log never held the id and stay as they are; the erasure is in the audit log as subject.erase, under the pseudonym.'),
    h('button', { type: 'button', class: 'secondary', onclick: again }, 'Download the export taken before erasing'));
}

export async function render(root) {
  const message = h('div', { class: 'messages' });
  const result = h('div', {});
  const inputId = uid('subject');
  const input = h('input', { id: inputId, name: 'endUserId', required: true, autocomplete: 'off', 'aria-describedby': `${inputId}-help` });

  const run = runner(message);

  function subject() {
    const value = input.value.trim();
    if (!value) {
      input.focus();
      throw new Error('Enter the end user id first.');
    }
    return value;
  }

  async function exportData() {
    const id = subject();
    const exported = await api('POST', '/api/v1/erasure/export', { endUserId: id });
    download(exported, fileName(id, 'export'));
    show(message, okBox(`The export of ${id} was downloaded as ${fileName(id, 'export')}. Nothing was erased.`));
    show(result, h('section', { 'aria-labelledby': 'export-summary' },
      h('h2', { id: 'export-summary' }, `What Tollgate holds about ${id}`), summary(exported)));
  }

  async function erase() {
    const id = subject();
    const report = await formDialog(`Erase the data of ${id}?`, [
      { name: 'confirm', label: `Type ${id} to confirm`, required: true,
        help: 'Conversation bodies, consent records and held reviews of this end user are erased for good.' },
    ], 'Erase for good', async (values) => {
      if (values.confirm !== id) throw new Error(`Type the end user id exactly (${id}) to erase.`);
      return api('POST', '/api/v1/erasure', { endUserId: id });
    });
    if (!report) return;
    show(message, okBox(`The data of ${id} was erased.`));
    show(result, receipt(id, report, () => download(report.export, fileName(id, 'export'))));
    result.querySelector('h2').setAttribute('tabindex', '-1');
    result.querySelector('h2').focus();
  }

  const form = h('form', { class: 'inline-form' },
    h('div', { class: 'field' },
      h('label', { for: inputId }, 'End user id'), input,
      h('small', { id: `${inputId}-help`, class: 'help' }, 'The end_user_id your application sends with its requests.')),
    h('button', { type: 'submit', class: 'primary' }, 'Export as JSON'),
    h('button', { type: 'button', class: 'danger', onclick: () => run('Erasing', erase) }, 'Erase…'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    run('Exporting', exportData);
  });

  root.append(
    h('p', { class: 'lead' }, 'Answer an end user\'s request to see (Article 15), take (Article 20) or erase (Article 17) their data.'),
    form,
    message,
    result);
}
