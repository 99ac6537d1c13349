// The dashboard in headless Chromium (Debian's `chromium`, driven by
// playwright-core). Started by tests/browser.rs, which runs the real server
// with a temporary data directory and the built-in mock provider, seeds the
// accounts and passes them here:
//   TOLLGATE_URL, OWNER_EMAIL, OWNER_PASSWORD, USER_EMAIL, BILLING_EMAIL,
//   TESTER_EMAIL, ACCOUNT_PASSWORD, ARTIFACTS_DIR, CHROMIUM (optional).
//
// Two groups: "frame" needs only the endpoints the foundation, billing and
// webhooks issues built; "pages" needs the keys, users, models, stats and
// playground endpoints as well. Every test fails on any console error or
// uncaught exception in the page.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through tests/browser.rs`);
  return value;
};
const BASE = env('TOLLGATE_URL');
const OWNER = { email: env('OWNER_EMAIL'), password: env('OWNER_PASSWORD') };
const PASSWORD = env('ACCOUNT_PASSWORD');
const USER = { email: env('USER_EMAIL'), password: PASSWORD };
const BILLING = { email: env('BILLING_EMAIL'), password: PASSWORD };
const TESTER = { email: env('TESTER_EMAIL'), password: PASSWORD };
const ARTIFACTS = env('ARTIFACTS_DIR');
mkdirSync(ARTIFACTS, { recursive: true });

const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 390, height: 844 };

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});

after(async () => {
  await browser?.close();
});

/** A fresh browser context and page that records console errors. */
async function open(viewport = WIDE) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.problems = problems;
  page.done = async ({ allow } = {}) => {
    const left = allow ? problems.filter((p) => !allow.test(p)) : problems;
    await context.close();
    assert.deepEqual(left, [], 'the page logged errors');
  };
  return page;
}

async function signIn(page, { email, password }) {
  await page.goto(`${BASE}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await ready(page);
}

/** Waits until the current page has rendered (or shown its error). */
async function ready(page) {
  await page.locator('main .page[data-ready="true"]').waitFor();
}

async function go(page, id) {
  await page.evaluate((hash) => { location.hash = hash; }, `#/${id}`);
  await page.locator(`nav a[data-page="${id}"][aria-current="page"]`).waitFor({ state: 'attached' });
  await ready(page);
}

async function noErrorShown(page) {
  const errors = await page.locator('.notice.error').allTextContents();
  assert.deepEqual(errors, [], 'the page shows an error');
}

async function shoot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Creates a key through the page; returns its value from the dialog. */
async function createKey(page, name) {
  await go(page, 'keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create an API key' });
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const secret = page.getByRole('dialog', { name: 'Your new API key' });
  const value = await secret.getByRole('textbox').inputValue();
  await secret.getByRole('button', { name: 'I have stored it' }).click();
  await page.locator(`tr[data-key="${name}"]`).waitFor();
  return value;
}

function keyRow(page, name) {
  return page.locator(`tr[data-key="${name}"]`);
}

describe('frame (existing endpoints)', () => {
  test('the page is served with a strict Content-Security-Policy', async () => {
    const response = await fetch(`${BASE}/`);
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy');
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  });

  test('signing in with a wrong password shows the error and keeps the form', async () => {
    const page = await open();
    await page.goto(`${BASE}/`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /password/i }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isVisible(), true);
    await page.done({ allow: /401/ });
  });

  test('an SSO refusal in the address is shown on the sign-in form in the server\'s words', async () => {
    const page = await open();
    await page.goto(`${BASE}/#/sso?error=sso_wrong_audience`);
    await page.getByRole('alert').filter({ hasText: /another application/ }).waitFor();
    // The code leaves the address bar; without [sso] there is no SSO button.
    assert.equal(new URL(page.url()).hash, '');
    assert.equal(await page.getByRole('link', { name: 'Sign in with SSO' }).count(), 0);
    await page.goto(`${BASE}/#/sso?error=${encodeURIComponent('<b>call 555</b>')}`);
    await page.getByRole('alert').filter({ hasText: 'Single sign-on did not complete. Try again.' }).waitFor();
    assert.equal(await page.getByText('call 555').count(), 0);
    await page.done();
  });

  test('a spent SSO code returns to the sign-in form with a message', async () => {
    const page = await open();
    await page.goto(`${BASE}/#/sso?code=not-a-code`);
    await page.getByRole('alert').filter({ hasText: /sign in again|single sign-on/i }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isVisible(), true);
    await page.done({ allow: /40[14]/ });
  });

  test('sign in and sign out by keyboard', async () => {
    const page = await open();
    await page.goto(`${BASE}/`);
    // The email field has focus on arrival.
    await page.keyboard.type(OWNER.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(OWNER.password);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await page.evaluate(() => document.cookie), '', 'no cookie is set');
    assert.ok(await page.evaluate(() => sessionStorage.getItem('tollgate.session')), 'the token is in sessionStorage');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('tollgate.session')), null);
    await page.done();
  });

  test('an expired session returns to the sign-in form with a message', async () => {
    const page = await open();
    await signIn(page, OWNER);
    // End the session behind the page's back, as expiry would.
    await page.evaluate(async () => {
      const token = sessionStorage.getItem('tollgate.session');
      await fetch('/api/v1/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    });
    await go(page, 'webhooks').catch(() => {});
    await page.getByText('Your session expired. Sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.done({ allow: /status of 401/ });
  });

  test('an owner adds a webhook URL', async () => {
    const page = await open();
    await signIn(page, OWNER);
    await go(page, 'webhooks');
    await page.getByLabel('New URL').fill('https://hooks.example.com/tollgate');
    await page.getByRole('button', { name: 'Add to list' }).click();
    await page.getByRole('button', { name: 'Save URLs' }).click();
    await page.getByText('Saved 1 URL.').waitFor();
    await page.reload();
    await ready(page);
    await page.locator('.url-list code', { hasText: 'https://hooks.example.com/tollgate' }).waitFor();
    await noErrorShown(page);
    await page.done();
  });

  test('a billing account tops up the wallet', async () => {
    const page = await open();
    await signIn(page, BILLING);
    await go(page, 'usage');
    const before = Number((await page.locator('#wallet-balance').textContent()).replaceAll(',', ''));
    await page.getByLabel('Credits to add').fill('25');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByText(/Added 25 credits/).waitFor();
    const afterText = await page.locator('#wallet-balance').textContent();
    assert.equal(Number(afterText.replaceAll(',', '')), before + 25);
    await page.locator('td', { hasText: 'Top-up' }).first().waitFor();
    await noErrorShown(page);
    await page.done();
  });
});

describe('pages (keys, users, models, stats and playground endpoints)', () => {
  test('an owner creates a key, uses it, changes its cap and revokes it', async () => {
    const page = await open();
    await signIn(page, OWNER);
    const value = await createKey(page, 'browser-key');
    assert.match(value, /^kp_/);
    await keyRow(page, 'browser-key').getByText('active').waitFor();

    const answer = await fetch(`${BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${value}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hello from the browser test' }] }),
    });
    assert.equal(answer.status, 200);
    const completion = await answer.json();
    assert.ok(completion.choices[0].message.content.length > 0);

    await keyRow(page, 'browser-key').getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit browser-key' });
    await edit.getByLabel('Credit cap per cycle').fill('5');
    await edit.getByLabel('Cap resets').selectOption('daily');
    await edit.getByRole('button', { name: 'Save' }).click();
    await keyRow(page, 'browser-key').getByText('/ 5 credits').waitFor();
    await keyRow(page, 'browser-key').getByText('daily').waitFor();

    await keyRow(page, 'browser-key').getByRole('button', { name: 'Revoke' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke browser-key?' });
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await keyRow(page, 'browser-key').getByText('revoked', { exact: true }).waitFor();
    const refused = await fetch(`${BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${value}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(refused.status, 403);
    await noErrorShown(page);
    await page.done();
  });

  test('a dialog takes focus, closes with Escape and gives focus back', async () => {
    const page = await open();
    await signIn(page, OWNER);
    await go(page, 'keys');
    const create = page.getByRole('button', { name: 'Create key' });
    await create.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.closest('dialog') !== null), true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Create key');
    await page.done();
  });

  test('a user sees only its own keys and no Users page', async () => {
    const owner = await open();
    await signIn(owner, OWNER);
    await createKey(owner, 'owners-own-key');
    await owner.done();

    const page = await open();
    await signIn(page, USER);
    await createKey(page, 'users-key');
    assert.equal(await keyRow(page, 'owners-own-key').count(), 0, "the owner's key is not listed");
    assert.equal(await page.locator('nav a[data-page="users"]').count(), 0, 'no Users link');
    // By its address the page opens and shows the API's own refusal.
    await page.evaluate(() => { location.hash = '#/users'; });
    await page.locator('main .page[data-page="users"][data-ready="true"]').waitFor();
    const refusal = await page.locator('.notice.error').textContent();
    assert.match(refusal, /permission|forbidden|403/i, 'the API refusal is shown');
    await page.done({ allow: /403/ });
  });

  test('an owner adds a user and changes its role', async () => {
    const page = await open();
    await signIn(page, OWNER);
    await go(page, 'users');
    await page.getByRole('button', { name: 'Add user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a user' });
    await dialog.getByLabel('Email').fill('invited@example.com');
    await dialog.getByLabel('Role').selectOption('auditor');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    const secret = page.getByRole('dialog', { name: /Password for/ });
    assert.ok((await secret.getByRole('textbox').inputValue()).length >= 12);
    await secret.getByRole('button', { name: 'I have stored it' }).click();
    const role = page.getByLabel('Role of invited@example.com');
    await role.selectOption('reviewer');
    await page.getByText('invited@example.com is now reviewer.').waitFor();
    await noErrorShown(page);
    await page.done();
  });

  test('a billing account cannot edit models', async () => {
    const page = await open();
    await signIn(page, BILLING);
    await go(page, 'models');
    await page.locator('code.model-id', { hasText: 'mock-chat' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add model' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Edit' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Disable' }).count(), 0);
    assert.equal(await page.locator('nav a[data-page="keys"]').count(), 0, 'billing manages no keys');
    await noErrorShown(page);
    await page.done();
  });

  test('an owner chooses the models its tenant may use, and /v1 follows', async () => {
    const page = await open();
    await signIn(page, OWNER);
    const value = await createKey(page, 'allow-list-key');
    await go(page, 'models');
    const vision = page.locator('tr', { has: page.locator('code.model-id', { hasText: /^mock-vision$/ }) });
    await vision.getByText('allowed', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Choose models' }).click();
    let dialog = page.getByRole('dialog', { name: /^Models for / });
    await dialog.getByLabel(/^Every model/).uncheck();
    for (const box of await dialog.locator('fieldset input[type=checkbox]').all()) {
      if ((await box.getAttribute('value')) !== 'mock-chat') await box.uncheck();
    }
    await dialog.getByRole('button', { name: 'Save' }).click();
    await vision.getByText('not allowed', { exact: true }).waitFor();
    const ask = (model) => fetch(`${BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${value}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal((await ask('mock-vision')).status, 404);
    assert.equal((await ask('mock-chat')).status, 200);

    // Every model again, for the other tests.
    await page.getByRole('button', { name: 'Choose models' }).click();
    dialog = page.getByRole('dialog', { name: /^Models for / });
    await dialog.getByLabel(/^Every model/).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await vision.getByText('allowed', { exact: true }).waitFor();
    assert.equal((await ask('mock-vision')).status, 200);
    await noErrorShown(page);
    await page.done();
  });

  test('an owner gives a model a second deployment and a key a token limit', async () => {
    const page = await open();
    await signIn(page, OWNER);
    await go(page, 'models');
    const omni = page.locator('tr', { has: page.locator('code.model-id', { hasText: /^mock-omni$/ }) });
    await omni.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit mock-omni' });
    await edit.getByLabel('Further deployments').fill('mock echo 2');
    await edit.getByLabel('Routing strategy').selectOption('least_busy');
    await edit.getByLabel('Weight of this deployment').fill('3');
    await edit.getByLabel(/^Requests per minute/).fill('100');
    await edit.getByLabel(/^Tokens per minute/).fill('50000');
    await edit.getByRole('button', { name: 'Save' }).click();
    await omni.getByText('mock / echo ×2').waitFor();
    await omni.getByText('least busy').waitFor();
    await omni.getByText(/×3/).waitFor();
    // What the API stored comes back into the form.
    await omni.getByRole('button', { name: 'Edit' }).click();
    const again = page.getByRole('dialog', { name: 'Edit mock-omni' });
    assert.equal(await again.getByLabel('Weight of this deployment').inputValue(), '3');
    assert.equal(await again.getByLabel(/^Requests per minute/).inputValue(), '100');
    assert.equal(await again.getByLabel(/^Tokens per minute/).inputValue(), '50000');
    await again.getByLabel(/^Requests per minute/).fill('');
    // The row shows no rpm, so nothing on screen says the save is done:
    // wait for the PATCH and the table's rebuild from the API (the models
    // and the tenant's allow-list; nothing else reads them meanwhile, the
    // first save's rebuild was waited for above) before opening the form
    // from the rebuilt row.
    const path = (r, method, test) => r.request().method() === method && test(new URL(r.url()).pathname);
    const rebuilt = Promise.all([
      page.waitForResponse((r) => path(r, 'PATCH', (p) => p === '/api/v1/models/mock-omni')),
      page.waitForResponse((r) => path(r, 'GET', (p) => p === '/api/v1/models')),
      page.waitForResponse((r) => path(r, 'GET', (p) => /^\/api\/v1\/tenants\/[^/]+\/models$/.test(p))),
    ]);
    await again.getByRole('button', { name: 'Save' }).click();
    await rebuilt;
    await again.waitFor({ state: 'hidden' });
    await omni.getByRole('button', { name: 'Edit' }).click();
    const cleared = page.getByRole('dialog', { name: 'Edit mock-omni' });
    assert.equal(await cleared.getByLabel(/^Requests per minute/).inputValue(), '');
    await cleared.getByRole('button', { name: 'Cancel' }).click();

    await createKey(page, 'tpm-key');
    await keyRow(page, 'tpm-key').getByRole('button', { name: 'Edit' }).click();
    const key = page.getByRole('dialog', { name: 'Edit tpm-key' });
    await key.getByLabel('Token limit (tokens per minute)').fill('1000');
    await key.getByRole('button', { name: 'Save' }).click();
    await keyRow(page, 'tpm-key').getByText('1000/min').waitFor();
    await noErrorShown(page);
    await page.done();
  });

  test('the playground streams an answer from the mock provider', async () => {
    const page = await open();
    await signIn(page, TESTER);
    await go(page, 'playground');
    await page.getByLabel('Model', { exact: true }).selectOption('mock-chat');
    await page.getByLabel('Message').fill('Say something about tollgates');
    const response = page.waitForResponse((r) => r.url().endsWith('/api/v1/playground/chat'));
    await page.getByRole('button', { name: 'Send' }).click();
    const answered = await response;
    assert.equal(answered.status(), 200);
    assert.match(answered.headers()['content-type'], /text\/event-stream/);
    await page.locator('.answer[data-done="true"]').waitFor();
    assert.ok((await page.locator('.answer').textContent()).length > 0);
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    await page.getByRole('heading', { name: 'Risk classification' }).waitFor();
    await noErrorShown(page);
    await shoot(page, 'playground-answered-1280');
    await page.done();
  });

  test('the usage CSV export neutralises every cell a spreadsheet would run as a formula', async () => {
    const page = await open();
    await signIn(page, OWNER);
    // A key whose name is a formula that starts like a negative number.
    const payload = "-2+3+cmd|' /C calc'!A0";
    const value = await createKey(page, payload);
    const answer = await fetch(`${BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${value}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'a row for the CSV' }] }),
    });
    assert.equal(answer.status, 200);
    await go(page, 'usage');
    const exportButton = page.getByRole('button', { name: 'Export CSV' });
    await exportButton.waitFor();
    const downloading = page.waitForEvent('download');
    await exportButton.click();
    const download = await downloading;
    const text = await readFile(await download.path(), 'utf8');
    const line = text.split('\n').find((l) => l.includes('cmd|'));
    assert.ok(line, `no row for the key in ${text}`);
    assert.ok(line.includes(`,"'${payload.replaceAll('"', '""')}",`) || line.includes(`,'${payload},`), `not neutralised: ${line}`);

    // Every dangerous first character (OWASP), numbers included.
    const cells = await page.evaluate(async () => {
      const { toCsv } = await import('/assets/pages/usage.js');
      const names = new Map([['k', '@SUM(1+1)']]);
      const row = { day: '=1+1', keyId: 'k', model: '+cmd', requests: -5, promptTokens: '\t=1', completionTokens: '\r=1', cost: '-0.5' };
      return toCsv([row], names).split('\n')[1];
    });
    assert.equal(cells, `'=1+1,k,'@SUM(1+1),'+cmd,'-5,'\t=1,"'\r=1",'-0.5`);
    await noErrorShown(page);
    await page.done();
  });

  const EVERY_PAGE = ['overview', 'keys', 'usage', 'models', 'webhooks', 'users', 'playground'];
  for (const viewport of [WIDE, NARROW]) {
    test(`every page renders at ${viewport.width} px with no error`, async () => {
      const page = await open(viewport);
      await signIn(page, OWNER);
      for (const id of EVERY_PAGE) {
        await go(page, id);
        await noErrorShown(page);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${id} at ${viewport.width} px scrolls sideways by ${overflow} px`);
        await shoot(page, `${id}-${viewport.width}`);
      }
      const toggle = page.getByRole('button', { name: 'Menu' });
      if (viewport.width < 800) {
        assert.equal(await page.locator('nav').isVisible(), false, 'the menu is collapsed');
        await toggle.click();
        await page.getByRole('link', { name: 'API keys' }).click();
        await ready(page);
        assert.equal(await page.locator('nav').isVisible(), false, 'the menu closes after a choice');
      } else {
        assert.equal(await toggle.isVisible(), false);
        assert.equal(await page.locator('nav').isVisible(), true);
      }
      await page.done();
    });
  }
});

describe('stored markup', () => {
  // Names are chosen by tenants and shown to other people: markup in them
  // must come out as text. (A webhook URL cannot carry markup: the server
  // stores it normalised, with `<`, `>`, `"` and spaces percent-encoded.)
  test('a key name and an email holding markup are shown as text, never as elements', async () => {
    const KEY = '<img src=x onerror="window.__xss=1">';
    // An email holds no spaces; a slash separates the attributes as well.
    const EMAIL = '<img/src=x/onerror=window.__xss=2>@example.com';
    const page = await open();
    await signIn(page, OWNER);
    const token = await page.evaluate(() => sessionStorage.getItem('tollgate.session'));

    // The key is named through the page, as a person would type it.
    await go(page, 'keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill(KEY);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByRole('dialog', { name: 'Your new API key' });
    const value = await secret.getByRole('textbox').inputValue();
    await secret.getByRole('button', { name: 'I have stored it' }).click();
    // Requests, so the name shows in usage and among the Overview's top
    // five keys (other suites share the server and spend too): sent until
    // the stats name it, a bounded number of times.
    const topKeys = async () => {
      const stats = await fetch(`${BASE}/api/v1/stats`, { headers: { Authorization: `Bearer ${token}` } });
      return (await stats.json()).topKeys.map((k) => k.keyName ?? k.name);
    };
    for (let sent = 0; ; sent += 1) {
      const answer = await fetch(`${BASE}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${value}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hello '.repeat(50) }] }),
      });
      assert.equal(answer.status, 200);
      if (sent % 10 === 0 && (await topKeys()).includes(KEY)) break;
      assert.ok(sent < 400, 'the key never reached the top five keys');
    }
    const created = await fetch(`${BASE}/api/v1/users`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, role: 'auditor', password: PASSWORD }),
    });
    assert.equal(created.status, 201, 'the email is accepted as it is');
    assert.equal((await created.json()).user.email, EMAIL);

    const noMarkup = async (where) => {
      const made = await page.evaluate(() => document.querySelectorAll('img[onerror], img[src="x"]').length);
      assert.equal(made, 0, `${where}: an <img> was made from a stored name`);
      assert.equal(await page.evaluate(() => window.__xss), undefined, `${where}: the handler ran`);
    };
    for (const [id, text] of [['keys', KEY], ['overview', KEY], ['usage', KEY], ['users', EMAIL]]) {
      await go(page, id);
      await page.getByText(text, { exact: true }).first().waitFor();
      await noMarkup(id);
    }
    // The name in a dialog's title and in a confirmation, too.
    await go(page, 'keys');
    await page.locator('tr', { hasText: KEY }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: `Edit ${KEY}` });
    assert.equal(await edit.getByLabel('Name').inputValue(), KEY);
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('tr', { hasText: KEY }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog', { name: `Revoke ${KEY}?` }).getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText(`Key ${KEY} revoked.`).waitFor();
    await page.locator('tr', { hasText: KEY }).getByText('revoked', { exact: true }).waitFor();
    await noMarkup('after the dialogs');
    await noErrorShown(page);
    await page.done();
  });
});
