// Live Code Studio page: UI only. The host owns the registry, workspace, approvals and trace;
// every mutation goes through POST /api/tools/call (a direct local call) or an agent run.
// This module wires the views together, keeps the page in step with the host's events, and owns
// the global keyboard shortcuts.

import { api, callTool, downloadBlob, downloadWorkspaceFile, studioToken } from './lib/api.js';
import { refreshChanges, wireChanges } from './lib/changes.js';
import { $, commandKey } from './lib/dom.js';
import { applyMcpServers, wireMcpServers } from './lib/mcp-servers.js';
import { wireUnload } from './lib/unload.js';
import { flushDraft, findStep, loadActiveFile, openFind, renderTabs, restoreKeptDraft, selectRange, showEditorStatus, updateEditorEnabled, wireEditor } from './lib/editor.js';
import { renderTree, save, wireExplorer } from './lib/explorer.js';
import { exitDesignMode, onSurfaceEvent, wireDesign } from './lib/design.js';
import { confirmAction, modalOpen } from './lib/modal.js';
import { exitFullscreen, refreshPreview, reportApplied, showPreview, wirePreview } from './lib/preview.js';
import { focusWorkspaceSearch, wireSearch } from './lib/search.js';
import { applySettings, wireSettings } from './lib/settings.js';
import { actions, busy, state } from './lib/store.js';
import { applyDeepLink, wireRecipes } from './lib/recipes.js';
import { connectEvents, createApprovals, createCatalog, createComposer, createTrace, restartEndedApprovals, serverOf, wireTabs } from './lib/surface.js';
import { sampleArguments } from './lib/samples.js';
import { wireUpload } from './lib/upload.js';

// ---------------------------------------------------------------- side panels

const RECOVERY_LABELS = {
  retry: 'Retry',
  'reread-and-retry': 'Re-read & retry',
  'refresh-preview': 'Refresh preview',
  'reconnect-folder': 'Reconnect folder',
  'grant-permission': 'Grant access',
  'use-local-agent': 'Use local agent & retry',
};

/** What the recovery `action` the host offers does on this page; `rerun(agent?)` runs the prompt again. */
function recoveryHandler(action, rerun) {
  switch (action) {
    case 'refresh-preview': return refreshPreview;
    case 'reconnect-folder':
    case 'grant-permission': return () => $('folder-path').focus();
    case 'use-local-agent': return () => rerun('local');
    case 'reread-and-retry': return () => refreshState({ reloadEditor: true }).then(() => rerun());
    default: return () => rerun();
  }
}

const trace = createTrace({
  list: $('trace-log'),
  session: $('trace-session'),
  copy: $('copy-trace'),
  download: $('download-trace'),
  clear: $('clear-trace'),
  onStatus: setStatusMessage,
  confirmClear: (trigger) => confirmAction({ title: 'Clear the trace?', message: 'Every trace row of every session is removed.', confirmLabel: 'Clear', trigger }),
});

const composer = createComposer({
  form: $('chat-form'),
  prompt: $('prompt'),
  agent: $('agent-select'),
  cancel: $('cancel-run'),
  submit: $('send-prompt'),
  badge: $('agent-badge'),
  status: $('run-status'),
  log: $('chat-log'),
  onRunChange: (_running, run) => {
    state.activeRun = run;
    lockEditor();
  },
  onFinished: (run) => {
    // A download request's run hands the file over: the page delivers it.
    const outcome = run.report.outcome;
    if (outcome.status === 'completed' && outcome.download) downloadWorkspaceFile(outcome.download);
    refreshState();
  },
  // The editor's draft reaches the host before the agent reads the workspace.
  beforeRun: () => flushDraft(),
  // A Design Mode selection shown in the composer goes with the run as context.
  metadata: () => (state.selection ? { selection: state.selection } : null),
  // An applied change whose preview was not confirmed offers a refresh, never a retry.
  recoveries: (outcome, rerun) => (outcome.actions ?? []).map((action) => [RECOVERY_LABELS[action] ?? action, recoveryHandler(action, rerun)]),
  outcomeOnBadge: false,
  clientRuns: true,
  cancelOnLeave: false,
});

const approvals = createApprovals({
  container: $('approvals'),
  surface: 'workspace',
  onError: (error) => composer.say(`${error.code}: ${error.message}`, 'failed'),
  onLost: (lost) => composer.say(restartEndedApprovals(lost), 'info'),
  onArrived: () => { $('chat-log').scrollTop = $('chat-log').scrollHeight; },
  escDenies: false, // onGlobalKeydown calls denyFirst
});

const catalog = createCatalog({
  search: $('catalog-search'),
  scopeBox: $('catalog-scopes'),
  list: $('catalog-list'),
  detail: $('catalog-detail'),
  copyList: $('copy-tool-list'),
  downloadList: $('download-tool-list'),
  // This page's surface (the registry also holds `editor.*` and `web.*`, shown on their pages)
  // and every tool mounted from an MCP server.
  shows: (tool) => tool.name.startsWith('workspace.') || tool.name.startsWith('preview.') || serverOf(tool.name) !== null,
  scopes: [
    ['read-only', 'Read-only', (tool) => tool.annotations?.readOnlyHint === true],
    ['workspace', 'Workspace', (tool) => tool.name.startsWith('workspace.')],
    ['preview', 'Preview', (tool) => tool.name.startsWith('preview.')],
  ],
  sample: (tool) => sampleArguments(tool, { revision: state.status?.revision ?? 0, activePath: state.activePath }),
  onStatus: setStatusMessage,
  beforeRun: flushDraft,
  afterRun: () => refreshState({ reloadEditor: true }),
  refreshPreview,
});

// ---------------------------------------------------------------- workspace state

let refreshing = null;
let refreshAgain = false;
let reloadAgain = false;

/**
 * Reads /api/state and re-renders. With `reloadEditor`, the active file is read again even
 * when the revision did not change (after a rename, delete or folder reload). Calls made while
 * a refresh is in flight schedule one more pass, so the last answer is never a stale one.
 */
async function refreshState({ reloadEditor = false } = {}) {
  reloadAgain ||= reloadEditor;
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      const reload = reloadAgain;
      reloadAgain = false;
      await refreshOnce(reload);
    } while (refreshAgain);
  })();
  try {
    await refreshing;
  } finally {
    refreshing = null;
  }
}

async function refreshOnce(reloadEditor) {
  const data = await api('/api/state');
  // A write that finished while this read was in flight already moved the page further on.
  if (state.status && data.status.revision < state.status.revision) return;
  const revisionChanged = state.status?.revision !== data.status.revision;
  state.status = data.status;
  state.files = data.files;
  applySettings(data.settings);
  if (!state.activePath || !state.files.some((file) => file.path === state.activePath)) {
    state.activePath = data.status.activePath;
  }
  renderHeader();
  renderTree();
  renderTabs();
  approvals.render(data.approvals);
  if (state.draft === null && (revisionChanged || reloadEditor)) await loadActiveFile();
  // Never back: an announced revision may already be ahead of a read that was in flight.
  if (state.previewRevision === null || data.status.revision > state.previewRevision) showPreview(data.status.revision, false, null, data.liveStylesheetsSince);
  catalog.refreshSample();
}

let resumedAnnounced = false;

/** Says once per page that the host kept unsaved edits of the last session (see `status.resumed`). */
function announceResumed(status) {
  if (resumedAnnounced || !status.resumed) return;
  resumedAnnounced = true;
  const { unsavedCount, unsavedPaths, folderName } = status.resumed;
  const more = unsavedCount > unsavedPaths.length ? ` and ${unsavedCount - unsavedPaths.length} more` : '';
  composer.say(`Kept ${unsavedCount} unsaved change(s) from your last session (${unsavedPaths.join(', ')}${more}). They are not saved to ${folderName} yet: Save to folder writes them.`, 'info');
}

function renderHeader() {
  const { status } = state;
  announceResumed(status);
  const storage = $('storage-badge');
  storage.textContent = status.storageMode === 'memory' ? 'memory only' : `storage · ${status.storageMode}`;
  storage.dataset.mode = status.storageMode;
  storage.title = status.storageError
    ? `Not persisted: ${status.storageError}`
    : 'The workspace is persisted in the data directory';
  const folder = status.folder ?? {};
  const folderBadge = $('folder-badge');
  folderBadge.textContent = folder.connected ? `folder · ${folder.name ?? 'linked'} · ${folder.permission}` : 'browser workspace · no folder';
  folderBadge.dataset.permission = folder.permission ?? 'disconnected';
  $('revision-badge').textContent = `rev ${status.revision}${status.isDirty ? ' · unsaved' : ''}`;
  $('undo-button').disabled = Boolean(state.activeRun) || !status.canUndo;
  $('redo-button').disabled = Boolean(state.activeRun) || !status.canRedo;
  $('status-storage').textContent = status.storageError
    ? `memory only — ${status.storageError}`
    : `${status.fileCount} files · ${status.storageMode}`;
  $('status-storage').classList.toggle('error', Boolean(status.storageError));
}

/** Opens `path` in the editor (flushing the draft first); optionally selects a position. */
async function openFile(path, position) {
  if (!(await flushDraft())) return;
  if (path !== state.activePath) {
    const result = await callTool('workspace.openFile', { path });
    if (result.isError) {
      showEditorStatus(`${result.error.code}: ${result.error.message}`, true);
      return;
    }
    state.activePath = path;
  }
  await loadActiveFile();
  renderTree();
  if (position) selectPosition(position);
}

function selectPosition({ line, column, length }) {
  const editor = $('editor');
  const lines = editor.value.split('\n');
  const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0) + Math.max(0, column - 1);
  editor.focus();
  selectRange(start, start + length);
}

function setStatusMessage(message, isError = false) {
  const line = $('status-message');
  line.textContent = message;
  line.classList.toggle('error', isError);
}

// ---------------------------------------------------------------- events

/** Keeps the page in step with the host's events. */
function onMessage(message) {
  switch (message.type) {
    case 'workspace':
      // A refresh republishes the revision the iframe may already show: reload it so the
      // iframe acknowledges it again.
      if (message.refresh) showPreview(message.revision, true);
      // Otherwise the preview follows the announced revision at once rather than after the
      // state read (a stylesheet-only revision is swapped in, with the stylesheets the
      // announcement carried, while the read is in flight).
      // A revision announced without stylesheets changed more than them: it reloads at once.
      else showPreview(message.revision, false, message.live, message.live?.since ?? message.revision);
      refreshState();
      refreshChanges();
      approvals.workspaceMoved();
      break;
    case 'hello': refreshState(); break;
    case 'approvals': approvals.render(message.pending); break;
    case 'trace': trace.onRow(message.row); break;
    case 'agent': composer.onAgentEvent(message.run); break;
    case 'agentStream': composer.onStreamEvent(message); break;
    case 'settings': applySettings(message.settings); break;
    case 'mcpServers': applyMcpServers(message); break;
    case 'surface': onSurfaceEvent(message); break;
    case 'lagged': refreshState(); trace.load(); break;
    default: break;
  }
}

function onConnection(connected) {
  if (connected) setStatusMessage('');
  else setStatusMessage('Connection to the studio host lost; reconnecting…', true);
}

// ---------------------------------------------------------------- history, export

/** Workspace undo or redo through the registry: the Undo and Redo buttons, Ctrl+Z and Ctrl+Shift+Z (Ctrl+Y) in the editor. */
async function historyStep(tool) {
  if (!(await flushDraft())) return;
  const result = await callTool(tool, { expectedRevision: state.status.revision });
  const done = tool === 'workspace.undo' ? 'Undone' : 'Redone';
  if (!reportApplied(result, done)) {
    setStatusMessage(result.isError ? `${result.error.code}: ${result.error.message}` : `${done} · revision ${result.structuredContent.revision}`, Boolean(result.isError));
  }
  await refreshState({ reloadEditor: true });
}

async function exportHtml() {
  if (!(await flushDraft())) return;
  try {
    const response = await fetch('/api/export', { headers: { 'x-studio-token': studioToken } });
    if (!response.ok) {
      // Coded refusals (e.g. STUDIO_EXPORT_OUTPUT_LIMIT) say what went wrong; show that.
      const error = await response.json().then((body) => body.error).catch(() => null);
      throw new Error(error ? `${error.code}: ${error.message}` : `HTTP ${response.status}`);
    }
    downloadBlob('standalone.html', await response.blob());
    setStatusMessage(`Exported revision ${state.status.revision} as standalone.html.`);
  } catch (error) {
    setStatusMessage(`Export failed: ${error.message}`, true);
  }
}

// ---------------------------------------------------------------- keyboard

function onGlobalKeydown(event) {
  // Dialogs own the keyboard while open (their Esc and Tab rules are in lib/modal.js).
  if (modalOpen() || event.defaultPrevented) return;
  const key = event.key.toLowerCase();
  if (commandKey(event) && event.shiftKey && key === 'f') {
    event.preventDefault();
    focusWorkspaceSearch();
  } else if (commandKey(event) && key === 'f') {
    event.preventDefault();
    openFind();
  } else if (commandKey(event) && key === 'g') {
    event.preventDefault();
    findStep(event.shiftKey);
  } else if (commandKey(event) && key === 's') {
    event.preventDefault();
    save();
  } else if (event.key === 'Escape') {
    if (exitDesignMode()) return;
    if (exitFullscreen()) return;
    if (approvals.denyFirst()) event.preventDefault();
  }
}

// ---------------------------------------------------------------- start

/** Follows the agent run: the editor, the explorer and the trace's Clear are locked while it runs. */
function lockEditor() {
  trace.setRunActive(busy());
  updateEditorEnabled();
  if (state.status) {
    renderTree();
    renderHeader();
  }
}

Object.assign(actions, {
  refreshState,
  flushDraft,
  openFile,
  history: (step) => (busy() ? undefined : historyStep(step === 'undo' ? 'workspace.undo' : 'workspace.redo')),
  status: setStatusMessage,
  say: composer.say,
  settingsChanged: composer.applySettings,
});

wireEditor();
wireUnload();
wireExplorer();
wireUpload();
wireRecipes({ select: $('recipe-select'), hint: $('recipe-hint'), prompt: $('prompt') });
wireSearch();
wireChanges();
wirePreview();
wireDesign();
// The Changes tab reads the host's diff when it is shown.
wireTabs(document.querySelector('.tabs'), (name) => name === 'changes' && refreshChanges());
wireSettings();
wireMcpServers({ toolsChanged: () => catalog.load() });
$('export-button').addEventListener('click', exportHtml);
$('undo-button').addEventListener('click', () => historyStep('workspace.undo'));
$('redo-button').addEventListener('click', () => historyStep('workspace.redo'));
document.addEventListener('keydown', onGlobalKeydown);
applyDeepLink($('prompt'), composer.say);
await refreshState({ reloadEditor: true });
await restoreKeptDraft();
// A restarted studio refuses this page's token: the kit reloads the page with the new one (the
// editor's unsent draft is kept in the tab and re-applied on load).
connectEvents({ surface: 'workspace', onMessage, onConnection });
await Promise.all([trace.load(), catalog.load()]);
document.body.dataset.ready = 'true';
