// The dashboard's frame: sign-in, the navigation (only the pages the role
// may see, from `/api/v1/me` permissions), hash routing (`#/keys`), and
// sign-out. Each page is a module with `render(root, ctx)`; a page that
// fails shows the error in place, and a 401 anywhere returns to the sign-in
// form with "your session expired".

import { get, hasSession, redeemSsoCode, signIn, signInMethods, signOut, whenExpired } from './api.js';
import { h, errorBox } from './dom.js';
import * as overview from './pages/overview.js';
import * as keys from './pages/keys.js';
import * as usage from './pages/usage.js';
import * as models from './pages/models.js';
import * as webhooks from './pages/webhooks.js';
import * as users from './pages/users.js';
import * as playground from './pages/playground.js';
import * as reviews from './pages/reviews.js';
import * as incidents from './pages/incidents.js';
import * as audit from './pages/audit.js';
import * as conversations from './pages/conversations.js';
import * as subprocessors from './pages/subprocessors.js';
import * as consents from './pages/consents.js';
import * as subjects from './pages/subjects.js';
import * as policies from './pages/policies.js';
import * as tenants from './pages/tenants.js';

const any = (...perms) => (can) => perms.some(can);

/** Every page, in menu order, with who may see it. */
const PAGES = [
  { id: 'overview', title: 'Overview', page: overview, visible: () => true },
  { id: 'keys', title: 'API keys', page: keys, visible: any('keys.manage_all', 'keys.manage_own') },
  { id: 'usage', title: 'Usage & billing', page: usage, visible: any('usage.view_all', 'usage.view_own', 'billing.view') },
  { id: 'models', title: 'Models', page: models, visible: any('models.view') },
  { id: 'webhooks', title: 'Webhooks', page: webhooks, visible: any('webhooks.manage') },
  { id: 'users', title: 'Users', page: users, visible: any('users.manage') },
  { id: 'playground', title: 'Playground', page: playground, visible: any('playground.use') },
  { id: 'reviews', title: 'Review queue', page: reviews, visible: any('reviews.decide') },
  { id: 'incidents', title: 'Incidents', page: incidents, visible: any('incidents.manage', 'incidents.view') },
  { id: 'audit', title: 'Audit log', page: audit, visible: any('audit.view') },
  { id: 'conversations', title: 'Conversations', page: conversations, visible: any('conversations.view') },
  { id: 'subprocessors', title: 'Sub-processors', page: subprocessors, visible: () => true },
  { id: 'consents', title: 'Consents', page: consents, visible: any('consents.manage') },
  { id: 'subjects', title: 'Data subjects', page: subjects, visible: any('subjects.erase') },
  { id: 'policies', title: 'Policies', page: policies, visible: any('policies.manage') },
  { id: 'tenants', title: 'Tenants', page: tenants, visible: (can) => can('tenants.manage') },
];

const root = document.getElementById('app');
let me = null;
let renderCount = 0;

whenExpired(() => {
  me = null;
  showSignIn('Your session expired. Sign in again.');
});

function can(permission) {
  return Boolean(me && me.permissions.includes(permission));
}

let methods = null;

/** The sign-in choices the server offers, once per page load. */
async function loadMethods() {
  if (!methods) methods = await signInMethods();
  return methods;
}

/**
 * The sign-in form, shown at once with focus in the email field (keys typed
 * right after the page loads land there); the single sign-on button and
 * hint are added when the server's choices arrive.
 */
function showSignIn(message) {
  const extras = h('div', { class: 'signin-extras' });
  const error = h('div', { class: 'form-error', 'aria-live': 'assertive' });
  const email = h('input', { id: 'signin-email', name: 'email', type: 'email', required: true, autocomplete: 'username' });
  const password = h('input', { id: 'signin-password', name: 'password', type: 'password', required: true, autocomplete: 'current-password' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in to Tollgate'),
    message ? h('p', { class: 'notice warn', role: 'alert' }, message) : null,
    h('div', { class: 'field' }, h('label', { for: 'signin-email' }, 'Email'), email),
    h('div', { class: 'field' }, h('label', { for: 'signin-password' }, 'Password'), password),
    error,
    button,
    extras);
  loadMethods().then((offered) => {
    extras.replaceChildren(
      offered.sso ? h('div', { class: 'signin-sso' },
        h('a', { class: 'button secondary', id: 'signin-sso', href: '/api/v1/auth/oidc/start' }, 'Sign in with SSO')) : null,
      offered.password ? null : h('p', { class: 'hint' }, 'Password sign-in is kept for the gateway owner; everyone else signs in with SSO.'));
  }).catch(() => {});
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.replaceChildren();
    try {
      await signIn(email.value.trim(), password.value);
      await start();
    } catch (e) {
      error.replaceChildren(errorBox(e));
      button.disabled = false;
      password.focus();
    }
  });
  document.title = 'Sign in · Tollgate';
  root.replaceChildren(h('main', { class: 'signin-wrap' }, form));
  email.focus();
}

async function start() {
  try {
    me = await get('/api/v1/me');
  } catch (e) {
    if (e.status !== 401) showSignIn(e.message);
    return;
  }
  renderShell();
  route();
}

/**
 * The review queue's menu entry carries the number of pending reviews, for
 * the roles that decide them; refreshed on every navigation and after a
 * decision. A failed count leaves the entry as it was.
 */
async function refreshReviewCount() {
  if (!can('reviews.decide')) return;
  let pending;
  try {
    pending = (await get('/api/v1/reviews?status=pending')).data.length;
  } catch {
    return;
  }
  const link = document.querySelector('nav a[data-page="reviews"]');
  if (!link) return;
  link.querySelector('.nav-count')?.remove();
  if (pending > 0) {
    link.append(h('span', { class: 'nav-count' }, h('span', { class: 'sr-only' }, ': '), String(pending), h('span', { class: 'sr-only' }, ' pending')));
  }
}

function currentId() {
  const id = location.hash.replace(/^#\/?/, '');
  return id || 'overview';
}

function renderShell() {
  const visible = PAGES.filter((p) => p.visible(can));
  const navToggle = h('button', {
    type: 'button', class: 'nav-toggle', 'aria-expanded': 'false', 'aria-controls': 'nav',
  }, h('span', { 'aria-hidden': 'true' }, '☰'), ' Menu');
  const nav = h('nav', { id: 'nav', 'aria-label': 'Pages' },
    h('ul', {}, visible.map((p) => h('li', {}, h('a', { href: `#/${p.id}`, 'data-page': p.id }, p.title)))));
  navToggle.addEventListener('click', () => {
    const open = navToggle.getAttribute('aria-expanded') !== 'true';
    navToggle.setAttribute('aria-expanded', String(open));
    nav.classList.toggle('open', open);
  });
  nav.addEventListener('click', (event) => {
    if (event.target.closest('a')) {
      navToggle.setAttribute('aria-expanded', 'false');
      nav.classList.remove('open');
    }
  });
  const signOutButton = h('button', { type: 'button', class: 'secondary', onclick: async () => {
    await signOut();
    me = null;
    history.replaceState(null, '', '/');
    showSignIn('You are signed out.');
  } }, 'Sign out');
  const skip = h('button', { type: 'button', class: 'skip', onclick: () => document.getElementById('main').focus() }, 'Skip to content');
  root.replaceChildren(
    skip,
    h('header', { class: 'top' },
      h('a', { class: 'brand', href: '#/overview' }, h('img', { src: '/assets/favicon.svg', alt: '', width: 24, height: 24 }), 'Tollgate'),
      navToggle,
      h('div', { class: 'who' },
        h('span', { class: 'who-email' }, me.email),
        h('span', { class: `badge badge-role` }, me.role),
        signOutButton)),
    nav,
    h('main', { id: 'main', tabindex: '-1' }));
}

async function route() {
  if (!me) return;
  const id = currentId();
  // A page outside the role's menu still opens by its address, so the
  // person sees the API's own refusal (403) rather than a silent redirect.
  const entry = PAGES.find((p) => p.id === id);
  if (!entry) {
    location.replace('#/overview');
    return;
  }
  for (const link of document.querySelectorAll('nav a')) {
    if (link.dataset.page === id) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const main = document.getElementById('main');
  const heading = h('h1', { tabindex: '-1' }, entry.title);
  const body = h('div', { class: 'page', 'data-page': entry.id, 'aria-busy': 'true' });
  main.replaceChildren(heading, body);
  document.title = `${entry.title} · Tollgate`;
  heading.focus();
  const mine = ++renderCount;
  const ctx = { me, can, refreshMe: async () => { me = await get('/api/v1/me'); return me; }, isCurrent: () => mine === renderCount, refreshReviewCount };
  refreshReviewCount();
  try {
    await entry.page.render(body, ctx);
  } catch (e) {
    if (e.status === 401) return;
    if (mine === renderCount) body.append(errorBox(e, `Loading ${entry.title} failed`));
  } finally {
    body.setAttribute('aria-busy', 'false');
    if (mine === renderCount) body.dataset.ready = 'true';
  }
}

/**
 * The single sign-on landing (`#/sso?code=...` or `#/sso?error=...`): the
 * code is redeemed once for a session and removed from the address bar; a
 * refusal is shown on the sign-in form with the server's message for its
 * code (an unknown code gets a generic one, so a crafted link cannot put
 * its own words on the page).
 */
async function landFromSso() {
  const params = new URLSearchParams(location.hash.slice('#/sso?'.length));
  history.replaceState(null, '', '/');
  const code = params.get('code');
  if (code) {
    try {
      await redeemSsoCode(code);
      await start();
    } catch (e) {
      showSignIn(e.message);
    }
    return;
  }
  await loadMethods();
  const refusal = params.get('error') || '';
  const known = Object.prototype.hasOwnProperty.call(methods.ssoRefusals || {}, refusal);
  showSignIn(known ? methods.ssoRefusals[refusal] : 'Single sign-on did not complete. Try again.');
}

window.addEventListener('hashchange', () => {
  if (location.hash.startsWith('#/sso?')) landFromSso();
  else route();
});

if (location.hash.startsWith('#/sso?')) landFromSso();
else if (hasSession()) start();
else showSignIn();
