// The preview: a sandboxed iframe of /preview/<revision> inside browser chrome (refresh, Design
// Mode, full screen with Esc back). The page accepts bridge messages only from that iframe's
// window and only for the revision it shows, forwards them to the host, and lists compiler
// diagnostics. A revision that changed only stylesheets is swapped into the running document
// (live-css.js) instead of reloading it.

import { api, callTool, isCommitted, unconfirmedText } from './api.js';
import { onDesignMessage, onPreviewReady } from './design.js';
import { $, el } from './dom.js';
import { createLiveStylesheets } from './live-css.js';
import { actions, state } from './store.js';

const READY = 'context-action.preview.ready';
// Escape pressed inside the iframe (its focus hides the key from this page).
const ESCAPE = 'context-action.preview.escape';
const ERROR = 'context-action.preview.error';
// Each uncaught error, rejection and console.error of the shown revision, with its position.
const RUNTIME_ERROR = 'context-action.preview.runtimeError';
let diagnosticsRevision = null;
/** The shown revision's runtime errors, as diagnostics (the bridge bounds how many). */
let runtimeErrors = { revision: null, list: [] };
let live = null;

function liveStylesheets() {
  live ??= createLiveStylesheets({
    iframe: $('preview'),
    stylesheetsPath: (to, from) => `/api/preview/stylesheets/${to}?from=${from}`,
    load: (revision) => { $('preview').src = `/preview/${revision}`; },
  });
  return live;
}

function setPreviewStatus(text, kind) {
  const status = $('preview-status');
  status.textContent = text;
  status.dataset.state = kind;
  $('status-preview').textContent = `preview: ${text}`;
}

/**
 * Points the iframe at `revision` (no-op when it already shows it); `live` is the stylesheets
 * a revision announcement carried and `liveSince` the first revision of its stylesheet run,
 * when known (see live-css.js).
 */
export function showPreview(revision, force = false, live = null, liveSince = undefined) {
  if (!force && state.previewRevision === revision) return;
  state.previewRevision = revision;
  setPreviewStatus(`loading revision ${revision}`, 'loading');
  $('preview-address').textContent = `/preview/${revision}`;
  liveStylesheets().show(revision, force, live, liveSince ?? undefined);
  loadDiagnostics();
}

async function loadDiagnostics() {
  try {
    const data = await api('/api/preview/diagnostics');
    if (data.revision !== state.previewRevision || diagnosticsRevision === data.revision) return;
    diagnosticsRevision = data.revision;
    renderDiagnostics(data.diagnostics);
  } catch (error) {
    renderDiagnostics([{ severity: 'error', kind: error.code, sourcePath: '', message: `Diagnostics unavailable: ${error.message}` }]);
  }
}

function describe(diagnostic) {
  const where = diagnostic.sourcePath ? `${diagnostic.sourcePath}${diagnostic.line ? `:${diagnostic.line}` : ''}${diagnostic.column ? `:${diagnostic.column}` : ''}` : '';
  if (diagnostic.message) return { where, text: diagnostic.message };
  const what = String(diagnostic.kind ?? 'issue').replace(/[-_]/g, ' ');
  return { where, text: `${what}${diagnostic.requestedPath ? ` “${diagnostic.requestedPath}”` : ''}` };
}

/** A runtime error report as a diagnostic row: its file position is a link like the others. */
function runtimeDiagnostic(message) {
  const source = message.source && typeof message.source === 'object' ? message.source : null;
  const what = { error: 'uncaught error', rejection: 'unhandled rejection', console: 'console.error' }[message.kind] ?? 'runtime error';
  return {
    severity: message.kind === 'console' ? 'warning' : 'error', kind: what,
    sourcePath: source ? String(source.path) : '', line: source?.line, column: source?.column,
    message: `${what}: ${String(message.message ?? '').slice(0, 500)}`,
  };
}

function shownRuntimeErrors() {
  return runtimeErrors.revision === state.previewRevision ? runtimeErrors.list : [];
}

function renderDiagnostics(diagnostics, runtime = null) {
  const list = $('diagnostics-list');
  const reported = shownRuntimeErrors();
  // The acknowledgement's error repeats the first runtime error; it is listed only alone.
  const all = [...diagnostics, ...reported, ...(runtime && !reported.length ? [runtime] : [])];
  list.replaceChildren(...all.map((diagnostic) => {
    const { where, text } = describe(diagnostic);
    return el('li', { className: `diagnostic ${diagnostic.severity ?? 'warning'}` },
      el('span', { className: 'severity', textContent: diagnostic.severity ?? 'warning' }),
      where ? el('button', {
        type: 'button', className: 'where', textContent: where,
        on: { click: () => actions.openFile(diagnostic.sourcePath, diagnostic.line ? { line: diagnostic.line, column: diagnostic.column ?? 1, length: 0 } : undefined) },
      }) : null,
      el('span', { className: 'text', textContent: text }));
  }));
  if (!all.length) list.append(el('li', { className: 'empty', textContent: 'No problems in this revision.' }));
  $('diagnostics-count').textContent = String(all.length);
  $('diagnostics-count').dataset.count = String(all.length);
  state.diagnostics = diagnostics;
}

function onBridgeMessage(event) {
  // Only the preview iframe's own window, and only for the revision it currently shows.
  if (event.source !== $('preview').contentWindow) return;
  const message = event.data;
  if (!message || typeof message !== 'object' || message.revision !== state.previewRevision) return;
  if (onDesignMessage(message)) return;
  if (message.type === ESCAPE) {
    exitFullscreen();
    return;
  }
  if (message.type === RUNTIME_ERROR) {
    if (runtimeErrors.revision !== message.revision) runtimeErrors = { revision: message.revision, list: [] };
    runtimeErrors.list.push(runtimeDiagnostic(message));
    renderDiagnostics(state.diagnostics ?? []);
    api('/api/preview/ack', { method: 'POST', body: message }).catch(() => {});
    return;
  }
  if (message.type !== READY && message.type !== ERROR) return;
  liveStylesheets().acknowledge(message.revision, message.type === READY);
  if (message.type === READY) {
    setPreviewStatus(`revision ${message.revision} ready`, 'ready');
    onPreviewReady();
  } else {
    setPreviewStatus(`revision ${message.revision} error`, 'error');
    renderDiagnostics(state.diagnostics ?? [], { severity: 'error', kind: 'runtime error', sourcePath: '', message: String(message.message ?? '').slice(0, 500) });
  }
  api('/api/preview/ack', { method: 'POST', body: message }).catch(() => {});
}

function setFullscreen(on) {
  document.querySelector('.preview-pane').classList.toggle('fullscreen', on);
  $('fullscreen-preview').setAttribute('aria-pressed', String(on));
  $('fullscreen-preview').title = on ? 'Leave full screen (Esc)' : 'Full screen (Esc returns)';
  $('fullscreen-preview').textContent = on ? '⤡' : '⤢';
}

/** Leaves full screen; true when it was on. */
export function exitFullscreen() {
  const on = document.querySelector('.preview-pane').classList.contains('fullscreen');
  if (on) setFullscreen(false);
  return on;
}

/**
 * Refreshes the preview through preview.refresh (the ⟳ button and every "Refresh preview"
 * offer): the host republishes the revision, the page reloads its iframe on that event, and the
 * result is the iframe's new acknowledgement.
 */
export async function refreshPreview() {
  await actions.flushDraft();
  const result = await callTool('preview.refresh');
  if (result.isError) {
    actions.status(`${result.error.code}: ${result.error.message}`, true);
  } else {
    offerRefresh(false);
    actions.status(`Preview refreshed · revision ${result.structuredContent.revision}`);
  }
  await actions.refreshState();
}

/** Shows (or hides) the status bar's "Refresh preview" offer. */
export function offerRefresh(on) {
  $('refresh-unconfirmed').hidden = !on;
}

/** Reports `result` of a mutation: an applied one is never shown as failed or left unsaved. */
export function reportApplied(result, success) {
  if (!isCommitted(result)) return false;
  actions.status(`${success} · ${unconfirmedText(result)}`);
  offerRefresh(true);
  return true;
}

/** Wires the preview chrome and the bridge listener. */
export function wirePreview() {
  window.addEventListener('message', onBridgeMessage);
  $('refresh-preview').addEventListener('click', refreshPreview);
  $('refresh-unconfirmed').addEventListener('click', refreshPreview);
  $('fullscreen-preview').addEventListener('click', () => setFullscreen(!document.querySelector('.preview-pane').classList.contains('fullscreen')));
}
