// Playground (tester and owner): one chat request to a chosen model or
// fallback chain, the answer streamed as it arrives, then the billing and
// risk-classification extensions the gateway adds.

import { get, streamChat } from '../api.js';
import { h, errorBox, show, uid, fmtCredits } from '../dom.js';

function details(title, object) {
  if (!object) return null;
  return h('section', { class: 'extension' },
    h('h3', {}, title),
    h('dl', {}, Object.entries(object).flatMap(([k, v]) => [
      h('dt', {}, k),
      h('dd', {}, typeof v === 'object' && v !== null ? JSON.stringify(v) : k === 'cost' ? fmtCredits(v) : String(v)),
    ])));
}

// Why the request got its risk level: the rules that fired, on which
// words and from which text, and the matches set aside (the
// x-tollgate-risk-explanation header, also sent with a refusal).
function explanation(headers) {
  const raw = headers && headers.get('x-tollgate-risk-explanation');
  if (!raw) return null;
  let data;
  try {
    data = JSON.parse(raw);
  } catch {
    return null;
  }
  const hits = (data.hits || []).map((hit) => h('li', {},
    h('strong', {}, hit.rule), ` (${hit.level}, from ${hit.source}): ${hit.matched}. `, h('small', {}, hit.means)));
  const aside = (data.set_aside || []).map((s) => h('li', {}, h('strong', {}, s.rule), ` (${s.source}): ${s.why}`));
  return h('section', { class: 'extension', 'aria-label': 'Why this risk level' },
    h('h3', {}, `Why: classified ${data.level} by the rules`),
    hits.length ? h('ul', {}, hits) : h('p', {}, 'No rule fired.'),
    aside.length ? h('h4', {}, 'Set aside') : null,
    aside.length ? h('ul', {}, aside) : null);
}

export async function render(root) {
  const { data } = await get('/api/v1/models');
  // Embedding models serve /v1/embeddings only, never chat.
  const enabled = data.filter((m) => m.enabled !== false
    && !(m.outputCapabilities || []).includes('EMBEDDING'));
  const modelId = uid('model');
  const chainId = uid('chain');
  const promptId = uid('prompt');
  const streamId = uid('stream');
  const model = h('select', { id: modelId }, enabled.map((m) => h('option', { value: m.id }, m.id)));
  const chain = h('input', { id: chainId, type: 'text', placeholder: 'model-a, model-b', 'aria-describedby': `${chainId}-help` });
  const prompt = h('textarea', { id: promptId, rows: 4, required: true });
  const stream = h('input', { id: streamId, type: 'checkbox', checked: true });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send');
  const answer = h('div', { class: 'answer', 'aria-live': 'polite', 'aria-label': 'Answer' });
  const extensions = h('div', { class: 'extensions' });
  const errors = h('div', {});

  const form = h('form', { class: 'playground', 'aria-label': 'Chat request' },
    h('div', { class: 'field' }, h('label', { for: modelId }, 'Model'), model),
    h('div', { class: 'field' }, h('label', { for: chainId }, 'Or a fallback chain'), chain,
      h('small', { id: `${chainId}-help`, class: 'help' }, 'Model names separated by commas; it wins over the model above.')),
    h('div', { class: 'field' }, h('label', { for: promptId }, 'Message'), prompt),
    h('div', { class: 'field check' }, stream, h('label', { for: streamId }, 'Stream the answer')),
    h('div', { class: 'toolbar' }, send));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { messages: [{ role: 'user', content: prompt.value }], stream: stream.checked };
    const names = chain.value.split(',').map((n) => n.trim()).filter(Boolean);
    if (names.length) body.models = names;
    else body.model = model.value;
    send.disabled = true;
    answer.textContent = '';
    answer.dataset.done = 'false';
    extensions.replaceChildren();
    errors.replaceChildren();
    let billing = null;
    let risk = null;
    let served = null;
    let why = null;
    try {
      await streamChat('/api/v1/playground/chat', body, (event) => {
        if (event.error) throw Object.assign(new Error(event.error.message || 'The stream failed.'), { status: 0 });
        served = event.model || served;
        for (const choice of event.choices || []) {
          const text = choice.delta?.content ?? choice.message?.content;
          if (text) answer.append(text);
        }
        billing = event.billing || billing;
        risk = event.risk_classification || risk;
      }, (headers) => { why = explanation(headers); });
      answer.dataset.done = 'true';
      extensions.replaceChildren(...[
        served ? h('p', {}, `Answered by ${served}.`) : null,
        details('Billing', billing),
        details('Risk classification', risk),
        why].filter(Boolean));
    } catch (e) {
      if (e.status !== 401) show(errors, errorBox(e, 'The request failed'));
      if (why) extensions.replaceChildren(why);
    } finally {
      send.disabled = false;
    }
  });

  root.append(form, errors, h('h2', {}, 'Answer'), answer, extensions);
}
