// The governance pages (issue 24, items 5-9): sub-processors, consents,
// data subject requests, policies and tenants. Each test creates its data
// through the dashboard API or the gateway, acts in the page, and checks
// that the API then reports what the page did; the roles without the
// permission have no menu entry and see the API's 403 by the address.
//
// Every suite shares one server: names carry a per-run suffix, and the
// policy test puts the default tenant's policy back afterwards.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  ADMIN, AUDITOR, BILLING, OWNER, REVIEWER, TESTER, USER,
  apiAs, checkPage, go, goByUrl, infer, menu, noErrorShown, open, signIn,
} from './harness.mjs';

const run = Date.now().toString(36);

let owner;

/**
 * A role without the page: no menu entry, and the API's 403 by the
 * address (`act`: what to do in the page first, for a page that calls the
 * API only when asked).
 */
async function refusedByUrl(account, id, act) {
  const page = await open();
  await signIn(page, account);
  assert.ok(!(await menu(page)).includes(id), `${account.email} has no ${id} entry`);
  await goByUrl(page, id);
  if (act) await act(page);
  const refusal = await page.locator('main .notice.error').textContent();
  assert.match(refusal, /permission/i, `${account.email} sees the API's refusal of ${id}`);
  await page.done({ allow: /403/ });
}

/** Signs in and opens a page from the menu. */
async function pageAs(account, id) {
  const page = await open();
  await signIn(page, account);
  const entries = await menu(page);
  assert.ok(entries.includes(id), `${account.email} has a ${id} entry: ${entries}`);
  await go(page, id);
  return page;
}

/** Fills a field of the open dialog by its label. */
async function fill(page, label, value) {
  await page.locator('dialog').getByLabel(label, { exact: true }).fill(value);
}

async function submitDialog(page, name) {
  await page.locator('dialog').getByRole('button', { name, exact: true }).click();
  await page.locator('dialog').waitFor({ state: 'detached' });
}

describe('governance pages', () => {
  before(async () => {
    owner = await apiAs(OWNER);
  });

  test('sub-processors: every role reads the registry and its change history; the operator adds, edits and deletes', async () => {
    const seeded = `gov-seeded-${run}`;
    const created = await owner.post('/api/v1/sub-processors', {
      name: seeded, legalName: 'Seeded Processor GmbH', purpose: 'inference', location: 'DE', dataCategories: ['prompts'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const registry = (await owner.get('/api/v1/sub-processors')).body;

    // A user reads it, with the versions, and may not change it.
    for (const account of [USER, REVIEWER]) {
      const page = await pageAs(account, 'subprocessors');
      const row = page.locator(`tr[data-entry="${seeded}"]`);
      await row.waitFor();
      assert.match(await row.textContent(), /Seeded Processor GmbH/);
      assert.equal(await row.locator('td[data-label="Version"]').textContent(), created.body.version);
      assert.equal(await page.locator('[data-version]').textContent(), registry.version);
      assert.equal(await page.getByRole('button', { name: 'Add sub-processor' }).count(), 0);
      assert.equal(await row.getByRole('button').count(), 0);
      await noErrorShown(page);
      await page.done();
    }

    // The operator's admin adds, edits and deletes.
    const admin = await apiAs(ADMIN);
    const added = `gov-added-${run}`;
    const page = await pageAs(ADMIN, 'subprocessors');
    await page.getByRole('button', { name: 'Add sub-processor' }).click();
    await fill(page, 'Provider id', added);
    await fill(page, 'Legal entity', 'Added AI Ltd');
    await fill(page, 'Location of processing', 'IE');
    await fill(page, 'Data categories (one per line)', 'prompts\ncompletions');
    await fill(page, 'Data-processing agreement (URL)', 'https://example.com/dpa');
    await submitDialog(page, 'Add');
    const row = page.locator(`tr[data-entry="${added}"]`);
    await row.waitFor();
    let listed = (await admin.get('/api/v1/sub-processors')).body;
    let entry = listed.subProcessors.find((e) => e.name === added);
    assert.ok(entry, 'the API lists the added entry');
    assert.deepEqual(entry.dataCategories, ['prompts', 'completions']);
    assert.equal(entry.dpaUrl, 'https://example.com/dpa');
    assert.equal(await page.locator('[data-version]').textContent(), listed.version);

    await row.getByRole('button', { name: 'Edit' }).click();
    await fill(page, 'Location of processing', 'EU (Ireland)');
    await submitDialog(page, 'Save');
    await page.locator(`tr[data-entry="${added}"] td[data-label="Location"]`, { hasText: 'EU (Ireland)' }).waitFor();
    const before = Number(entry.version);
    listed = (await admin.get('/api/v1/sub-processors')).body;
    entry = listed.subProcessors.find((e) => e.name === added);
    assert.equal(entry.location, 'EU (Ireland)');
    assert.ok(Number(entry.version) > before, 'the edit raised the entry version');

    await page.locator(`tr[data-entry="${added}"]`).getByRole('button', { name: 'Delete' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Delete entry' }).click();
    await page.locator(`tr[data-entry="${added}"]`).waitFor({ state: 'detached' });
    listed = (await admin.get('/api/v1/sub-processors')).body;
    assert.ok(!listed.subProcessors.some((e) => e.name === added), 'the API no longer lists it');
    await noErrorShown(page);
    await page.done();

    // Roles without audit.view read each change in the registry's history,
    // newest first, with who made it.
    const adminEmail = (await admin.get('/api/v1/me')).body.email;
    const api = (await admin.get(`/api/v1/sub-processors/${added}/history`)).body;
    assert.deepEqual(api.data.map((r) => r.change), ['deleted', 'updated', 'created']);
    for (const account of [USER, BILLING]) {
      const history = await pageAs(account, 'subprocessors');
      const changes = history.locator('.table-wrap[aria-label="Registry change history"] tbody tr');
      await changes.first().waitFor();
      const rows = await changes.allTextContents();
      const ours = rows.filter((r) => r.includes(added));
      assert.equal(ours.length, 3, `three changes of ${added}: ${rows}`);
      ['deleted', 'updated', 'created'].forEach((change, i) => {
        assert.ok(ours[i].includes(change) && ours[i].includes(adminEmail) && ours[i].includes(api.data[i].version),
          `row ${i} of ${added} is ${change} by ${adminEmail}: ${ours[i]}`);
      });
      assert.ok(ours[1].includes('EU (Ireland)'), `the update shows what the entry became: ${ours[1]}`);
      assert.ok(rows.some((r) => r.includes(seeded) && r.includes('created')), 'the seeded entry is in the history');
      await noErrorShown(history);
      await history.done();
    }

    await checkPage(OWNER, 'subprocessors');
  });

  test('consents: record, filter by subject and withdraw; roles without consents.manage are refused', async () => {
    const alice = `gov-alice-${run}`;
    const bob = `gov-bob-${run}`;
    const seeded = await owner.post('/api/v1/consents', { endUserId: bob, purpose: 'newsletter' });
    assert.equal(seeded.status, 201, JSON.stringify(seeded.body));

    const page = await pageAs(ADMIN, 'consents');
    await page.locator(`tr[data-consent="${seeded.body.id}"]`).waitFor();
    await page.getByRole('button', { name: 'Record consent' }).click();
    await fill(page, 'End user id', alice);
    await fill(page, 'Purpose consented to', 'credit pre-check');
    await submitDialog(page, 'Record consent');
    await page.locator('.notice.ok', { hasText: 'recorded' }).waitFor();
    const recorded = (await owner.get(`/api/v1/consents?endUserId=${alice}`)).body.data;
    assert.equal(recorded.length, 1, 'the API lists the recorded consent');
    assert.equal(recorded[0].purpose, 'credit pre-check');
    const aliceRow = page.locator(`tr[data-consent="${recorded[0].id}"]`);
    await aliceRow.waitFor();

    // The filter shows one subject's records only.
    await page.getByRole('searchbox', { name: 'End user id' }).fill(alice);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator(`tr[data-consent="${seeded.body.id}"]`).waitFor({ state: 'detached' });
    assert.equal(await page.locator('tbody tr').count(), 1);

    await aliceRow.getByRole('button', { name: 'Withdraw' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Withdraw' }).click();
    await aliceRow.locator('td[data-label="Status"]', { hasText: 'withdrawn' }).waitFor();
    const withdrawn = (await owner.get(`/api/v1/consents/${recorded[0].id}`)).body;
    assert.equal(withdrawn.status, 'withdrawn');
    assert.ok(withdrawn.withdrawnAt);
    await page.getByRole('button', { name: 'Show all' }).click();
    await page.locator(`tr[data-consent="${seeded.body.id}"]`).waitFor();
    await noErrorShown(page);
    await page.done();

    for (const account of [AUDITOR, USER, BILLING]) await refusedByUrl(account, 'consents');
    await checkPage(ADMIN, 'consents');
  });

  test('data subjects: the owner downloads an export, then erases after typing the id, and sees the receipt', async () => {
    const subject = `gov-subject-${run}`;
    const created = await owner.post('/api/v1/keys', { keyName: `governance-${run}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const answer = await infer(created.body.value, {
      model: 'mock-chat', end_user_id: subject, messages: [{ role: 'user', content: `What is my plan? ${run}` }],
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const consent = await owner.post('/api/v1/consents', { endUserId: subject, purpose: 'support' });
    assert.equal(consent.status, 201);

    const page = await pageAs(OWNER, 'subjects');
    await page.getByLabel('End user id').fill(subject);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export as JSON' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^tollgate-export-gov-subject-.*\.json$/);
    const exported = JSON.parse(await readFile(await download.path(), 'utf8'));
    assert.equal(exported.endUserId, subject);
    assert.equal(exported.conversations.length, 1, JSON.stringify(exported));
    assert.equal(exported.conversations[0].request.messages[0].content, `What is my plan? ${run}`);
    assert.deepEqual(exported.consents.map((c) => c.id), [consent.body.id]);
    assert.equal(exported.usage.length, 1);
    await page.locator('.facts').waitFor();
    // The export erased nothing.
    assert.equal((await owner.get(`/api/v1/consents?endUserId=${subject}`)).body.data.length, 1);

    // A wrong confirmation erases nothing; the right one erases.
    await page.getByRole('button', { name: 'Erase…' }).click();
    await fill(page, `Type ${subject} to confirm`, `${subject}-typo`);
    await page.locator('dialog').getByRole('button', { name: 'Erase for good' }).click();
    await page.locator('dialog .notice.error', { hasText: 'exactly' }).waitFor();
    assert.equal((await owner.get(`/api/v1/consents?endUserId=${subject}`)).body.data.length, 1);
    await fill(page, `Type ${subject} to confirm`, subject);
    await submitDialog(page, 'Erase for good');
    const receipt = page.locator('.receipt');
    await receipt.waitFor();
    assert.equal(await receipt.locator('[data-erased="conversations"]').textContent(), '1');
    assert.equal(await receipt.locator('[data-erased="consents"]').textContent(), '1');
    assert.match(await receipt.textContent(), new RegExp(exported.pseudonym));
    assert.equal((await owner.get(`/api/v1/consents?endUserId=${subject}`)).body.data.length, 0);
    assert.equal((await owner.get(`/api/v1/conversations?endUserId=${subject}`)).body.data.length, 0);
    const kept = (await owner.get(`/api/v1/conversations?endUserId=${exported.pseudonym}`)).body.data;
    assert.equal(kept.length, 1);
    assert.equal(kept[0].erased, true);
    // The export taken before erasing can still be downloaded.
    const [again] = await Promise.all([
      page.waitForEvent('download'),
      receipt.getByRole('button', { name: 'Download the export taken before erasing' }).click(),
    ]);
    const before = JSON.parse(await readFile(await again.path(), 'utf8'));
    assert.equal(before.conversations[0].request.messages[0].content, `What is my plan? ${run}`);
    await noErrorShown(page);
    await page.done();

    const tryExport = async (refused) => {
      await refused.getByLabel('End user id').fill(subject);
      await refused.getByRole('button', { name: 'Export as JSON' }).click();
    };
    for (const account of [ADMIN, AUDITOR]) await refusedByUrl(account, 'subjects', tryExport);
    await checkPage(OWNER, 'subjects');
  });

  describe('policies', () => {
    let saved;
    before(async () => {
      saved = (await owner.get('/api/v1/policies')).body;
    });
    after(async () => {
      const { tenantId, ...fields } = saved;
      const restored = await owner.put('/api/v1/policies', fields);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
    });

    test('policies: every field is in the form, a save reaches the API, and a refusal is shown at its field', async () => {
      const admin = await apiAs(ADMIN);
      const set = await admin.put('/api/v1/policies', { reviewMode: 'high_risk', retentionDays: 190, requirePurpose: true });
      assert.equal(set.status, 200, JSON.stringify(set.body));

      const page = await pageAs(ADMIN, 'policies');
      const fields = await page.locator('.policy-form [data-field]').evaluateAll((nodes) => nodes.map((n) => n.dataset.field));
      const shape = Object.keys(set.body).filter((k) => k !== 'tenantId');
      for (const name of shape) assert.ok(fields.includes(name), `the form has ${name}`);
      assert.equal(await page.getByLabel('Hold for human review').inputValue(), 'high_risk');
      assert.equal(await page.getByLabel('Keep records (days)', { exact: true }).inputValue(), '190');
      assert.ok(await page.getByLabel('Require a purpose on high-risk requests').isChecked());

      await page.getByLabel('Keep records (days)', { exact: true }).fill('200');
      await page.getByLabel('Require a valid consent on high-risk requests').check();
      await page.getByLabel('Redact personal data').selectOption('upstream');
      await page.getByRole('button', { name: 'Add pattern' }).click();
      await page.getByLabel('Name', { exact: true }).last().fill('customer');
      await page.getByLabel('Regex', { exact: true }).last().fill('KD-\\d{6}');
      await page.getByRole('button', { name: 'Save policy' }).click();
      await page.locator('.policy-form .notice.ok').waitFor();
      let policy = (await admin.get('/api/v1/policies')).body;
      assert.equal(policy.retentionDays, 200);
      assert.equal(policy.requireConsent, true);
      assert.equal(policy.piiRedaction, 'upstream');
      assert.deepEqual(policy.piiPatterns, [{ name: 'customer', regex: 'KD-\\d{6}' }]);

      // Out of range: the API's message at the field, nothing saved.
      const highRisk = page.getByLabel('Keep high-risk records (days)');
      await highRisk.fill('30');
      await page.getByRole('button', { name: 'Save policy' }).click();
      const fieldError = page.locator('[data-field="highRiskRetentionDays"] .field-error');
      await fieldError.waitFor({ state: 'visible' });
      assert.match(await fieldError.textContent(), /highRiskRetentionDays.*183/);
      assert.equal(await highRisk.getAttribute('aria-invalid'), 'true');
      assert.equal((await admin.get('/api/v1/policies')).body.highRiskRetentionDays, policy.highRiskRetentionDays);

      // A pattern that does not compile: the message at its row.
      await highRisk.fill(String(policy.highRiskRetentionDays));
      await page.getByRole('button', { name: 'Add pattern' }).click();
      await page.getByLabel('Name', { exact: true }).last().fill('broken');
      await page.getByLabel('Regex', { exact: true }).last().fill('(unclosed');
      await page.getByRole('button', { name: 'Save policy' }).click();
      const rowError = page.locator('li.pattern[data-field="piiPatterns[1]"] .field-error');
      await rowError.waitFor({ state: 'visible' });
      assert.match(await rowError.textContent(), /piiPatterns\[1\]\.regex/);
      assert.equal(await fieldError.textContent(), '', 'the earlier message is gone');
      policy = (await admin.get('/api/v1/policies')).body;
      assert.equal(policy.piiPatterns.length, 1, 'nothing was saved');

      // Removing the bad row saves again.
      await page.getByRole('button', { name: 'Remove pattern 2' }).click();
      await page.getByRole('button', { name: 'Save policy' }).click();
      await page.locator('.policy-form .notice.ok').waitFor();
      await noErrorShown(page);
      // The two refusals above are the browser's only console errors.
      await page.done({ allow: /status of 400/ });

      for (const account of [AUDITOR, USER, TESTER]) await refusedByUrl(account, 'policies');
      await checkPage(ADMIN, 'policies');
    });
  });

  test('tenants: the operator lists, creates, changes the tier, tops up and sets the model allow-list', async () => {
    const name = `gov-tenant-${run}`;
    const created = await owner.post('/api/v1/tenants', { name, tier: 'paid' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const admin = await apiAs(ADMIN);
    const tenantOf = async (tenantName) => (await admin.get('/api/v1/tenants')).body.data.find((t) => t.name === tenantName);

    const page = await pageAs(ADMIN, 'tenants');
    const row = page.locator(`tr[data-tenant="${name}"]`);
    await row.waitFor();
    assert.match(await row.textContent(), new RegExp(id));
    assert.match(await page.locator('tr[data-tenant="default"]').textContent(), /operator/);

    await page.getByLabel(`Tier of ${name}`).selectOption('enterprise');
    await page.locator('.notice.ok', { hasText: 'enterprise' }).waitFor();
    assert.equal((await tenantOf(name)).tier, 'enterprise');

    await row.getByRole('button', { name: 'Top up' }).click();
    await fill(page, 'Credits to add', '12.5');
    await submitDialog(page, 'Top up');
    await page.locator(`tr[data-tenant="${name}"] td[data-label="Wallet (credits)"]`, { hasText: '12.5' }).waitFor();
    assert.equal((await tenantOf(name)).walletBalance, 12.5);

    await page.locator(`tr[data-tenant="${name}"]`).getByRole('button', { name: 'Models' }).click();
    await page.locator('dialog').getByLabel('Every served model (no allow-list)').uncheck();
    await page.locator('dialog').getByLabel('mock-chat', { exact: true }).check();
    await submitDialog(page, 'Save models');
    await page.locator(`tr[data-tenant="${name}"] td[data-label="Models"]`, { hasText: 'mock-chat' }).waitFor();
    assert.deepEqual((await admin.get(`/api/v1/tenants/${id}/models`)).body.models, ['mock-chat']);

    const made = `gov-made-${run}`;
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await fill(page, 'Name', made);
    await page.locator('dialog').getByLabel('Tier').selectOption('free');
    await submitDialog(page, 'Create tenant');
    await page.locator(`tr[data-tenant="${made}"]`).waitFor();
    assert.equal((await tenantOf(made)).tier, 'free');
    await noErrorShown(page);
    await page.done();

    for (const account of [BILLING, AUDITOR, USER]) await refusedByUrl(account, 'tenants');
    await checkPage(OWNER, 'tenants');
  });
});
