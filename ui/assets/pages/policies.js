// Policies (owner and admin, `policies.manage`): the tenant's compliance
// policy as one form with every field: the gates, human review, the LLM
// judge, the conversation log, the registry and PII redaction with the
// tenant's own patterns. The server validates; a refusal that names a field
// (`param`, e.g. `retentionDays` or `piiPatterns[1]`) is shown at that field.

import { api, get } from '../api.js';
import { h, errorBox, okBox, show, uid } from '../dom.js';

const REVIEW_MODES = [['off', 'Off'], ['high_risk', 'High-risk responses'], ['all', 'Every response']];
const PII_MODES = [['off', 'Off'], ['logs', 'In what Tollgate stores'], ['upstream', 'Also in what the provider receives']];
const MAX_PATTERNS = 20;

/**
 * One labelled control with a slot for the server's message about it.
 * `kind`: checkbox, number, select or text.
 */
function control(name, label, kind, value, { help, options } = {}) {
  const id = uid(name);
  const errorId = `${id}-error`;
  const helpId = help ? `${id}-help` : null;
  const error = h('small', { id: errorId, class: 'field-error', 'aria-live': 'polite' });
  let input;
  if (kind === 'checkbox') {
    input = h('input', { id, name, type: 'checkbox', checked: value });
  } else if (kind === 'select') {
    input = h('select', { id, name }, options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
  } else {
    input = h('input', { id, name, type: kind, value: value ?? '', autocomplete: 'off', inputmode: kind === 'number' ? 'numeric' : undefined });
  }
  input.setAttribute('aria-describedby', [helpId, errorId].filter(Boolean).join(' '));
  const helpNode = help ? h('small', { id: helpId, class: 'help' }, help) : null;
  const node = kind === 'checkbox'
    ? h('div', { class: 'field check', 'data-field': name }, input, h('label', { for: id }, label), helpNode, error)
    : h('div', { class: 'field', 'data-field': name }, h('label', { for: id }, label), input, helpNode, error);
  return { name, input, error, node };
}

function read(c) {
  if (c.input.type === 'checkbox') return c.input.checked;
  if (c.input.type === 'number') return c.input.value.trim() === '' ? null : Number(c.input.value);
  return c.input.value;
}

/** The editable list of the tenant's own PII patterns. */
function patternList(initial) {
  const list = h('ol', { class: 'pattern-list', 'aria-labelledby': 'pii-patterns-label' });
  const rows = [];
  const addButton = h('button', { type: 'button', class: 'secondary small' }, 'Add pattern');

  function renumber() {
    rows.forEach((row, i) => {
      row.node.dataset.field = `piiPatterns[${i}]`;
      row.remove.setAttribute('aria-label', `Remove pattern ${i + 1}`);
    });
    addButton.disabled = rows.length >= MAX_PATTERNS;
  }

  function add(pattern = { name: '', regex: '' }) {
    const nameId = uid('pattern-name');
    const regexId = uid('pattern-regex');
    const errorId = `${nameId}-error`;
    const name = h('input', { id: nameId, value: pattern.name, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': errorId });
    const regex = h('input', { id: regexId, value: pattern.regex, autocomplete: 'off', spellcheck: 'false', class: 'mono', 'aria-describedby': errorId });
    const error = h('small', { id: errorId, class: 'field-error', 'aria-live': 'polite' });
    const row = {
      name, regex, error,
      remove: h('button', { type: 'button', class: 'danger small' }, 'Remove'),
    };
    row.node = h('li', { class: 'pattern' },
      h('div', { class: 'field' }, h('label', { for: nameId }, 'Name'), name),
      h('div', { class: 'field grow' }, h('label', { for: regexId }, 'Regex'), regex),
      row.remove,
      error);
    row.remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      row.node.remove();
      renumber();
      addButton.focus();
    });
    rows.push(row);
    list.append(row.node);
    renumber();
    return row;
  }

  addButton.addEventListener('click', () => add().name.focus());
  for (const pattern of initial) add(pattern);
  renumber();
  return {
    node: h('div', { class: 'field', 'data-field': 'piiPatterns' },
      h('span', { class: 'label', id: 'pii-patterns-label' }, 'Your own patterns'),
      h('small', { class: 'help' }, 'Matches become [NAME_1], [NAME_2] … A name is a letter, then letters, digits or _; a regex uses Rust regex syntax. At most 20.'),
      list, addButton),
    value: () => rows.map((r) => ({ name: r.name.value.trim(), regex: r.regex.value })),
    row: (i) => rows[i],
  };
}

function group(legend, ...children) {
  return h('fieldset', { class: 'policy-group' }, h('legend', {}, legend), children);
}

export async function render(root, ctx) {
  const tenant = ctx.me.tenant || {};
  const [policy, access] = await Promise.all([
    get('/api/v1/policies'),
    // The judge may be any model the tenant may use; without the list the
    // field still offers the current choice.
    get(`/api/v1/tenants/${encodeURIComponent(tenant.id)}/models`).catch(() => ({ models: null, available: [] })),
  ]);
  const models = access.models ?? access.available ?? [];
  const judgeOptions = [['', 'None']].concat(
    [...new Set([...(policy.judgeModel ? [policy.judgeModel] : []), ...models])].map((m) => [m, m]));

  const controls = [
    control('requirePurpose', 'Require a purpose on high-risk requests', 'checkbox', policy.requirePurpose,
      { help: 'Without one, a high-risk request is refused (purpose_required).' }),
    control('requireConsent', 'Require a valid consent on high-risk requests', 'checkbox', policy.requireConsent,
      { help: 'The request names a consent record (user_consent_id) of its end user.' }),
    control('reviewMode', 'Hold for human review', 'select', policy.reviewMode, { options: REVIEW_MODES }),
    control('reviewTtlSeconds', 'Review time limit (seconds)', 'number', policy.reviewTtlSeconds,
      { help: '1 to 2,592,000 (30 days). 259,200 is 72 hours.' }),
    control('judgeEnabled', 'Send grey zones to the LLM judge', 'checkbox', policy.judgeEnabled),
    control('judgeModel', 'Judge model', 'select', policy.judgeModel ?? '', { options: judgeOptions }),
    control('logBodies', 'Keep request and answer bodies in the conversation log', 'checkbox', policy.logBodies),
    control('retentionDays', 'Keep records (days)', 'number', policy.retentionDays, { help: '1 to 3650.' }),
    control('highRiskRetentionDays', 'Keep high-risk records (days)', 'number', policy.highRiskRetentionDays,
      { help: 'At least 183: Article 26(6) keeps logs of high-risk use six months.' }),
    control('enforceRegistry', 'Route only to providers in the sub-processor registry', 'checkbox', policy.enforceRegistry),
    control('piiRedaction', 'Redact personal data', 'select', policy.piiRedaction, { options: PII_MODES }),
  ];
  const byName = Object.fromEntries(controls.map((c) => [c.name, c]));
  const patterns = patternList(policy.piiPatterns || []);
  const message = h('div', { class: 'messages' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save policy');

  function clearErrors() {
    for (const node of form.querySelectorAll('.field-error')) node.textContent = '';
    for (const node of form.querySelectorAll('[aria-invalid]')) node.removeAttribute('aria-invalid');
  }

  /** Puts the server's message at the field it names; false when none. */
  function showAtField(error) {
    if (!error.param) return false;
    const at = /^piiPatterns\[(\d+)\]/.exec(error.param);
    if (at) {
      const row = patterns.row(Number(at[1]));
      if (!row) return false;
      row.error.textContent = error.message;
      const part = /\.name/.test(error.message) ? row.name : row.regex;
      part.setAttribute('aria-invalid', 'true');
      part.focus();
      return true;
    }
    const c = byName[error.param];
    if (!c) return false;
    c.error.textContent = error.message;
    c.input.setAttribute('aria-invalid', 'true');
    c.input.focus();
    return true;
  }

  function body() {
    const values = Object.fromEntries(controls.map((c) => [c.name, read(c)]));
    values.judgeModel = values.judgeModel || null;
    values.piiPatterns = patterns.value();
    return values;
  }

  const form = h('form', { class: 'policy-form', novalidate: true, 'aria-label': 'Compliance policy' },
    group('Gates for high-risk requests', byName.requirePurpose.node, byName.requireConsent.node),
    group('Human review (Article 14)', byName.reviewMode.node, byName.reviewTtlSeconds.node),
    group('LLM judge', byName.judgeEnabled.node, byName.judgeModel.node),
    group('Conversation log', byName.logBodies.node, byName.retentionDays.node, byName.highRiskRetentionDays.node),
    group('Providers', byName.enforceRegistry.node),
    group('Personal data', byName.piiRedaction.node, patterns.node),
    message,
    h('div', { class: 'toolbar' }, save));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    message.replaceChildren();
    save.disabled = true;
    try {
      const saved = await api('PUT', '/api/v1/policies', body());
      show(message, okBox(`Policy saved for ${tenant.name || saved.tenantId}.`));
    } catch (e) {
      if (e.status === 401) return;
      const placed = showAtField(e);
      show(message, placed
        ? h('p', { class: 'notice warn', role: 'alert' }, 'The policy was not saved: correct the field marked below.')
        : errorBox(e, 'Saving the policy'));
    } finally {
      save.disabled = false;
    }
  });

  root.append(
    h('p', { class: 'lead' }, `The compliance policy of ${tenant.name || 'your tenant'}. It applies to the next request.`),
    form);
}
