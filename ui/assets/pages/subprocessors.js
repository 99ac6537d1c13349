// Sub-processors (GDPR Article 28): the registry every role reads, with its
// version and each entry's version; the operator's owners and admins
// (`registry.manage`) add, edit and delete entries. The change history is
// read from the audit log (each change is a `POST`, `PUT` or `DELETE` on the
// registry), so it is shown to the roles that may read that log.

import { api, get } from '../api.js';
import { h, badge, table, fmtDate, formDialog, confirmDialog, errorBox, okBox, show } from '../dom.js';

const CHANGE_ACTIONS = [
  ['POST /api/v1/sub-processors', 'created'],
  ['PUT /api/v1/sub-processors/{name}', 'updated'],
  ['DELETE /api/v1/sub-processors/{name}', 'deleted'],
];

function entryFields(entry) {
  const fields = entry ? [] : [
    { name: 'name', label: 'Provider id', required: true, help: 'The provider id models route to: letters, digits, -, _ and .' },
  ];
  return fields.concat([
    { name: 'legalName', label: 'Legal entity', required: true, value: entry?.legalName ?? '' },
    { name: 'purpose', label: 'Purpose', required: true, value: entry?.purpose ?? 'AI model inference' },
    { name: 'location', label: 'Location of processing', required: true, value: entry?.location ?? '' },
    { name: 'dataCategories', label: 'Data categories (one per line)', type: 'textarea', required: true, value: (entry?.dataCategories ?? ['prompts and completions']).join('\n') },
    { name: 'dpaUrl', label: 'Data-processing agreement (URL)', type: 'url', value: entry?.dpaUrl ?? '', help: 'Empty: none published.' },
  ]);
}

function entryBody(values) {
  const body = {
    legalName: values.legalName,
    purpose: values.purpose,
    location: values.location,
    dataCategories: values.dataCategories.split('\n').map((c) => c.trim()).filter(Boolean),
    dpaUrl: values.dpaUrl || null,
  };
  if (values.name !== undefined) body.name = values.name;
  return body;
}

/** The entry a change concerned: the name in its path, or in its body. */
function changedName(entry) {
  const fromPath = entry.target.replace(/^\/api\/v1\/sub-processors\/?/, '');
  if (fromPath) return decodeURIComponent(fromPath);
  const body = entry.details && entry.details.body;
  return body && typeof body.name === 'string' ? body.name : '—';
}

async function changeHistory() {
  const lists = await Promise.all(CHANGE_ACTIONS.map(async ([action, label]) => {
    const { data } = await get(`/api/v1/audit?action=${encodeURIComponent(action)}&limit=100`);
    return data.filter((e) => e.action === action).map((e) => ({ ...e, change: label }));
  }));
  return lists.flat().sort((a, b) => b.seq - a.seq);
}

export async function render(root, ctx) {
  const { can } = ctx;
  const manage = can('registry.manage');
  const message = h('div', { class: 'messages' });
  const version = h('p', { class: 'registry-version' });
  const list = h('div', {});
  const history = h('div', {});

  async function run(what, action) {
    message.replaceChildren();
    try {
      await action();
    } catch (e) {
      if (e.status !== 401) show(message, errorBox(e, what));
    }
  }

  function actions(entry) {
    return h('div', { class: 'row-actions' },
      h('button', { type: 'button', class: 'secondary small', onclick: () => run('Editing the entry', () => edit(entry)) }, 'Edit'),
      h('button', { type: 'button', class: 'danger small', onclick: () => run('Deleting the entry', () => remove(entry)) }, 'Delete'));
  }

  async function refresh() {
    const registry = await get('/api/v1/sub-processors');
    version.replaceChildren('Registry version ', h('strong', { 'data-version': registry.version }, registry.version),
      ' · every change raises it and is announced to each tenant\'s webhooks (sub_processor.changed).');
    const columns = [
      { label: 'Provider', value: (e) => h('code', { class: 'entry-name' }, e.name) },
      { label: 'Legal entity', value: (e) => e.legalName },
      { label: 'Purpose', value: (e) => e.purpose },
      { label: 'Location', value: (e) => e.location },
      { label: 'Data categories', value: (e) => e.dataCategories.join(', ') },
      { label: 'DPA', value: (e) => (e.dpaUrl ? h('a', { href: e.dpaUrl, rel: 'noopener noreferrer', target: '_blank' }, 'agreement') : 'none') },
      { label: 'Source', value: (e) => badge(e.source, 'role') },
      { label: 'Version', value: (e) => e.version, class: 'num' },
      { label: 'Last change', value: (e) => fmtDate(e.updatedAt) },
    ];
    if (manage) columns.push({ label: 'Actions', value: actions, class: 'actions-cell' });
    show(list, table(columns, registry.subProcessors, { caption: 'Sub-processors', empty: 'The registry lists no sub-processor.' }));
    for (const row of list.querySelectorAll('tbody tr')) {
      row.dataset.entry = row.querySelector('.entry-name').textContent;
    }
    if (can('audit.view')) await refreshHistory();
  }

  async function refreshHistory() {
    const changes = await changeHistory();
    show(history, table([
      { label: 'When', value: (e) => fmtDate(e.at) },
      { label: 'Change', value: (e) => e.change },
      { label: 'Provider', value: (e) => h('code', {}, changedName(e)) },
      { label: 'By', value: (e) => (e.details && e.details.email) || e.actor },
      { label: 'Outcome', value: (e) => badge(e.outcome, e.outcome === 'ok' ? 'active' : 'revoked') },
    ], changes, { caption: 'Registry change history', empty: 'No change since the registry was first filled.' }));
  }

  async function add() {
    const created = await formDialog('Add a sub-processor', entryFields(null), 'Add',
      (values) => api('POST', '/api/v1/sub-processors', entryBody(values)));
    if (!created) return;
    show(message, okBox(`${created.name} added; the registry is at version ${created.registryVersion}.`));
    await refresh();
  }

  async function edit(entry) {
    const saved = await formDialog(`Edit ${entry.name}`, entryFields(entry), 'Save',
      (values) => api('PUT', `/api/v1/sub-processors/${encodeURIComponent(entry.name)}`, entryBody(values)));
    if (!saved) return;
    show(message, okBox(`${entry.name} saved; the registry is at version ${saved.registryVersion}.`));
    await refresh();
  }

  async function remove(entry) {
    const yes = await confirmDialog(`Delete ${entry.name}?`,
      'Tenants whose policy enforces the registry stop routing to this provider at once.', 'Delete entry');
    if (!yes) return;
    const deleted = await api('DELETE', `/api/v1/sub-processors/${encodeURIComponent(entry.name)}`);
    show(message, okBox(`${entry.name} deleted; the registry is at version ${deleted.registryVersion}.`));
    await refresh();
  }

  root.append(
    h('p', { class: 'lead' }, 'Every upstream provider that may receive your data is a sub-processor (GDPR Article 28).'),
    manage ? h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', onclick: () => run('Adding an entry', add) }, 'Add sub-processor')) : null,
    message,
    version,
    list,
    h('h2', {}, 'Change history'),
    can('audit.view')
      ? history
      : h('p', { class: 'muted' }, 'Each entry shows the registry version of its last change. The full history is in the audit log, which the owner and auditors read.'));
  await refresh();
}
