// Users (owner and admin): invite or create accounts, change roles, disable
// and enable. Only an owner may hand out the owner role, so others are not
// offered it.

import { api, get } from '../api.js';
import {
  h, badge, table, fmtDate, formDialog, secretDialog, confirmDialog, okBox,
  show, uid, runner,
} from '../dom.js';

const ROLES = ['owner', 'admin', 'billing', 'auditor', 'reviewer', 'user', 'tester'];

export async function render(root, ctx) {
  const { me, can } = ctx;
  const roles = ROLES.filter((r) => r !== 'owner' || can('users.assign_owner'));
  const message = h('div', { class: 'messages' });
  const list = h('div', {});

  const run = runner(message);

  function roleCell(user) {
    if (user.id === me.id || (user.role === 'owner' && !can('users.assign_owner'))) return badge(user.role, 'role');
    const id = uid('role');
    const select = h('select', { id, 'aria-label': `Role of ${user.email}` },
      roles.map((r) => h('option', { value: r, selected: r === user.role }, r)));
    select.addEventListener('change', () => run('Changing the role', async () => {
      await api('PATCH', `/api/v1/users/${encodeURIComponent(user.id)}`, { role: select.value });
      show(message, okBox(`${user.email} is now ${select.value}.`));
      await refresh();
    }));
    return select;
  }

  function actions(user) {
    if (user.id === me.id) return h('span', { class: 'muted' }, 'you');
    if (user.role === 'owner' && !can('users.assign_owner')) return null;
    return h('button', { type: 'button', class: user.disabled ? 'secondary small' : 'danger small', onclick: () => run('Changing the account', async () => {
      if (!user.disabled) {
        const yes = await confirmDialog(`Disable ${user.email}?`, 'The account can no longer sign in, and its sessions end.', 'Disable');
        if (!yes) return;
      }
      await api('PATCH', `/api/v1/users/${encodeURIComponent(user.id)}`, { disabled: !user.disabled });
      show(message, okBox(`${user.email} ${user.disabled ? 'enabled' : 'disabled'}.`));
      await refresh();
    }) }, user.disabled ? 'Enable' : 'Disable');
  }

  async function refresh() {
    const { data } = await get('/api/v1/users');
    show(list, table([
      { label: 'Email', value: (u) => u.email },
      { label: 'Role', value: roleCell },
      { label: 'State', value: (u) => (u.disabled ? badge('disabled', 'revoked') : badge('active', 'active')) },
      { label: 'Created', value: (u) => fmtDate(u.createdAt) },
      { label: 'Actions', value: actions, class: 'actions-cell' },
    ], data, { caption: 'Users' }));
  }

  async function invite() {
    const created = await formDialog('Add a user', [
      { name: 'email', label: 'Email', type: 'email', required: true },
      { name: 'role', label: 'Role', type: 'select', options: roles, value: 'user' },
      { name: 'password', label: 'Password (at least 12 characters)', type: 'password', autocomplete: 'new-password', help: 'Leave empty to have one generated and shown once.' },
    ], 'Add user', (values) => {
      const body = { email: values.email, role: values.role };
      if (values.password) body.password = values.password;
      return api('POST', '/api/v1/users', body);
    });
    if (!created) return;
    if (created.password) {
      await secretDialog(`Password for ${created.user.email}`, 'Hand it over safely: it is shown only this once.', created.password);
    }
    show(message, okBox(`${created.user.email} added as ${created.user.role}.`));
    await refresh();
  }

  root.append(
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', onclick: () => run('Adding a user', invite) }, 'Add user')),
    message, list);
  await refresh();
}
