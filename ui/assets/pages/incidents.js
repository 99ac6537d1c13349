// Serious incidents (EU AI Act Article 73): the list filtered by status and
// severity, one incident with its evidence (the linked requests, read from
// the conversation log for roles that may), status changes
// (`incidents.manage`: owner, admin; `incidents.view` alone reads), and the
// Article 73 report: a JSON download and the detail view itself, laid out
// for printing (app.css hides the frame under @media print).

import { api, get } from '../api.js';
import {
  h, badge, table, fmtDate, formDialog, confirmDialog, okBox, show, uid,
  runner, latestLoad,
} from '../dom.js';
import { downloadJson, excerpt, facts, fmtSpan, lastUserText, levelBadge, transcript, untilMs } from '../records.js';

const STATUSES = ['open', 'reported', 'closed'];
/** Article 73(2)-(4): days to report, by severity. */
const DEADLINE_DAYS = { critical: 2, fatal: 10, serious: 15 };
const SEVERITIES = Object.keys(DEADLINE_DAYS);
const SEVERITY_HELP = 'critical: widespread infringement or critical-infrastructure disruption (2 days); fatal: a person died (10 days); serious: any other serious incident (15 days).';

function deadline(incident) {
  const left = untilMs(incident.reportDeadline);
  const when = fmtDate(incident.reportDeadline);
  if (incident.status !== 'open') return when;
  return h('span', { class: left < 0 ? 'overdue' : null }, when, ' ',
    h('small', {}, left < 0 ? `(overdue by ${fmtSpan(-left)})` : `(in ${fmtSpan(left)})`));
}

/**
 * The linked requests with their conversation records. A role without
 * `conversations.view` (admin) gets the ids alone; a record the log no
 * longer keeps (retention, erasure) says so.
 */
async function evidence(incident, can) {
  const readable = can('conversations.view');
  return Promise.all(incident.requestIds.map(async (requestId) => {
    if (!readable) return { requestId, record: null, note: 'the conversation log needs conversations.view (owner, auditor)' };
    try {
      return { requestId, record: await get(`/api/v1/conversations/${encodeURIComponent(requestId)}`) };
    } catch (e) {
      if (e.status === 401) throw e;
      return { requestId, record: null, note: e.status === 404 ? 'not in the conversation log (past retention, erased, or never logged)' : e.message };
    }
  }));
}

/** The Article 73 report: the incident, its deadline, and the evidence. */
function report(incident, items, me) {
  return {
    report: 'EU AI Act Article 73 serious incident report',
    generatedAt: new Date().toISOString(),
    generatedBy: me.email,
    tenant: me.tenant ? { id: me.tenant.id, name: me.tenant.name } : { id: incident.tenantId },
    reportingPeriodDays: DEADLINE_DAYS[incident.severity] ?? null,
    overdue: incident.status === 'open' && untilMs(incident.reportDeadline) < 0,
    incident,
    evidence: items.map((e) => (e.record ? { requestId: e.requestId, record: e.record } : { requestId: e.requestId, record: null, note: e.note })),
  };
}

function evidenceList(items) {
  if (!items.length) return h('p', { class: 'empty' }, 'No request is linked to this incident.');
  return h('ol', { class: 'evidence' }, items.map((e) => h('li', {},
    h('code', {}, e.requestId),
    e.record
      ? h('div', {},
        facts([
          ['Time', fmtDate(e.record.at)],
          ['Model', e.record.model],
          ['Risk level', levelBadge(e.record.riskLevel)],
          ['Rules', (e.record.triggeredRules || []).join(', ')],
          ['Purpose', e.record.purpose],
          ['Key', e.record.keyId],
        ]),
        transcript(e.record.request, e.record.response))
      : h('p', { class: 'muted' }, e.note))));
}

export async function render(root, ctx) {
  const { can, me } = ctx;
  const manage = can('incidents.manage');
  const message = h('div', { class: 'messages' });
  const view = h('div', {});
  const statusId = uid('status');
  const severityId = uid('severity');
  const status = h('select', { id: statusId },
    h('option', { value: '' }, 'any'), STATUSES.map((s) => h('option', { value: s }, s)));
  const severity = h('select', { id: severityId },
    h('option', { value: '' }, 'any'), SEVERITIES.map((s) => h('option', { value: s }, s)));
  const filters = h('div', { class: 'toolbar' },
    h('label', { for: statusId }, 'Status'), status,
    h('label', { for: severityId }, 'Severity'), severity,
    manage ? h('button', { type: 'button', class: 'primary', onclick: () => run('Filing an incident', fileIncident) }, 'File incident') : null);

  const run = runner(message);

  const listing = latestLoad();
  async function showList() {
    const isLatest = listing();
    filters.hidden = false;
    const query = status.value ? `?status=${status.value}` : '';
    const { data } = await get(`/api/v1/incidents${query}`);
    if (!isLatest()) return;
    const rows = severity.value ? data.filter((i) => i.severity === severity.value) : data;
    show(view, table([
      { label: 'Severity', value: (i) => badge(i.severity, `severity-${i.severity}`) },
      { label: 'Category', value: (i) => i.category },
      { label: 'Description', value: (i) => excerpt(i.description, 100) || '—' },
      { label: 'Status', value: (i) => badge(i.status, `incident-${i.status}`) },
      { label: 'Source', value: (i) => i.source },
      { label: 'Filed', value: (i) => fmtDate(i.createdAt) },
      { label: 'Report by', value: deadline },
      { label: 'Details', value: (i) => h('button', { type: 'button', class: 'secondary small', 'aria-label': `Open incident ${i.id}`, onclick: () => run('Opening the incident', () => showDetail(i.id)) }, 'Open'), class: 'actions-cell' },
    ], rows, { caption: 'Incidents', empty: status.value || severity.value ? 'No incident matches these filters.' : 'No incident has been filed.' }));
    for (const [i, row] of [...view.querySelectorAll('tbody tr')].entries()) row.dataset.incident = rows[i].id;
  }

  async function setStatus(incident, next) {
    if (next === 'closed') {
      const yes = await confirmDialog('Close this incident?', 'It leaves the open list; it can be reopened.', 'Close incident', { danger: false });
      if (!yes) return;
    }
    await api('PATCH', `/api/v1/incidents/${encodeURIComponent(incident.id)}`, { status: next });
    await showDetail(incident.id);
    show(message, okBox(`Incident ${incident.id} is now ${next}.`));
  }

  function statusButtons(incident) {
    if (!manage) return null;
    const offered = {
      open: [['reported', 'Mark reported'], ['closed', 'Close']],
      reported: [['closed', 'Close'], ['open', 'Reopen']],
      closed: [['open', 'Reopen']],
    }[incident.status] || [];
    return offered.map(([next, label]) => h('button', {
      type: 'button', class: 'secondary', onclick: () => run('Changing the status', () => setStatus(incident, next)),
    }, label));
  }

  async function showDetail(id) {
    filters.hidden = true;
    const incident = await get(`/api/v1/incidents/${encodeURIComponent(id)}`);
    const items = await evidence(incident, can);
    const back = h('button', { type: 'button', class: 'secondary', onclick: () => run('Listing incidents', async () => { await showList(); }) }, '← All incidents');
    show(view, h('article', { class: 'incident-report', 'data-incident': incident.id, 'aria-labelledby': 'incident-title' },
      h('div', { class: 'toolbar no-print' },
        back,
        statusButtons(incident),
        h('button', { type: 'button', class: 'secondary', onclick: () => downloadJson(`incident-${incident.id}-article-73.json`, report(incident, items, me)) }, 'Download report (JSON)'),
        h('button', { type: 'button', class: 'secondary', onclick: () => window.print() }, 'Print report')),
      h('h2', { id: 'incident-title' }, `Serious incident report (Article 73): ${incident.category}`),
      h('p', { class: 'print-only' }, `Printed ${fmtDate(new Date().toISOString())} by ${me.email}.`),
      facts([
        ['Incident', h('code', {}, incident.id)],
        ['Severity', badge(incident.severity, `severity-${incident.severity}`)],
        ['Status', badge(incident.status, `incident-${incident.status}`)],
        ['Category', incident.category],
        ['Description', incident.description],
        ['Source', incident.source],
        ['Filed by', incident.createdBy],
        ['Filed', fmtDate(incident.createdAt)],
        ['Report by', deadline(incident)],
        ['Reported', fmtDate(incident.reportedAt)],
        ['Closed', fmtDate(incident.closedAt)],
        ['Tenant', incident.tenantId],
      ]),
      h('h3', {}, `Evidence: ${items.length} linked request${items.length === 1 ? '' : 's'}`),
      evidenceList(items)));
    view.querySelector('h2').setAttribute('tabindex', '-1');
    view.querySelector('h2').focus();
  }

  async function fileIncident() {
    const filed = await formDialog('File an incident', [
      { name: 'severity', label: 'Severity', type: 'select', options: SEVERITIES, value: 'serious', help: SEVERITY_HELP },
      { name: 'category', label: 'Category', required: true, help: 'e.g. discriminatory_output' },
      { name: 'description', label: 'Description', type: 'textarea' },
      { name: 'requestIds', label: 'Linked request ids', help: 'Separated by commas or spaces; optional.' },
    ], 'File incident', (values) => api('POST', '/api/v1/incidents', {
      severity: values.severity,
      category: values.category,
      description: values.description,
      requestIds: values.requestIds.split(/[\s,]+/).filter(Boolean),
    }));
    if (!filed) return;
    await showList();
    show(message, okBox(`Incident ${filed.id} filed: report by ${fmtDate(filed.reportDeadline)}.`));
  }

  status.addEventListener('change', () => run('Listing incidents', showList));
  severity.addEventListener('change', () => run('Listing incidents', showList));
  root.append(filters, message, view);
  await showList();
}
