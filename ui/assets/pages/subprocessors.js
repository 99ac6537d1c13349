// Sub-processors (GDPR Article 28): the registry every role reads, with its
// version and each entry's version; the operator's owners and admins
// (`registry.manage`) add, edit and delete entries. The change history is
// the registry's own (`GET /api/v1/sub-processor-history`: every change
// with the entry as it became, who made it and when), which every role
// reads as it reads the registry.

import { api, get } from '../api.js';
import {
  h, badge, table, fmtDate, formDialog, confirmDialog, okBox, show, runner,
} from '../dom.js';

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

const CHANGE_BADGES = { created: 'active', updated: 'role', deleted: 'revoked', found: 'role' };

/** What an entry became, in one line. */
function summary(entry) {
  return `${entry.legalName} · ${entry.location} · ${entry.dataCategories.join(', ')}`;
}

export async function render(root, ctx) {
  const { can } = ctx;
  const manage = can('registry.manage');
  const message = h('div', { class: 'messages' });
  const version = h('p', { class: 'registry-version' });
  const list = h('div', {});
  const history = h('div', {});
  const since = h('p', { class: 'muted' });

  const run = runner(message);

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
    await refreshHistory();
  }

  async function refreshHistory() {
    const changes = await get('/api/v1/sub-processor-history?limit=200');
    show(history, table([
      { label: 'When', value: (r) => fmtDate(r.at) },
      { label: 'Change', value: (r) => badge(r.change, CHANGE_BADGES[r.change] ?? 'role') },
      { label: 'Provider', value: (r) => h('code', {}, r.name) },
      { label: 'Version', value: (r) => r.version, class: 'num' },
      { label: 'Entry as it became', value: (r) => summary(r.entry) },
      { label: 'By', value: (r) => r.email || r.actor },
    ], changes.data, { caption: 'Registry change history', empty: 'No change has been recorded yet.' }));
    since.replaceChildren(changes.historySince
      ? `Changes are kept since ${fmtDate(changes.historySince)}; an entry listed then shows as “found”, as it was at that time.${changes.more ? ' The 200 newest are shown.' : ''}`
      : '');
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
    since,
    history);
  await refresh();
}
