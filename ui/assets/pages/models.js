// Models: the catalogue with capabilities and prices. The operator tenant's
// owners and admins add, edit, disable and enable entries; only its owners
// delete one for good. Every tenant's owners and admins choose which of the
// catalogue's models their tenant may use (its allow-list).

import { api, get } from '../api.js';
import {
  h, badge, table, fmtNumber, fmtCredits, confirmDialog, formDialog, okBox,
  show, numberOrNull, runner,
} from '../dom.js';

const CAPABILITIES = ['TEXT', 'IMAGE', 'AUDIO'];
const UNITS = [
  ['per_token', 'per token (credits per million input / output tokens)'],
  ['per_image', 'per image'],
  ['per_second', 'per second'],
  ['per_minute', 'per minute'],
  ['per_character', 'per character (credits per million characters)'],
  ['per_request', 'per request'],
];
const STRATEGIES = [
  ['weighted', 'weighted (at random, by weight)'],
  ['least_busy', 'least busy (fewest requests in flight)'],
  ['lowest_latency', 'lowest latency (time to first byte)'],
];
/** The price fields of each unit, as the catalogue names them. */
const PRICE_FIELDS = {
  per_token: ['input_per_million', 'output_per_million'],
  per_image: ['per_image'],
  per_second: ['per_second'],
  per_minute: ['per_minute'],
  per_character: ['per_million_characters'],
  per_request: ['per_request'],
};

export function price(pricing) {
  if (!pricing) return '—';
  switch (pricing.unit) {
    case 'per_token':
      return `${fmtCredits(pricing.input_per_million)} in / ${fmtCredits(pricing.output_per_million)} out per 1M tokens`;
    case 'per_character':
      return `${fmtCredits(pricing.per_million_characters)} per 1M characters`;
    default: {
      const field = (PRICE_FIELDS[pricing.unit] || [])[0];
      return field ? `${fmtCredits(pricing[field])} ${pricing.unit.replace('_', ' ')}` : pricing.unit;
    }
  }
}

function modelFields(model) {
  const pricing = model?.pricing || { unit: 'per_token' };
  const fields = [];
  if (!model) fields.push({ name: 'id', label: 'Model name (what callers send)', required: true });
  fields.push(
    { name: 'provider', label: 'Provider id', required: true, value: model?.provider ?? '' },
    { name: 'upstream', label: 'Upstream model name', required: true, value: model?.upstream ?? '' },
    { name: 'weight', label: 'Weight of this deployment', type: 'number', min: 1, step: 1, value: model?.deployments?.[0]?.weight ?? 1 },
    {
      name: 'more', label: 'Further deployments', type: 'textarea',
      value: (model?.deployments ?? []).slice(1).map((d) => `${d.provider} ${d.upstream} ${d.weight}`).join('\n'),
      help: 'One per line: provider id, upstream model name, weight (default 1). The first deployment is the provider above.',
    },
    { name: 'strategy', label: 'Routing strategy', type: 'select', options: STRATEGIES, value: model?.strategy ?? 'weighted' },
    { name: 'rpmLimit', label: 'Requests per minute, all keys (empty: no limit)', type: 'number', min: 1, step: 1, value: model?.rpmLimit ?? '' },
    { name: 'tpmLimit', label: 'Tokens per minute, all keys (empty: no limit)', type: 'number', min: 1, step: 1, value: model?.tpmLimit ?? '' },
    { name: 'inputCapabilities', label: 'Input', type: 'checks', options: CAPABILITIES, value: model?.inputCapabilities ?? ['TEXT'] },
    { name: 'outputCapabilities', label: 'Output', type: 'checks', options: CAPABILITIES, value: model?.outputCapabilities ?? ['TEXT'] },
    { name: 'contextWindow', label: 'Context window (tokens)', type: 'number', min: 1, step: 1, required: true, value: model?.contextWindow ?? '' },
    { name: 'unit', label: 'Pricing unit', type: 'select', options: UNITS, value: pricing.unit },
    { name: 'price1', label: 'Price (input per 1M tokens, or the unit price)', type: 'number', min: 0, step: 'any', required: true, value: pricing[PRICE_FIELDS[pricing.unit]?.[0]] ?? '' },
    { name: 'price2', label: 'Output price per 1M tokens (per token only)', type: 'number', min: 0, step: 'any', value: pricing.output_per_million ?? '' },
  );
  return fields;
}

/** The "Further deployments" lines as the API takes them; the server
 *  refuses what is wrong (an unknown provider, a weight of 0). */
function furtherDeployments(text) {
  return text.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => {
    const [provider, upstream, weight] = line.split(/\s+/);
    const d = { provider };
    if (upstream) d.upstream = upstream;
    if (weight !== undefined) d.weight = Number(weight);
    return d;
  });
}

function modelBody(values, model) {
  const [first, second] = PRICE_FIELDS[values.unit];
  const pricing = { unit: values.unit, [first]: numberOrNull(values.price1) ?? 0 };
  if (second) pricing[second] = numberOrNull(values.price2) ?? 0;
  const more = furtherDeployments(values.more);
  const weighted = (numberOrNull(values.weight) ?? 1) !== 1;
  const routing = more.length || model || weighted
    ? { deployments: [{ provider: values.provider, upstream: values.upstream, weight: numberOrNull(values.weight) ?? 1 }, ...more] }
    : { provider: values.provider, upstream: values.upstream };
  const body = {
    ...routing,
    strategy: values.strategy,
    rpmLimit: numberOrNull(values.rpmLimit),
    tpmLimit: numberOrNull(values.tpmLimit),
    inputCapabilities: values.inputCapabilities,
    outputCapabilities: values.outputCapabilities,
    contextWindow: numberOrNull(values.contextWindow),
    pricing,
  };
  if (values.id !== undefined) body.id = values.id;
  return body;
}

export async function render(root, ctx) {
  const { can, me } = ctx;
  const manage = can('models.manage');
  const chooses = can('models.access');
  const tenant = me.tenant;
  const accessPath = `/api/v1/tenants/${encodeURIComponent(tenant.id)}/models`;
  let access = { models: null, available: [] };
  const message = h('div', { class: 'messages' });
  const list = h('div', {});

  const run = runner(message);

  function actions(model) {
    return h('div', { class: 'row-actions' },
      h('button', { type: 'button', class: 'secondary small', onclick: () => run('Editing the model', () => edit(model)) }, 'Edit'),
      h('button', { type: 'button', class: 'secondary small', onclick: () => run('Changing the model', () => toggle(model)) }, model.enabled ? 'Disable' : 'Enable'),
      can('models.hard_delete') ? h('button', { type: 'button', class: 'danger small', onclick: () => run('Deleting the model', () => remove(model)) }, 'Delete') : null);
  }

  // Each deployment as `provider / upstream`, with its weight when there
  // are several and a badge when it is not serving (docs/routing.md).
  function deployments(m) {
    const list = m.deployments?.length ? m.deployments : [{ provider: m.provider, upstream: m.upstream, weight: 1, health: 'healthy' }];
    if (list.length === 1 && list[0].health === 'healthy') return `${m.provider} / ${m.upstream}`;
    return h('ul', { class: 'deployments' }, list.map((d) => h('li', { class: 'deployment' },
      `${d.provider} / ${d.upstream}`,
      list.length > 1 ? ` ×${d.weight}` : '',
      d.health === 'healthy' ? '' : [' ', badge(d.health, 'revoked')])),
      list.length > 1 ? h('li', { class: 'strategy' }, m.strategy.replace('_', ' ')) : null);
  }

  async function refresh() {
    const [{ data }, allowed] = await Promise.all([get('/api/v1/models'), get(accessPath)]);
    access = allowed;
    const usable = (m) => access.models === null || access.models.includes(m.id);
    const columns = [
      { label: 'Model', value: (m) => h('code', { class: 'model-id' }, m.id) },
      { label: 'Provider', value: deployments },
      { label: 'Input', value: (m) => (m.inputCapabilities || []).join(', ') },
      { label: 'Output', value: (m) => (m.outputCapabilities || []).join(', ') },
      { label: 'Context', value: (m) => fmtNumber(m.contextWindow), class: 'num' },
      { label: 'Price', value: (m) => price(m.pricing) },
      { label: 'State', value: (m) => (m.enabled === false ? badge('disabled', 'revoked') : badge('enabled', 'active')) },
      { label: 'Source', value: (m) => m.source || '—' },
      { label: `For ${tenant.name}`, value: (m) => (usable(m) ? badge('allowed', 'active') : badge('not allowed', 'revoked')) },
    ];
    if (manage) columns.push({ label: 'Actions', value: actions, class: 'actions-cell' });
    show(list, table(columns, data, { caption: 'Model catalogue', empty: 'The catalogue is empty.' }));
  }

  async function add() {
    const created = await formDialog('Add a model', modelFields(null), 'Add model',
      (values) => api('POST', '/api/v1/models', modelBody(values)));
    if (!created) return;
    show(message, okBox('Model added.'));
    await refresh();
  }

  async function edit(model) {
    const saved = await formDialog(`Edit ${model.id}`, modelFields(model), 'Save',
      (values) => api('PATCH', `/api/v1/models/${encodeURIComponent(model.id)}`, modelBody(values, model)));
    if (!saved) return;
    show(message, okBox(`Model ${model.id} saved.`));
    await refresh();
  }

  async function toggle(model) {
    await api('PATCH', `/api/v1/models/${encodeURIComponent(model.id)}`, { enabled: !model.enabled });
    show(message, okBox(`Model ${model.id} ${model.enabled ? 'disabled' : 'enabled'}.`));
    await refresh();
  }

  async function choose() {
    const every = access.models === null;
    const fields = [
      { name: 'every', label: 'Every model of the catalogue, including ones added later', type: 'checkbox', value: every },
      { name: 'models', label: `Models ${tenant.name} may use (when not every model)`, type: 'checks', options: access.available, value: every ? access.available : access.models },
    ];
    const saved = await formDialog(`Models for ${tenant.name}`, fields, 'Save',
      (values) => api('PUT', accessPath, { models: values.every ? null : values.models }));
    if (!saved) return;
    show(message, okBox(`The models ${tenant.name} may use are saved.`));
    await refresh();
  }

  async function remove(model) {
    const yes = await confirmDialog(`Delete ${model.id}?`, 'The entry leaves the catalogue for good; callers naming it get model_not_found. Disabling keeps it for later.', 'Delete model');
    if (!yes) return;
    await api('DELETE', `/api/v1/models/${encodeURIComponent(model.id)}`);
    show(message, okBox(`Model ${model.id} deleted.`));
    await refresh();
  }

  const tools = [];
  if (manage) tools.push(h('button', { type: 'button', class: 'primary', onclick: () => run('Adding a model', add) }, 'Add model'));
  if (chooses) tools.push(h('button', { type: 'button', class: 'secondary', onclick: () => run('Choosing the models', choose) }, 'Choose models'));
  if (tools.length) root.append(h('div', { class: 'toolbar' }, tools));
  root.append(message, list);
  await refresh();
}
