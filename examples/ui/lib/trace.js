// The trace: agent.request, tools/list and tools/call rows (source · mode, status, duration,
// provider call id, trace id, retryable/terminal label, bounded details) with a session
// selector, Copy, Download and Clear (disabled while a run is active). Rows are metadata-only
// on the host; the page bounds what it shows once more.

import { api, copyText, downloadBlob } from './api.js';
import { $, el } from './dom.js';
import { confirmAction } from './modal.js';
import { createSessionDirectory, sessionText } from './sessions.js';
import { actions, state } from './store.js';

const MAX_DETAIL_CHARS = 2000;

function rowLabel(row) {
  if (row.status !== 'failed' || row.retryable === undefined) return null;
  return row.retryable ? 'retryable' : 'terminal';
}

function renderRow(row) {
  const label = rowLabel(row);
  const details = { argumentKeys: row.argumentKeys, sessionId: row.sessionId, provenance: row.provenance };
  const detailText = JSON.stringify(details, null, 2);
  return el('li', { className: `trace-row kind-${row.kind.replace('/', '-')}`, dataset: { traceId: row.traceId, status: row.status } },
    el('div', { className: 'row-head' },
      el('span', { className: 'kind', textContent: row.kind }),
      el('span', { className: 'name', textContent: row.name }),
      el('span', { className: `status status-${row.status}`, textContent: row.status }),
      el('span', { className: 'duration', textContent: row.durationMs !== undefined ? `${row.durationMs} ms` : '…' })),
    el('div', { className: 'meta' }, [
      row.source ? `${row.source} · ${row.mode ?? '–'}` : null,
      row.errorCode,
      label,
      row.toolCallId ? `call ${row.toolCallId}` : null,
      `trace ${row.traceId}`,
    ].filter(Boolean).join('  ·  ')),
    label ? el('span', { className: `label ${label}`, textContent: label }) : null,
    el('details', { className: 'row-details' },
      el('summary', { textContent: 'Details' }),
      el('pre', { textContent: detailText.length > MAX_DETAIL_CHARS ? `${detailText.slice(0, MAX_DETAIL_CHARS)}\n… (truncated)` : detailText })));
}

const sessionNames = createSessionDirectory(() => renderTrace());

function visibleRows() {
  const rows = [...state.traceRows.values()];
  return state.traceSession ? rows.filter((row) => row.sessionId === state.traceSession) : rows;
}

/** Renders the session selector and the rows of the chosen session. */
export function renderTrace() {
  const select = $('trace-session');
  const sessions = sessionNames.of(state.traceRows.values());
  const wanted = [{ id: '', label: 'All sessions' }, ...sessions];
  const options = wanted.map((session) => [session.id, session.id ? sessionText(session) : session.label]);
  if ([...select.options].map((option) => `${option.value}\t${option.textContent}`).join('\n') !== options.map((option) => option.join('\t')).join('\n')) {
    select.replaceChildren(...options.map(([id, text]) => el('option', { value: id, textContent: text, title: id || 'every session' })));
  }
  if (!wanted.some((session) => session.id === state.traceSession)) state.traceSession = '';
  select.value = state.traceSession;
  const log = $('trace-log');
  const rows = visibleRows();
  log.replaceChildren(...rows.map(renderRow));
  if (!rows.length) log.append(el('li', { className: 'empty', textContent: 'No calls yet. Run a prompt or a tool sample to see rows here.' }));
  log.scrollTop = log.scrollHeight;
  $('copy-trace').disabled = rows.length === 0;
  $('download-trace').disabled = rows.length === 0;
}

/** Adds or updates one row from a `trace` event. */
export function onTraceRow(row) {
  state.traceRows.set(row.traceId, row);
  renderTrace();
}

/** Loads every row and session from the host. */
export async function loadTrace() {
  const data = await api('/api/trace');
  state.traceRows = new Map(data.rows.map((row) => [row.traceId, row]));
  await sessionNames.refresh();
  renderTrace();
}

function exportJson() {
  return JSON.stringify({ session: state.traceSession || null, rows: visibleRows() }, null, 2);
}

/** Wires the trace toolbar. */
export function wireTrace() {
  $('trace-session').addEventListener('change', (event) => {
    state.traceSession = event.target.value;
    renderTrace();
  });
  $('copy-trace').addEventListener('click', async () => {
    const copied = await copyText(exportJson());
    actions.status(copied ? `Copied ${visibleRows().length} trace rows.` : 'The clipboard refused the copy.', !copied);
  });
  $('download-trace').addEventListener('click', () => downloadBlob(`trace-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, exportJson()));
  $('clear-trace').addEventListener('click', async () => {
    const ok = await confirmAction({ title: 'Clear the trace?', message: 'Every trace row of every session is removed.', confirmLabel: 'Clear', trigger: $('clear-trace') });
    if (!ok) return;
    try {
      await api('/api/trace', { method: 'DELETE' });
      await loadTrace();
      actions.status('Trace cleared.');
    } catch (error) {
      actions.status(`${error.code}: ${error.message}`, true);
    }
  });
}
