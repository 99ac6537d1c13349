// The compliance record pages (issue 24, items 1-4): the review queue,
// incidents, the audit log and the conversation log. Each test creates its
// data through the gateway or the dashboard API, acts in the page, and
// checks the API reports what the page did; the roles without the
// permission have no menu entry and see the API's 403 by the address.
//
// The suite sets the default tenant's policy (hold high-risk answers,
// redact personal data in the logs) and puts it back afterwards: every
// suite shares one server.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  ADMIN, AUDITOR, BASE, BILLING, OWNER, REVIEWER, USER,
  apiAs, checkPage, go, goByUrl, infer, menu, noErrorShown, open, shoot, signIn,
} from './harness.mjs';

const LOAN = 'Score this loan applicant and decide: approve or reject.';
const run = Date.now().toString(36);

let owner;
let key;
let keyId;
let savedPolicy;

/** Polls a held answer with the API key, as the caller would. */
async function poll(id) {
  const response = await fetch(`${BASE}/v1/reviews/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

/** Sends a high-risk request that the policy holds; returns the review id. */
async function hold(purpose) {
  const held = await infer(key, { model: 'mock-chat', purpose, messages: [{ role: 'user', content: LOAN }] });
  assert.equal(held.status, 202, `the answer is held: ${JSON.stringify(held.body)}`);
  return held.body.id;
}

/** A served chat request; returns its request id. */
async function served(content, extra = {}) {
  const answer = await infer(key, { model: 'mock-chat', messages: [{ role: 'user', content }], ...extra });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.headers.get('x-request-id');
}

/** Waits until the menu's review count shows `expected` (0: no count). */
async function menuCountIs(page, expected) {
  await page.waitForFunction((n) => {
    const count = document.querySelector('nav a[data-page="reviews"] .nav-count');
    const shown = count ? Number(count.textContent.replace(/\D/g, '')) : 0;
    return shown === n;
  }, expected);
}

/** Waits until the page's table has `n` rows (a search has replaced the list). */
async function rowsAre(page, n) {
  await page.waitForFunction((count) => document.querySelectorAll('main tbody tr').length === count, n);
}

/** A role without the page: no menu entry, and the API's 403 by the address. */
async function refusedByUrl(account, id) {
  const page = await open();
  await signIn(page, account);
  assert.ok(!(await menu(page)).includes(id), `${account.email} has no ${id} entry`);
  await goByUrl(page, id);
  const refusal = await page.locator('main .notice.error').textContent();
  assert.match(refusal, /permission|forbidden|403/i, `${account.email} sees the API's refusal of ${id}`);
  await page.done({ allow: /403/ });
}

describe('compliance pages', () => {
  before(async () => {
    owner = await apiAs(OWNER);
    savedPolicy = (await owner.get('/api/v1/policies')).body;
    const policy = await owner.put('/api/v1/policies', { reviewMode: 'high_risk', piiRedaction: 'logs', logBodies: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    const created = await owner.post('/api/v1/keys', { keyName: `compliance-pages-${run}`, allowHighRisk: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    key = created.body.value;
    keyId = created.body.key.id;
  });

  after(async () => {
    if (!owner) return;
    const pending = await owner.get('/api/v1/reviews?status=pending');
    for (const item of pending.body?.data || []) await owner.post(`/api/v1/reviews/${item.id}/reject`, { note: 'suite cleanup' });
    if (savedPolicy) {
      const { reviewMode, piiRedaction, logBodies } = savedPolicy;
      await owner.put('/api/v1/policies', { reviewMode, piiRedaction, logBodies });
    }
    if (keyId) await owner.post(`/api/v1/keys/${keyId}/revoke`);
  });

  test('a reviewer approves and rejects held answers with a note; the queue and the menu count follow', async () => {
    const reviewer = await apiAs(REVIEWER);
    const approveId = await hold(`credit pre-check alpha ${run}`);
    const rejectId = await hold(`credit pre-check beta ${run}`);
    const pendingCount = async () => (await reviewer.get('/api/v1/reviews?status=pending')).body.data.length;
    const before = await pendingCount();

    const page = await open();
    await signIn(page, REVIEWER);
    assert.ok((await menu(page)).includes('reviews'));
    await go(page, 'reviews');
    await menuCountIs(page, before);
    const row = page.locator(`tr[data-review="${approveId}"]`);
    await row.waitFor();
    const text = await row.textContent();
    assert.match(text, /high/, 'the risk level');
    assert.match(text, new RegExp(`credit pre-check alpha ${run}`), 'the purpose');
    assert.match(text, /Score this loan applicant/, 'the request excerpt');
    assert.match(text, /echo: Score this loan/, 'the answer excerpt');
    assert.match(text, /\d+ (h|d|min)|under a minute/, 'age and time left');
    await shoot(page, 'reviews-pending');

    // Approve with a note: the item leaves the list, the API and the caller agree.
    await row.getByRole('button', { name: 'Approve…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('echo: Score this loan applicant').waitFor();
    await dialog.getByLabel(/Note/).fill('checked by a person');
    await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    await noErrorShown(page);
    const approved = (await reviewer.get(`/api/v1/reviews/${approveId}`)).body;
    assert.equal(approved.status, 'approved');
    assert.equal(approved.note, 'checked by a person');
    assert.equal((await poll(approveId)).status, 200, 'the caller gets the approved answer');
    await menuCountIs(page, before - 1);

    // Reject from the keyboard: the dialog's note field has focus.
    await page.locator(`tr[data-review="${rejectId}"]`).getByRole('button', { name: 'Reject…' }).click();
    await page.keyboard.type('no automated credit decisions');
    await page.getByRole('dialog').getByRole('button', { name: 'Reject', exact: true }).click();
    await page.locator(`tr[data-review="${rejectId}"]`).waitFor({ state: 'detached' });
    const rejected = (await reviewer.get(`/api/v1/reviews/${rejectId}`)).body;
    assert.equal(rejected.status, 'rejected');
    const refused = await poll(rejectId);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /no automated credit decisions/);
    await menuCountIs(page, await pendingCount());

    // The decided items are under their status, with who decided and the note.
    await page.getByLabel('Show').selectOption('rejected');
    const decided = page.locator(`tr[data-review="${rejectId}"]`);
    await decided.waitFor();
    assert.match(await decided.textContent(), /rejected by reviewer@example\.com.*Note: no automated credit decisions/s);
    await page.done();
  });

  test('the review queue: absent for user and billing, refused by its address; checked at both widths', async () => {
    await hold(`credit pre-check gamma ${run}`);
    await refusedByUrl(USER, 'reviews');
    await refusedByUrl(BILLING, 'reviews');
    await checkPage(REVIEWER, 'reviews');
  });

  test('an admin files an incident, changes its status and exports the Article 73 report', async () => {
    const evidenceId = await served(`a greeting that turned out harmful ${run}`);
    const filed = await owner.post('/api/v1/incidents', {
      severity: 'critical', category: `discriminatory_output_${run}`, description: 'Filed through the API by the test.', requestIds: [evidenceId],
    });
    assert.equal(filed.status, 201, JSON.stringify(filed.body));
    const id = filed.body.id;
    const admin = await apiAs(ADMIN);

    const page = await open();
    await signIn(page, ADMIN);
    await go(page, 'incidents');
    const row = page.locator(`tr[data-incident="${id}"]`);
    await row.waitFor();
    assert.match(await row.textContent(), /critical.*discriminatory_output.*open/s);

    // Filters: severity on the page, status through the API.
    await page.getByLabel('Severity').selectOption('fatal');
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Severity').selectOption('critical');
    await row.waitFor();
    await page.getByLabel('Severity').selectOption('');
    await page.getByLabel('Status').selectOption('closed');
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Status').selectOption('');
    await row.waitFor();

    // File one through the form.
    await page.getByRole('button', { name: 'File incident' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Severity').selectOption('serious');
    await form.getByLabel('Category').fill(`ui_filed_${run}`);
    await form.getByLabel('Description').fill('Filed in the browser.');
    await form.getByLabel('Linked request ids').fill(evidenceId);
    await form.getByRole('button', { name: 'File incident' }).click();
    await page.locator('tr', { hasText: `ui_filed_${run}` }).waitFor();
    const listed = (await admin.get('/api/v1/incidents')).body.data.find((i) => i.category === `ui_filed_${run}`);
    assert.ok(listed, 'the API lists the filed incident');
    assert.equal(listed.severity, 'serious');
    assert.deepEqual(listed.requestIds, [evidenceId]);

    // The detail: the evidence, then the status moves along.
    await row.getByRole('button', { name: `Open incident ${id}` }).click();
    const report = page.locator(`article[data-incident="${id}"]`);
    await report.waitFor();
    assert.match(await report.textContent(), new RegExp(evidenceId), 'the linked request');
    await page.getByRole('button', { name: 'Mark reported' }).click();
    await page.getByText(`Incident ${id} is now reported.`).waitFor();
    const reported = (await admin.get(`/api/v1/incidents/${id}`)).body;
    assert.equal(reported.status, 'reported');
    assert.ok(reported.reportedAt, 'reportedAt is set');
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Close incident' }).click();
    await page.getByText(`Incident ${id} is now closed.`).waitFor();
    assert.equal((await admin.get(`/api/v1/incidents/${id}`)).body.status, 'closed');

    // The report as a JSON file.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download report (JSON)' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `incident-${id}-article-73.json`);
    const json = JSON.parse(await readFile(await download.path(), 'utf8'));
    assert.match(json.report, /Article 73/);
    assert.equal(json.incident.id, id);
    assert.equal(json.incident.status, 'closed');
    assert.equal(json.reportingPeriodDays, 2);
    assert.deepEqual(json.evidence.map((e) => e.requestId), [evidenceId]);

    // The printable page: the report without the frame and the buttons.
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('nav').isVisible(), false, 'no menu on paper');
    assert.equal(await page.getByRole('button', { name: 'Download report (JSON)' }).isVisible(), false, 'no buttons on paper');
    assert.ok(await report.getByRole('heading', { name: /Article 73/ }).isVisible(), 'the report is on paper');
    await shoot(page, 'incident-report-print');
    await page.done();
  });

  test('a list answered out of order shows what its filters say now, not an earlier answer', async () => {
    // A read that waits for the store's pending commit may answer after a
    // later one: the page must drop the earlier filter's answer.
    const filed = await owner.post('/api/v1/incidents', { severity: 'critical', category: `out_of_order_${run}` });
    assert.equal(filed.status, 201, JSON.stringify(filed.body));
    const page = await open();
    await signIn(page, ADMIN);
    await go(page, 'incidents');
    const row = page.locator(`tr[data-incident="${filed.body.id}"]`);
    await row.waitFor();
    await page.getByLabel('Status').selectOption('closed');
    await row.waitFor({ state: 'detached' });

    // The unfiltered list is held until the `closed` list is shown.
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    const unfiltered = (url) => url.pathname === '/api/v1/incidents' && url.search === '';
    await page.route(unfiltered, async (route) => { await held; await route.continue(); });
    const earlier = page.waitForResponse((response) => unfiltered(new URL(response.url())));
    const later = page.waitForResponse((response) => response.url().endsWith('/api/v1/incidents?status=closed'));
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Status').selectOption('closed');
    await later;
    release();
    await earlier;
    // The earlier answer holds the row; give the page's code time to run.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    assert.equal(await row.count(), 0, 'the earlier answer was not shown');
    assert.equal(await page.getByLabel('Status').inputValue(), 'closed');
    await page.unroute(unfiltered);
    await page.done();
  });

  test('an auditor reads incidents with their evidence but has no actions; user and billing are refused', async () => {
    const evidenceId = await served(`evidence for the auditor ${run}`);
    const filed = await owner.post('/api/v1/incidents', { severity: 'fatal', category: `auditor_view_${run}`, requestIds: [evidenceId] });
    assert.equal(filed.status, 201);
    const page = await open();
    await signIn(page, AUDITOR);
    await go(page, 'incidents');
    assert.equal(await page.getByRole('button', { name: 'File incident' }).count(), 0);
    await page.getByRole('button', { name: `Open incident ${filed.body.id}` }).click();
    const report = page.locator(`article[data-incident="${filed.body.id}"]`);
    await report.waitFor();
    // The auditor reads the conversation log: the evidence carries the request.
    await report.getByText(`evidence for the auditor ${run}`).first().waitFor();
    for (const name of ['Mark reported', 'Close', 'Reopen']) {
      assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name} button`);
    }
    assert.equal(await page.getByRole('button', { name: 'Download report (JSON)' }).count(), 1);
    await page.done();
    await refusedByUrl(USER, 'incidents');
    await refusedByUrl(BILLING, 'incidents');
    await checkPage(ADMIN, 'incidents');
  });

  test('an auditor filters the audit log, pages through it, reads an entry and verifies the chain', async () => {
    const auditor = await apiAs(AUDITOR);
    const ownerId = (await owner.get('/api/v1/me')).body.id;
    const made = await owner.post('/api/v1/incidents', { severity: 'serious', category: `audit_trail_${run}` });
    assert.equal(made.status, 201);
    // More than a page of entries, so there is an older page.
    while ((await auditor.get('/api/v1/audit?limit=60')).body.data.length < 60) await served(`filler ${run}`);

    const page = await open();
    await signIn(page, AUDITOR);
    await go(page, 'audit');
    const firstPage = (await auditor.get('/api/v1/audit?limit=50')).body;
    await page.locator(`tr[data-seq="${firstPage.data[0].seq}"]`).waitFor();
    const secondPage = (await auditor.get(`/api/v1/audit?limit=50&before=${firstPage.nextBefore}`)).body;
    await page.getByRole('button', { name: 'Older →' }).click();
    await page.locator(`tr[data-seq="${secondPage.data[0].seq}"]`).waitFor();
    await page.getByText('Page 2').waitFor();
    await page.getByRole('button', { name: '← Newer' }).click();
    await page.locator(`tr[data-seq="${firstPage.data[0].seq}"]`).waitFor();

    // Action and actor: the owner's filing, and only matching rows.
    await page.getByLabel('Action starts with').fill('POST /api/v1/incidents');
    await page.getByLabel('Actor').fill(`account:${ownerId}`);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const expected = (await auditor.get(`/api/v1/audit?action=${encodeURIComponent('POST /api/v1/incidents')}&actor=${encodeURIComponent(`account:${ownerId}`)}`)).body.data;
    await rowsAre(page, expected.length);
    const newest = page.locator(`tr[data-seq="${expected[0].seq}"]`);
    await newest.waitFor();
    for (const action of await page.locator('.audit-action').allTextContents()) assert.ok(action.startsWith('POST /api/v1/incidents'), action);
    await newest.getByRole('button', { name: `Show entry ${expected[0].seq}` }).click();
    const entry = page.getByRole('dialog');
    await entry.getByText(`audit_trail_${run}`).waitFor();
    await entry.getByText(expected[0].hash).waitFor();
    await page.keyboard.press('Escape');

    // A date range with nothing in it.
    await page.getByLabel('From (UTC)').fill('2999-01-01T00:00');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No entry matches these filters.').waitFor();

    await page.getByRole('button', { name: 'Verify chain' }).click();
    const verified = (await auditor.get('/api/v1/audit/verify')).body;
    assert.equal(verified.valid, true);
    await page.getByText(`The chain is intact: ${verified.entries} entries verified.`).waitFor();
    await page.done();

    await refusedByUrl(USER, 'audit');
    await refusedByUrl(BILLING, 'audit');
    await refusedByUrl(ADMIN, 'audit');
    await checkPage(AUDITOR, 'audit');
  });

  test('an auditor searches the conversation log and reads a record, with personal data as its placeholder', async () => {
    const auditor = await apiAs(AUDITOR);
    const subject = `subject-${run}`;
    const address = `jane.doe.${run}@example.com`;
    const id = await served(`Please write to ${address} about the greeting.`, { end_user_id: subject });
    await served('Somebody else entirely.', { end_user_id: `other-${run}` });
    const stored = (await auditor.get(`/api/v1/conversations/${id}`)).body;

    const page = await open();
    await signIn(page, AUDITOR);
    await go(page, 'conversations');
    await page.getByLabel('End user id').fill(subject);
    await page.getByRole('button', { name: 'Search' }).click();
    await rowsAre(page, 1);
    const row = page.locator(`tr[data-request="${id}"]`);
    await row.waitFor();
    assert.match(await row.textContent(), /\[EMAIL_1\]/);

    await row.getByRole('button', { name: `Open request ${id}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Please write to [EMAIL_1] about the greeting.', { exact: true }).waitFor();
    const shown = await dialog.textContent();
    assert.ok(!shown.includes(address), 'the address itself is never shown');
    assert.match(shown, /echo: Please write to \[EMAIL_1\]/, 'the answer');
    assert.match(shown, new RegExp(`Risk level${stored.riskLevel}`), 'the classification');
    const cost = new Intl.NumberFormat('en', { maximumFractionDigits: 6 }).format(stored.cost);
    assert.ok(shown.includes(`Cost (credits)${cost}`), `the cost ${cost}`);
    await page.keyboard.press('Escape');

    // Key and level narrow the search; a future date range finds nothing.
    await page.getByLabel('Key id').fill('key_of_nobody');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No record matches this search.').waitFor();
    await page.getByLabel('Key id').fill(keyId);
    await page.getByRole('button', { name: 'Search' }).click();
    await row.waitFor();
    await page.getByLabel('Risk level').selectOption('high');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No record matches this search.').waitFor();
    assert.equal((await auditor.get(`/api/v1/conversations?endUserId=${subject}&level=high`)).body.data.length, 0);
    await page.getByLabel('Risk level').selectOption('');
    await page.getByLabel('From (UTC)').fill('2999-01-01T00:00');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No record matches this search.').waitFor();
    await page.done();

    await refusedByUrl(USER, 'conversations');
    await refusedByUrl(BILLING, 'conversations');
    await refusedByUrl(ADMIN, 'conversations');
    await checkPage(AUDITOR, 'conversations');
  });
});
