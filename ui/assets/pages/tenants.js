// Tenants (the operator's owners and admins, `tenants.manage`): every
// tenant with its tier, wallet and model allow-list; create a tenant,
// change its tier, top up its wallet, and choose which catalogue models it
// may use (none chosen: every served model).

import { api, get } from '../api.js';
import { h, badge, table, fmtCredits, fmtDate, formDialog, okBox, show, runner } from '../dom.js';

const TIERS = ['free', 'paid', 'enterprise'];

/** The allow-list in words. */
function allowed(access) {
  if (!access) return h('span', { class: 'muted' }, '—');
  if (access.models === null) return h('span', {}, 'every served model');
  if (!access.models.length) return h('span', { class: 'muted' }, 'no model');
  return h('span', { class: 'model-list' }, access.models.join(', '));
}

export async function render(root) {
  const message = h('div', { class: 'messages' });
  const list = h('div', {});

  const run = runner(message);

  function tierCell(tenant) {
    const select = h('select', { 'aria-label': `Tier of ${tenant.name}` },
      TIERS.map((t) => h('option', { value: t, selected: t === tenant.tier }, t)));
    select.addEventListener('change', () => run('Changing the tier', async () => {
      try {
        await api('PATCH', `/api/v1/tenants/${encodeURIComponent(tenant.id)}`, { tier: select.value });
      } catch (e) {
        select.value = tenant.tier;
        throw e;
      }
      show(message, okBox(`${tenant.name} is now on the ${select.value} tier.`));
      await refresh();
    }));
    return select;
  }

  function actions(tenant) {
    return h('div', { class: 'row-actions' },
      h('button', { type: 'button', class: 'secondary small', onclick: () => run('Topping up', () => topUp(tenant)) }, 'Top up'),
      h('button', { type: 'button', class: 'secondary small', onclick: () => run('Choosing models', () => chooseModels(tenant)) }, 'Models'));
  }

  async function refresh() {
    const { data } = await get('/api/v1/tenants');
    const access = await Promise.all(data.map((t) => get(`/api/v1/tenants/${encodeURIComponent(t.id)}/models`).catch(() => null)));
    const rows = data.map((t, i) => ({ ...t, access: access[i] }));
    show(list, table([
      { label: 'Name', value: (t) => h('span', { class: 'tenant-name' }, t.name, t.operator ? [' ', badge('operator', 'role')] : null) },
      { label: 'Id', value: (t) => h('code', {}, t.id) },
      { label: 'Tier', value: tierCell },
      { label: 'Wallet (credits)', value: (t) => fmtCredits(t.walletBalance), class: 'num' },
      { label: 'Models', value: (t) => allowed(t.access) },
      { label: 'Created', value: (t) => fmtDate(t.createdAt) },
      { label: 'Actions', value: actions, class: 'actions-cell' },
    ], rows, { caption: 'Tenants', empty: 'No tenant yet.' }));
    list.querySelectorAll('tbody tr').forEach((row, i) => { row.dataset.tenant = rows[i].name; });
  }

  async function create() {
    const created = await formDialog('Create a tenant', [
      { name: 'name', label: 'Name', required: true, help: 'Unique, regardless of case.' },
      { name: 'tier', label: 'Tier', type: 'select', options: TIERS, value: 'paid',
        help: 'Free: daily multimodal cap. Paid: prepaid wallet. Enterprise: the wallet may go negative.' },
    ], 'Create tenant', (values) => api('POST', '/api/v1/tenants', values));
    if (!created) return;
    show(message, okBox(`Tenant ${created.name} created (${created.id}). Its first owner is made with tollgate users create --tenant ${created.name}.`));
    await refresh();
  }

  async function topUp(tenant) {
    const topped = await formDialog(`Top up ${tenant.name}`, [
      { name: 'amount', label: 'Credits to add', type: 'number', min: 0, step: 'any', required: true,
        help: `The wallet holds ${fmtCredits(tenant.walletBalance)} credits.` },
    ], 'Top up', (values) => api('POST', `/api/v1/tenants/${encodeURIComponent(tenant.id)}/credits`, { amount: Number(values.amount) }));
    if (!topped) return;
    show(message, okBox(`${tenant.name}'s wallet now holds ${fmtCredits(topped.walletBalance)} credits.`));
    await refresh();
  }

  async function chooseModels(tenant) {
    const access = tenant.access || await get(`/api/v1/tenants/${encodeURIComponent(tenant.id)}/models`);
    const saved = await formDialog(`Models of ${tenant.name}`, [
      { name: 'every', label: 'Every served model (no allow-list)', type: 'checkbox', value: access.models === null },
      { name: 'models', label: 'Allowed models (when not every model)', type: 'checks', options: access.available, value: access.models || [] },
    ], 'Save models', (values) => api('PUT', `/api/v1/tenants/${encodeURIComponent(tenant.id)}/models`,
      { models: values.every ? null : values.models }));
    if (!saved) return;
    show(message, okBox(saved.models === null
      ? `${tenant.name} may use every served model.`
      : `${tenant.name} may use ${saved.models.length ? saved.models.join(', ') : 'no model'}.`));
    await refresh();
  }

  root.append(
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', onclick: () => run('Creating a tenant', create) }, 'Create tenant')),
    message,
    list);
  await refresh();
}
