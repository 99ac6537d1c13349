// Webhooks: the tenant's URL list (edited as a whole, saved with one PUT),
// the signing secret's hint and its rotation (the new secret shown once),
// and the recent deliveries with status and latency.

import { api, get } from '../api.js';
import { h, table, fmtDate, confirmDialog, secretDialog, errorBox, okBox, show, uid, badge } from '../dom.js';

export async function render(root) {
  const message = h('div', { class: 'messages' });
  const urlList = h('ul', { class: 'url-list' });
  const hint = h('code', {});
  const deliveries = h('div', {});
  let urls = [];

  function drawUrls() {
    urlList.replaceChildren(...(urls.length
      ? urls.map((url, i) => h('li', {},
        h('code', { class: 'url' }, url),
        h('button', { type: 'button', class: 'secondary small', 'aria-label': `Remove ${url}`, onclick: () => { urls.splice(i, 1); drawUrls(); } }, 'Remove')))
      : [h('li', { class: 'empty' }, 'No URLs: events are not sent to this tenant.')]));
  }

  async function load() {
    const settings = await get('/api/v1/webhooks');
    urls = [...settings.urls];
    hint.textContent = settings.signingSecretHint || '—';
    drawUrls();
  }

  async function loadDeliveries() {
    const { data } = await get('/api/v1/webhooks/deliveries');
    show(deliveries, table([
      { label: 'When', value: (d) => fmtDate(d.at) },
      { label: 'Event', value: (d) => d.event },
      { label: 'URL', value: (d) => h('code', {}, d.url) },
      { label: 'Status', value: (d) => badge(d.status, d.result === 'success' ? 'active' : 'revoked') },
      { label: 'Latency', value: (d) => `${d.latencyMs} ms`, class: 'num' },
      { label: 'Signed', value: (d) => (d.signed ? 'yes' : 'no') },
    ], data, { caption: 'Recent deliveries', empty: 'No deliveries since the server started.' }));
  }

  const newId = uid('url');
  const newUrl = h('input', { id: newId, type: 'url', placeholder: 'https://example.com/hooks/tollgate', required: true });
  const addForm = h('form', { class: 'inline-form', 'aria-label': 'Add a webhook URL' },
    h('div', { class: 'field' }, h('label', { for: newId }, 'New URL'), newUrl),
    h('button', { type: 'submit', class: 'secondary' }, 'Add to list'));
  addForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = newUrl.value.trim();
    if (url && !urls.includes(url)) urls.push(url);
    newUrl.value = '';
    drawUrls();
    newUrl.focus();
  });

  const save = h('button', { type: 'button', class: 'primary', onclick: async () => {
    message.replaceChildren();
    try {
      const settings = await api('PUT', '/api/v1/webhooks', { urls });
      urls = [...settings.urls];
      drawUrls();
      show(message, okBox(`Saved ${urls.length} URL${urls.length === 1 ? '' : 's'}.`));
    } catch (e) {
      if (e.status !== 401) show(message, errorBox(e, 'Saving the URLs'));
    }
  } }, 'Save URLs');

  const rotate = h('button', { type: 'button', class: 'secondary', onclick: async () => {
    const yes = await confirmDialog('Rotate the signing secret?', 'Deliveries are signed with the new secret from now on; receivers checking the old one will refuse them until updated.', 'Rotate secret');
    if (!yes) return;
    message.replaceChildren();
    try {
      const settings = await api('POST', '/api/v1/webhooks/secret/rotate');
      hint.textContent = settings.signingSecretHint;
      await secretDialog('The new signing secret', 'Copy it into your receivers now: it is shown only this once.', settings.signingSecret);
      show(message, okBox('Signing secret rotated.'));
    } catch (e) {
      if (e.status !== 401) show(message, errorBox(e, 'Rotating the secret'));
    }
  } }, 'Rotate secret');

  root.append(
    message,
    h('section', { 'aria-labelledby': 'wh-urls' }, h('h2', { id: 'wh-urls' }, 'URLs'), urlList, addForm, h('div', { class: 'toolbar' }, save)),
    h('section', { 'aria-labelledby': 'wh-secret' }, h('h2', { id: 'wh-secret' }, 'Signing secret'),
      h('p', {}, 'Deliveries carry an HMAC-SHA256 signature made with this secret. Hint: ', hint), rotate),
    h('section', { 'aria-labelledby': 'wh-del' }, h('h2', { id: 'wh-del' }, 'Recent deliveries'),
      h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'secondary', onclick: () => loadDeliveries().catch((e) => e.status !== 401 && show(deliveries, errorBox(e))) }, 'Refresh')),
      deliveries));
  await Promise.all([load(), loadDeliveries()]);
}
