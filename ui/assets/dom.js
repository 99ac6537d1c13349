// DOM helpers: elements built from data (never HTML strings, so a key name
// or a model answer cannot inject markup), formatters, and the dialogs
// (native <dialog>: focus moves in, Escape closes, focus returns to the
// button that opened it).

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'value' && 'value' in el && !(el instanceof SVGElement)) {
      el.value = value;
    } else if (name === 'checked') {
      el.checked = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h('button', {class: 'x', onclick}, 'Label'). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  return append(el, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  return append(el, children);
}

let nextId = 0;
export function uid(prefix = 'f') {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

// ---- formatting ----

const numbers = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const credits = new Intl.NumberFormat('en', { maximumFractionDigits: 6 });

export const fmtNumber = (n) => numbers.format(Number(n) || 0);
export const fmtCredits = (n) => (n === null || n === undefined ? '—' : credits.format(Number(n)));

export function fmtDate(text) {
  if (!text) return '—';
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return text;
  return date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

// ---- messages ----

/** A visible error for a failed call (role=alert: read out at once). */
export function errorBox(error, what) {
  const message = error && error.message ? error.message : String(error);
  return h('div', { class: 'notice error', role: 'alert' },
    what ? h('strong', {}, `${what}: `) : null, message);
}

export function okBox(text) {
  return h('div', { class: 'notice ok', role: 'status' }, text);
}

/** Replaces `slot`'s content with a message that says what happened. */
export function show(slot, node) {
  slot.replaceChildren(node);
}

// ---- tables ----

/** A table from column definitions: [{label, value: row => node|text, class}] */
export function table(columns, rows, { caption, empty = 'Nothing yet.' } = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption || 'table' },
    h('table', {},
      caption ? h('caption', { class: 'sr-only' }, caption) : null,
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class }, c.label)))),
      h('tbody', {}, rows.map((row) => h('tr', {},
        columns.map((c) => h('td', { class: c.class, 'data-label': c.label }, c.value(row))))))));
}

export function badge(text, kind = text) {
  return h('span', { class: `badge badge-${kind}` }, text);
}

// ---- dialogs ----

function openDialog(dialog) {
  const opener = document.activeElement;
  document.body.append(dialog);
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (opener && opener.isConnected) opener.focus();
  });
  dialog.showModal();
}

/** Asks a yes/no question; resolves true when confirmed. */
export function confirmDialog(title, text, confirmLabel, { danger = true } = {}) {
  return new Promise((resolve) => {
    const titleId = uid('dlg');
    const dialog = h('dialog', { 'aria-labelledby': titleId },
      h('h2', { id: titleId }, title),
      h('p', {}, text),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('no') }, 'Cancel'),
        h('button', { type: 'button', class: danger ? 'danger' : 'primary', onclick: () => dialog.close('yes') }, confirmLabel)));
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'));
    openDialog(dialog);
    dialog.querySelector('button.secondary').focus();
  });
}

/** Shows a secret once, with a copy button. */
export function secretDialog(title, text, secret) {
  return new Promise((resolve) => {
    const titleId = uid('dlg');
    const status = h('p', { class: 'copy-status', role: 'status' });
    const field = h('input', { type: 'text', readonly: true, value: secret, class: 'secret', 'aria-label': title, spellcheck: 'false' });
    const copy = async () => {
      try {
        await navigator.clipboard.writeText(secret);
        status.textContent = 'Copied to the clipboard.';
      } catch {
        field.select();
        status.textContent = 'The browser refused the clipboard: the value is selected, copy it with Ctrl+C.';
      }
    };
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: 'secret-dialog' },
      h('h2', { id: titleId }, title),
      h('p', {}, text),
      h('div', { class: 'secret-row' }, field, h('button', { type: 'button', class: 'primary', onclick: copy }, 'Copy')),
      status,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'I have stored it')));
    dialog.addEventListener('close', () => resolve());
    openDialog(dialog);
    field.focus();
    field.select();
  });
}

/**
 * A form in a dialog. `fields`: [{name, label, type, value, options,
 * required, help, min, step}]; resolves with {name: value} (strings, or
 * booleans for checkboxes, arrays for 'checks') or null when cancelled.
 * `submit(values)` may throw: its error is shown in the dialog, which stays.
 */
export function formDialog(title, fields, submitLabel, submit) {
  return new Promise((resolve) => {
    const titleId = uid('dlg');
    const errorSlot = h('div', { class: 'form-error' });
    const controls = fields.map(field);
    const form = h('form', { method: 'dialog', novalidate: false },
      h('h2', { id: titleId }, title),
      controls.map((c) => c.node),
      errorSlot,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel'),
        h('button', { type: 'submit', class: 'primary' }, submitLabel)));
    const dialog = h('dialog', { 'aria-labelledby': titleId }, form);
    let result = null;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const values = Object.fromEntries(controls.map((c) => [c.name, c.read()]));
      const button = form.querySelector('button[type=submit]');
      button.disabled = true;
      try {
        result = submit ? (await submit(values)) ?? values : values;
        dialog.close();
      } catch (error) {
        show(errorSlot, errorBox(error));
      } finally {
        button.disabled = false;
      }
    });
    dialog.addEventListener('close', () => resolve(result));
    openDialog(dialog);
    const first = form.querySelector('input:not([type=hidden]), select, textarea');
    if (first) first.focus();
  });
}

function field(spec) {
  const id = uid('field');
  const help = spec.help ? h('small', { id: `${id}-help`, class: 'help' }, spec.help) : null;
  const described = help ? `${id}-help` : undefined;
  if (spec.type === 'checkbox') {
    const input = h('input', { type: 'checkbox', id, name: spec.name, checked: spec.value, 'aria-describedby': described });
    return { name: spec.name, node: h('div', { class: 'field check' }, input, h('label', { for: id }, spec.label), help), read: () => input.checked };
  }
  if (spec.type === 'checks') {
    const boxes = spec.options.map((option) => {
      const boxId = uid('field');
      const box = h('input', { type: 'checkbox', id: boxId, value: option, checked: (spec.value || []).includes(option) });
      return { box, node: h('span', { class: 'check' }, box, h('label', { for: boxId }, option)) };
    });
    return {
      name: spec.name,
      node: h('fieldset', { class: 'field' }, h('legend', {}, spec.label), boxes.map((b) => b.node), help),
      read: () => boxes.filter((b) => b.box.checked).map((b) => b.box.value),
    };
  }
  let input;
  if (spec.type === 'select') {
    input = h('select', { id, name: spec.name, 'aria-describedby': described },
      spec.options.map((o) => {
        const [value, label] = Array.isArray(o) ? o : [o, o];
        return h('option', { value, selected: value === spec.value }, label);
      }));
  } else if (spec.type === 'textarea') {
    input = h('textarea', { id, name: spec.name, required: spec.required, rows: 4, 'aria-describedby': described });
    input.value = spec.value ?? '';
  } else {
    input = h('input', {
      id, name: spec.name, type: spec.type || 'text', required: spec.required, min: spec.min, step: spec.step,
      value: spec.value ?? '', autocomplete: spec.autocomplete || 'off', 'aria-describedby': described,
    });
  }
  return { name: spec.name, node: h('div', { class: 'field' }, h('label', { for: id }, spec.label), input, help), read: () => input.value.trim() };
}

/** A number field's value: null when empty. */
export function numberOrNull(text) {
  if (text === '' || text === undefined || text === null) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** <input type=datetime-local> (read as UTC) to RFC 3339, or null. */
export function localToIso(text) {
  if (!text) return null;
  return `${text.length === 16 ? `${text}:00` : text}Z`;
}

export function isoToLocal(text) {
  return text ? text.slice(0, 16) : '';
}

/**
 * For a view that fetches, then renders: each call to the returned
 * function starts a load and gives back `isLatest`, true while no later
 * load has started. Responses may arrive out of order (a read that waits
 * for the store's pending commit can answer after a later one), so a load
 * renders only if it is still the latest: the view always shows what its
 * filters say now, never an earlier filter's answer.
 */
export function latestLoad() {
  let started = 0;
  return () => {
    const mine = ++started;
    return () => mine === started;
  };
}

/**
 * A page's action runner: clears `slot`, runs the action and shows what
 * went wrong there (a 401 is left to the sign-in form, which takes over).
 */
export function runner(slot) {
  return async (what, action) => {
    slot.replaceChildren();
    try {
      await action();
    } catch (e) {
      if (e.status !== 401) show(slot, errorBox(e, what));
    }
  };
}
