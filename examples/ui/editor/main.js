// The Live Code Editor page (/editor): the editor's files, its open document in a textarea, the
// scenario and reset controls, folder saves, the sandboxed preview of the current document
// revision, and the shared side panels (chat, editor.* palette, trace, approvals) from the page
// kit. The host owns both clocks: the workspace revision (files) and the document revision (what
// the preview shows). Every change is an editor.* tool call (direct from the page, or from an
// agent run) and the page follows the host's surface events.

import {
  api, callTool, connectEvents, createApprovals, createComposer, createPalette, createPreview, createTrace, isCommitted,
  showConnection, unconfirmedText, wireTabs,
} from '../lib/surface.js';
import { $ } from '../lib/dom.js';
import { keptDraft } from '../lib/launch.js';
import { guardLeaving } from '../lib/leave-guard.js';
import { confirmAction, modalOpen } from '../lib/modal.js';
import { createDocumentEditor } from './document.js';
import { createFileList } from './files.js';
import { createHeader, wireFolderForm } from './header.js';
import { createSaves } from './saves.js';
import { sampleArguments } from './samples.js';

const SURFACE = 'editor';
/** The /api/editor/state snapshot the page renders. */
let view = null;

function status(text, isError = false) {
  $('editor-status').textContent = text;
  $('editor-status').classList.toggle('error', isError);
}

const fail = (error) => status(`${error.code}: ${error.message}`, true);

// ---------------------------------------------------------------- panels

const header = createHeader({
  workspaceRevision: $('editor-workspace-revision'),
  documentRevision: $('editor-document-revision'),
  preview: $('editor-preview-state'),
  storage: $('editor-storage'),
  folder: $('editor-folder'),
  dirty: $('editor-dirty'),
});

const documentEditor = createDocumentEditor({
  textarea: $('editor-document'),
  path: $('editor-document-path'),
  status: $('editor-document-status'),
  find: $('editor-find'),
  stale: $('editor-stale'),
  staleText: $('editor-stale-text'),
  discard: $('editor-stale-discard'),
  overwrite: $('editor-stale-overwrite'),
  onWritten: () => refresh(),
});

const files = createFileList({
  list: $('editor-files'),
  onOpen: (path) => documentAction(`Opening ${path}`, 'editor.openFile', () => ({ path })),
});

const saves = createSaves({
  save: $('editor-save'),
  saveAll: $('editor-save-all'),
  status: $('editor-save-status'),
  unknownList: $('editor-unknown-saves'),
  unknownBox: $('editor-unknown-box'),
  beforeSave: () => settleDraft(),
  onChanged: () => refresh(),
});

const preview = createPreview({
  iframe: $('editor-preview'),
  status: $('editor-preview-status'),
  address: $('editor-preview-address'),
  documentPath: (revision) => `/editor/preview/${revision}`,
  ackPath: '/api/editor/preview/ack',
  // A revision that changed only stylesheets is swapped into the running document.
  stylesheetsPath: (to, from) => `/api/editor/preview/stylesheets/${to}?from=${from}`,
});

const approvals = createApprovals({ container: $('editor-approvals'), onError: fail });

const trace = createTrace({
  list: $('editor-trace'),
  session: $('editor-trace-session'),
  copy: $('editor-trace-copy'),
  download: $('editor-trace-download'),
  clear: $('editor-trace-clear'),
  onStatus: status,
});

const composer = createComposer({
  surface: SURFACE,
  form: $('editor-chat-form'),
  prompt: $('editor-prompt'),
  agent: $('editor-agent'),
  cancel: $('editor-cancel'),
  submit: $('editor-run'),
  badge: $('editor-agent-badge'),
  status: $('editor-run-status'),
  log: $('editor-chat-log'),
  onRunChange: (active) => trace.setRunActive(active),
  onFinished: () => refresh(),
});

const palette = createPalette({
  surface: SURFACE,
  list: $('editor-palette'),
  detail: $('editor-tool-detail'),
  args: $('editor-tool-args'),
  run: $('editor-tool-run'),
  output: $('editor-tool-output'),
  sample: (name) => sampleArguments(name, view),
  onResult: (name, result) => {
    const outcome = result.structuredContent;
    const clocks = outcome?.documentRevision !== undefined ? ` · document r${outcome.documentRevision}, workspace r${outcome.workspaceRevision}` : '';
    if (isCommitted(result)) status(`${name} applied · document ${unconfirmedText(result)}; ⟳ reloads the preview`);
    else status(result.isError ? `${name}: ${result.error.code}` : `${name} done${clocks}`, Boolean(result.isError));
    refresh();
  },
});

// ---------------------------------------------------------------- document actions

/** Sends the pending draft and re-reads the state, so a guard uses the clocks after it. */
async function settleDraft() {
  await documentEditor.flush();
  await refresh();
}

const actionControls = () => [$('editor-scenario'), $('editor-reset'), $('editor-revert')];
let acting = false;

/**
 * One document action at a time: the pending draft is sent first, then `tool` runs with the
 * document revision the page shows as its guard (unless the tool takes none).
 */
async function documentAction(label, tool, args, { guarded = false } = {}) {
  if (acting) return;
  acting = true;
  for (const control of actionControls()) control.disabled = true;
  files.setBusy(true);
  status(`${label}…`);
  try {
    await settleDraft();
    if (documentEditor.hasConflict()) {
      status('Resolve the stale draft first (discard it or replace the document with it).', true);
      return;
    }
    const guard = guarded ? { expectedDocumentRevision: view?.status?.documentRevision } : {};
    const result = await callTool(tool, { ...args(), ...guard }).catch((error) => ({ isError: true, error }));
    if (isCommitted(result)) status(`${label}: done · document ${unconfirmedText(result)}; ⟳ reloads the preview`);
    else if (result.isError) fail(result.error);
    else status(`${label}: done · document r${result.structuredContent.documentRevision} · preview ${result.structuredContent.preview.status}`);
  } finally {
    acting = false;
    files.setBusy(false);
    await refresh();
  }
}

$('editor-scenario').addEventListener('change', (event) => {
  const scenario = event.currentTarget.value;
  documentAction(`Scenario ${scenario}`, 'editor.setScenario', () => ({ scenario }), { guarded: true });
});

$('editor-reset').addEventListener('click', async (event) => {
  const trigger = event.currentTarget;
  const path = view?.status?.activePath ?? 'the document';
  const confirmed = await confirmAction({
    title: `Reset ${path}?`,
    message: `Replaces ${path} with the ${view?.status?.scenario ?? 'selected'} scenario's example. Unsaved edits of this file are lost.`,
    confirmLabel: 'Reset document',
    trigger,
  });
  if (confirmed) documentAction(`Reset ${path}`, 'editor.resetDocument', () => ({}), { guarded: true });
  else status('Reset cancelled.');
});

// A direct call, so no approval; the page's own dialog confirms that the edits go.
$('editor-revert').addEventListener('click', async (event) => {
  const path = view?.status?.activePath;
  const confirmed = await confirmAction({
    title: `Revert ${path}?`,
    message: `Restores ${path} to its saved checkpoint. Unsaved edits of this file are lost.`,
    confirmLabel: 'Revert file',
    trigger: event.currentTarget,
  });
  if (confirmed) documentAction(`Revert ${path}`, 'editor.revertFile', () => ({}), { guarded: true });
  else status('Revert cancelled.');
});

/** Ctrl+S: the draft reaches the host first, so text typed a moment ago is dirty and saved. */
async function saveShortcut() {
  await settleDraft();
  saves.saveActive();
}

// On the whole page, so the shortcut works with the focus outside the document too.
document.addEventListener('keydown', (event) => {
  if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== 's') return;
  event.preventDefault();
  if (!modalOpen()) saveShortcut();
});

wireFolderForm({
  form: $('editor-folder-form'),
  input: $('editor-folder-path'),
  submit: $('editor-folder-open'),
  status: $('editor-folder-status'),
  currentView: () => view,
  beforeOpen: () => settleDraft(),
  onOpened: () => refresh(),
});

// ---------------------------------------------------------------- editor state

let refreshing = null;
let again = false;

/** Reads /api/editor/state and re-renders; a call during a read schedules exactly one more. */
async function refresh() {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      render(await api('/api/editor/state'));
    } while (again);
  })();
  try {
    await refreshing;
  } catch (error) {
    status(`Could not read the editor: ${error.message}`, true);
  } finally {
    refreshing = null;
  }
  return undefined;
}

function renderScenarios(next) {
  const select = $('editor-scenario');
  const names = next.scenarios.map((scenario) => scenario.name);
  if ([...select.options].map((option) => option.value).join() !== names.join()) {
    select.replaceChildren(...next.scenarios.map((scenario) => {
      const option = document.createElement('option');
      option.value = scenario.name;
      option.textContent = scenario.title;
      option.title = scenario.description;
      return option;
    }));
  }
  select.value = next.status.scenario;
  select.disabled = acting;
}

function render(next) {
  view = next;
  const { status: editor } = next;
  header.render(editor);
  files.render(next.files, editor.activePath, editor.dirtyPaths);
  const open = next.document?.error
    ? null
    : { path: next.document.activePath, source: next.document.source, revision: next.document.documentRevision };
  documentEditor.render(open, next.document?.error);
  renderScenarios(next);
  $('editor-reset').disabled = acting || !open;
  // Offered only while the open file has edits its checkpoint does not hold.
  $('editor-revert').hidden = !editor.dirtyPaths?.includes(editor.activePath);
  $('editor-revert').disabled = acting;
  saves.render(next);
  preview.show(editor.documentRevision, false, next.liveStylesheetsSince);
  palette.refreshSample();
}

// ---------------------------------------------------------------- events

function onSurface(data) {
  if (!view) return;
  // Shown at once; the re-read that follows (coalesced with any read in flight) keeps the
  // page on the newest state even when an older read answers after this event.
  header.renderPreview(data.preview);
  refresh();
}

function onMessage(message) {
  switch (message.type) {
    case 'hello':
      approvals.render(message.approvals);
      refresh();
      break;
    case 'surface':
      if (message.surface === SURFACE) onSurface(message.data ?? {});
      break;
    case 'approvals': approvals.render(message.pending); break;
    case 'trace': trace.onRow(message.row); break;
    case 'agent': composer.onAgentEvent(message.run); break;
    case 'agentStream': composer.onStreamEvent(message); break;
    case 'settings': composer.applySettings(message.settings); break;
    case 'lagged':
      refresh();
      trace.load();
      break;
    default: break;
  }
}

function onConnection(connected) {
  showConnection($('editor-connection'), connected, status);
}

// ---------------------------------------------------------------- start

/** Re-applies the draft this tab kept when the studio restarted (lib/launch.js) to its file. */
async function restoreKeptDraft() {
  const kept = keptDraft(SURFACE);
  if (!kept || !view) return;
  if (kept.path !== view.document?.activePath) {
    await callTool('editor.openFile', { path: kept.path }).catch(() => null);
    await refresh();
  }
  documentEditor.restore(kept);
}

// Typing that has not reached the host yet (the pause before editor.setDocument, or a stale
// draft) would be lost by leaving: the browser asks first.
guardLeaving(() => documentEditor.hasDraft());

wireTabs(document.querySelector('.editor-side'));
$('editor-preview-reload').addEventListener('click', () => {
  if (view) preview.show(view.status.documentRevision, true);
});
composer.say('Ask for a change (replace "Step" with "Next", use the greeting scenario, save all), or run an editor.* tool from the Tools tab. Agent mutations and saves wait for your approval.', 'info');
await refresh();
await restoreKeptDraft();
connectEvents({ surface: SURFACE, onMessage, onConnection });
await Promise.all([trace.load(), palette.load(), saves.loadUnknown()]);
document.body.dataset.ready = 'true';
