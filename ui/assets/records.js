// What the compliance record pages (review queue, incidents, audit log,
// conversations) share: the text of a chat request and answer as stored,
// excerpts, spans of time, a record shown whole in a dialog, and a JSON
// download. Everything is built with h(), so a stored prompt or answer can
// never become markup.

import { h, badge, uid } from './dom.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A span of milliseconds as "2 d 3 h", "45 min", "under a minute". */
export function fmtSpan(ms) {
  if (!Number.isFinite(ms) || ms < MINUTE) return 'under a minute';
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)} h ${Math.floor((ms % HOUR) / MINUTE)} min`;
  return `${Math.floor(ms / DAY)} d ${Math.floor((ms % DAY) / HOUR)} h`;
}

/** Milliseconds from now to an RFC 3339 time (negative when past). */
export function untilMs(text) {
  return new Date(text).getTime() - Date.now();
}

/** A risk level as a badge coloured by level. */
export function levelBadge(level) {
  return level ? badge(level, `level-${level}`) : '—';
}

/** A message's content as text: a string, or the text parts of an array. */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && part.type === 'text' ? part.text : `[${part?.type || 'part'}]`)).join(' ');
  }
  return content === null || content === undefined ? '' : JSON.stringify(content);
}

/** The messages of a stored chat request as [{role, text}]. */
export function requestMessages(request) {
  if (!request) return [];
  if (typeof request === 'string') return [{ role: 'request', text: request }];
  if (Array.isArray(request.messages)) {
    return request.messages.map((m) => ({ role: m.role || 'message', text: contentText(m.content) }));
  }
  return [{ role: 'request', text: JSON.stringify(request, null, 2) }];
}

/** The text of a stored answer: a completion's first choice, or the text kept. */
export function answerText(answer) {
  if (answer === null || answer === undefined) return '';
  if (typeof answer === 'string') return answer;
  const choice = Array.isArray(answer.choices) ? answer.choices[0] : null;
  if (choice && choice.message) return contentText(choice.message.content);
  if (choice && typeof choice.text === 'string') return choice.text;
  return JSON.stringify(answer, null, 2);
}

/** The last user message of a request: what a reviewer reads first. */
export function lastUserText(request) {
  const messages = requestMessages(request);
  const user = messages.filter((m) => m.role === 'user');
  return (user.length ? user[user.length - 1] : messages[messages.length - 1])?.text || '';
}

/** At most `max` characters of `text`, on one line. */
export function excerpt(text, max = 140) {
  const line = String(text || '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A definition list from [label, value] pairs (values may be nodes). */
export function facts(pairs) {
  return h('dl', { class: 'record-facts' }, pairs.map(([label, value]) => [
    h('dt', {}, label),
    h('dd', {}, value === null || value === undefined || value === '' ? '—' : value),
  ]));
}

/** A stored request and answer, whole: each message labelled by its role. */
export function transcript(request, answer) {
  return h('div', { class: 'transcript' },
    requestMessages(request).map((m) => h('div', { class: 'message' },
      h('div', { class: 'message-role' }, m.role),
      h('div', { class: 'message-text' }, m.text))),
    answer === undefined ? null : h('div', { class: 'message answer-message' },
      h('div', { class: 'message-role' }, 'answer'),
      h('div', { class: 'message-text' }, answerText(answer) || '(none kept)')));
}

/** JSON, indented, in a scrollable block. */
export function jsonBlock(value, label) {
  return h('pre', { class: 'json', tabindex: 0, role: 'region', 'aria-label': label }, JSON.stringify(value, null, 2));
}

/**
 * A record shown whole in a native <dialog> with a Close button (Escape
 * closes it too; focus returns to the button that opened it). `actions`
 * are further buttons, each closing the dialog with its `value`; resolves
 * with the value it closed with.
 */
export function recordDialog(title, body, { actions = [], wide = true } = {}) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = uid('dlg');
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: wide ? 'record-dialog' : null },
      h('h2', { id: titleId }, title),
      body,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('') }, 'Close'),
        actions.map((a) => h('button', { type: 'button', class: a.class || 'primary', onclick: () => dialog.close(a.value) }, a.label))));
    document.body.append(dialog);
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener && opener.isConnected) opener.focus();
      resolve(dialog.returnValue);
    });
    dialog.showModal();
    dialog.querySelector('button.secondary').focus();
  });
}

/** Saves `value` as a JSON file named `name`. */
export function downloadJson(name, value) {
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(value, null, 2)}\n`], { type: 'application/json' }));
  const link = h('a', { href: url, download: name, class: 'sr-only' }, name);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
