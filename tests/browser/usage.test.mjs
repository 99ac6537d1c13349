// The Usage page's charts: requests per day by model and by key, drawn
// from usage the test creates through the API (chat with one key, chat and
// an image with another), and the endpoint filter, which queries the API
// again and changes what the charts and tables show. The page's own
// screenshots come from dashboard.test.mjs (checkPage); here the page with
// its charts is checked for accessibility and overflow at both widths.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, OWNER, NARROW, WIDE, accessible, apiAs, go, infer, noErrorShown, noOverflow, open, signIn } from './harness.mjs';

const suffix = Date.now().toString(36);
const KEY_A = `chart-a-${suffix}`;
const KEY_B = `chart-b-${suffix}`;
const CHATS_A = 8;
const CHATS_B = 3;

async function createKey(owner, keyName) {
  const created = await owner.post('/api/v1/keys', { keyName });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { id: created.body.key.id, value: created.body.value };
}

async function chat(key, n) {
  for (let i = 0; i < n; i += 1) {
    const answer = await infer(key, { model: 'mock-chat', messages: [{ role: 'user', content: `chart request ${i}` }] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
}

async function image(key) {
  const response = await fetch(`${BASE}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-image', prompt: 'a lighthouse for the usage chart', n: 1 }),
  });
  assert.equal(response.status, 200, await response.text());
}

const chart = (page, title) => page.locator('figure.chart', { has: page.locator('figcaption', { hasText: title }) });
const legend = (page, title) => chart(page, title).locator('.legend li').allTextContents();
const summary = (page, title) => chart(page, title).locator('svg').getAttribute('aria-label');

describe('usage chart', () => {
  test('the charts show each model and key, and the endpoint filter re-queries and narrows them', async () => {
    const owner = await apiAs(OWNER);
    const a = await createKey(owner, KEY_A);
    const b = await createKey(owner, KEY_B);
    await chat(a.value, CHATS_A);
    await chat(b.value, CHATS_B);
    await image(b.value);

    // What the API reports, per endpoint, for the two keys.
    const images = await owner.get(`/api/v1/usage/records?endpoint=images&keyId=${b.id}`);
    assert.deepEqual(images.body.data.map((r) => [r.model, r.endpoint]), [['mock-image', 'images']]);
    const chats = await owner.get(`/api/v1/usage/records?endpoint=chat&keyId=${a.id}`);
    assert.equal(chats.body.data.length, CHATS_A);

    const page = await open(WIDE);
    await signIn(page, OWNER);
    await go(page, 'usage');
    await chart(page, 'Requests per day by model').waitFor();
    const models = await legend(page, 'Requests per day by model');
    assert.ok(models.includes('mock-chat') && models.includes('mock-image'), `models: ${models}`);
    // Other suites' keys may share the chart (the busiest five are drawn):
    // the busiest key of this test is one of them, with its total in the
    // chart's text summary.
    const keys = await legend(page, 'Requests per day by key');
    assert.ok(keys.includes(KEY_A), `keys: ${keys}`);
    const byKey = await summary(page, 'Requests per day by key');
    assert.ok(byKey.includes(`${KEY_A} ${CHATS_A}`), byKey);
    await page.getByRole('table', { name: 'Usage by endpoint' }).getByText('Images', { exact: true }).waitFor();
    await accessible(page);

    // Images only: the image model and the key that drew it, nothing else.
    await page.getByLabel('Endpoint', { exact: true }).selectOption('images');
    await chart(page, 'Requests per day by model (Images)').waitFor();
    const imageModels = await legend(page, 'Requests per day by model (Images)');
    assert.ok(imageModels.includes('mock-image') && !imageModels.includes('mock-chat'), `models: ${imageModels}`);
    const imageKeys = await legend(page, 'Requests per day by key (Images)');
    assert.ok(imageKeys.includes(KEY_B) && !imageKeys.includes(KEY_A), `keys: ${imageKeys}`);
    assert.ok((await summary(page, 'Requests per day by key (Images)')).includes(`${KEY_B} 1`));
    const endpoints = await page.getByRole('table', { name: 'Usage by endpoint' }).locator('tbody tr').allTextContents();
    assert.equal(endpoints.length, 1);
    assert.match(endpoints[0], /Images/);

    // Chat only: the image model is gone, the chat key is back.
    await page.getByLabel('Endpoint', { exact: true }).selectOption('chat');
    await chart(page, 'Requests per day by model (Chat completions)').waitFor();
    const chatModels = await legend(page, 'Requests per day by model (Chat completions)');
    assert.ok(chatModels.includes('mock-chat') && !chatModels.includes('mock-image'), `models: ${chatModels}`);
    const chatKeys = await legend(page, 'Requests per day by key (Chat completions)');
    assert.ok(chatKeys.includes(KEY_A), `keys: ${chatKeys}`);
    assert.ok((await summary(page, 'Requests per day by key (Chat completions)')).includes(`${KEY_A} ${CHATS_A}`));

    // An endpoint nobody used: no chart, the tables say so.
    await page.getByLabel('Endpoint', { exact: true }).selectOption('completions');
    await page.locator('.usage-results p.empty').first().waitFor();
    assert.equal(await page.locator('figure.chart').count(), 0);
    await noErrorShown(page);
    await page.done();
  });

  test('the page with its charts is accessible and fits 390 px', async () => {
    const page = await open(NARROW);
    await signIn(page, OWNER);
    await go(page, 'usage');
    await chart(page, 'Requests per day by key').waitFor();
    await noErrorShown(page);
    await noOverflow(page);
    await accessible(page);
    await page.getByLabel('Endpoint', { exact: true }).selectOption('images');
    await chart(page, 'Requests per day by key (Images)').waitFor();
    await noOverflow(page);
    await accessible(page);
    await page.done();
  });
});
