// Shared by the page suites (`*.test.mjs` beside this file, each run by
// tests/browser.rs in its own Node process): the browser, pages that record
// console errors, sign-in, navigation, screenshots, the accessibility check
// (axe-core) and a small client for the dashboard API, so a test can create
// data through the API and then look for it on the page.
//
// tests/browser.rs passes: TOLLGATE_URL, OWNER_EMAIL, OWNER_PASSWORD,
// ACCOUNT_PASSWORD, ARTIFACTS_DIR, CHROMIUM (optional), and one
// `<ROLE>_EMAIL` per seeded account (USER, BILLING, TESTER, ADMIN, AUDITOR,
// REVIEWER), all in the operator's tenant `default`.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through tests/browser.rs`);
  return value;
};

export const BASE = env('TOLLGATE_URL');
const PASSWORD = env('ACCOUNT_PASSWORD');
const account = (role) => ({ email: env(`${role}_EMAIL`), password: PASSWORD });
export const OWNER = { email: env('OWNER_EMAIL'), password: env('OWNER_PASSWORD') };
export const ADMIN = account('ADMIN');
export const AUDITOR = account('AUDITOR');
export const REVIEWER = account('REVIEWER');
export const BILLING = account('BILLING');
export const USER = account('USER');
export const TESTER = account('TESTER');
export const ARTIFACTS = env('ARTIFACTS_DIR');
mkdirSync(ARTIFACTS, { recursive: true });

export const WIDE = { width: 1280, height: 900 };
export const NARROW = { width: 390, height: 844 };

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

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

/**
 * A fresh browser context and page that records console errors and
 * uncaught exceptions; `page.done()` closes it and fails on any.
 * `allow` is a pattern of expected console errors (a 403 the test
 * provoked, say).
 */
export async function open(viewport = WIDE) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
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

export async function signIn(page, { email, password }) {
  await page.goto(`${BASE}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await ready(page);
}

/** Waits until the current page has rendered (or shown its error). */
export async function ready(page) {
  await page.locator('main .page[data-ready="true"]').waitFor();
}

/** Opens a page from the menu's address (the menu entry must exist). */
export async function go(page, id) {
  await page.evaluate((hash) => { location.hash = hash; }, `#/${id}`);
  await page.locator(`nav a[data-page="${id}"][aria-current="page"]`).waitFor({ state: 'attached' });
  await ready(page);
}

/** Opens a page by typing its address, as someone without a menu entry would. */
export async function goByUrl(page, id) {
  await page.evaluate((hash) => { location.hash = hash; }, `#/${id}`);
  await page.locator(`main .page[data-page="${id}"][data-ready="true"]`).waitFor();
}

/** The ids of the pages in the menu. */
export async function menu(page) {
  return page.locator('nav a[data-page]').evaluateAll((links) => links.map((a) => a.dataset.page));
}

export async function noErrorShown(page) {
  const errors = await page.locator('.notice.error').allTextContents();
  assert.deepEqual(errors, [], 'the page shows an error');
}

export async function shoot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** No sideways scroll: the document is no wider than the viewport. */
export async function noOverflow(page) {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  assert.ok(scroll <= client, `the page scrolls sideways (${scroll} > ${client})`);
}

/**
 * Runs axe-core on the page as it is and fails on any serious or critical
 * violation, naming the rule and the elements.
 */
export async function accessible(page) {
  // Evaluated through the debugging protocol: an inline <script> tag would
  // be (rightly) refused by the dashboard's Content-Security-Policy.
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(violations, [], 'axe-core found serious or critical violations');
}

/**
 * Every check a page gets at both widths: rendered without an error shown,
 * no sideways scroll at 390 px, accessible, and a screenshot named
 * `<id>-<width>.png` in ARTIFACTS_DIR.
 */
export async function checkPage(account, id) {
  for (const viewport of [WIDE, NARROW]) {
    const page = await open(viewport);
    await signIn(page, account);
    await go(page, id);
    await noErrorShown(page);
    await noOverflow(page);
    await accessible(page);
    await shoot(page, `${id}-${viewport.width}`);
    await page.done();
  }
}

/** A dashboard API client signed in as `account` (for arranging and checking data). */
export async function apiAs({ email, password }) {
  const login = await fetch(`${BASE}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(login.status, 200, `signing in ${email} through the API`);
  const { token } = await login.json();
  const call = async (method, path, body) => {
    const response = await fetch(`${BASE}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = text; }
    return { status: response.status, body: json, headers: response.headers };
  };
  return {
    token,
    call,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body ?? {}),
    put: (path, body) => call('PUT', path, body),
    patch: (path, body) => call('PATCH', path, body),
    delete: (path) => call('DELETE', path),
  };
}

/** Sends one inference request with an API key; returns status and JSON body. */
export async function infer(key, body, headers = {}) {
  const response = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: response.status, body: json, headers: response.headers };
}
