// The Live Code Editor page (/editor): the editor's files, its open document in a textarea, the
// scenario and reset controls, folder saves, the sandboxed preview of the current document
// revision, and the shared side panels (chat, editor.* palette, trace, approvals) from the page
// kit. The host owns both clocks: the workspace revision (files) and the document revision (what
// the preview shows). Every change is an editor.* tool call (direct from the page, or from an
// agent run) and the page follows the host's surface events.

import { callTool, isCommitted, unconfirmedText } from '../lib/surface.js';
import { $ } from '../lib/dom.js';
import { keptDraft } from '../lib/launch.js';
import { confirmAction, modalOpen } from '../lib/modal.js';
import { createSurfacePage } from '../lib/surface-page.js';
import { createDocumentEditor } from './document.js';
import { createFileList } from './files.js';
import { createHeader, wireFolderForm } from './header.js';
import { createSaves } from './saves.js';
import { sampleArguments } from './samples.js';

const SURFACE = 'editor';

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
  onStale: () => refresh(),
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

const page = createSurfacePage({
  surface: SURFACE,
  unreadable: 'the editor',
  render,
  revisionOf: (view) => view.status.documentRevision,
  onSurface: (data, view) => {
    if (!view) return;
    // Shown at once; the re-read that follows (coalesced with any read in flight) keeps the
    // page on the newest state even when an older read answers after this event.
    header.renderPreview(data.preview);
    refresh();
  },
  sample: (name, view) => sampleArguments(name, view),
  doneText: (result) => {
    const outcome = result.structuredContent;
    return outcome?.documentRevision !== undefined ? ` · document r${outcome.documentRevision}, workspace r${outcome.workspaceRevision}` : '';
  },
  appliedText: (result) => `document ${unconfirmedText(result)}`,
});
const { status, fail, refresh } = page;
const currentView = () => page.view();

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
    const guard = guarded ? { expectedDocumentRevision: currentView()?.status?.documentRevision } : {};
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
  const path = currentView()?.status?.activePath ?? 'the document';
  const confirmed = await confirmAction({
    title: `Reset ${path}?`,
    message: `Replaces ${path} with the ${currentView()?.status?.scenario ?? 'selected'} scenario's example. Unsaved edits of this file are lost.`,
    confirmLabel: 'Reset document',
    trigger,
  });
  if (confirmed) documentAction(`Reset ${path}`, 'editor.resetDocument', () => ({}), { guarded: true });
  else status('Reset cancelled.');
});

// A direct call, so no approval; the page's own dialog confirms that the edits go.
$('editor-revert').addEventListener('click', async (event) => {
  const path = currentView()?.status?.activePath;
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
  currentView,
  beforeOpen: () => settleDraft(),
  onOpened: () => refresh(),
});

// ---------------------------------------------------------------- editor state

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
}

// ---------------------------------------------------------------- start

/** Re-applies the draft this tab kept when the studio restarted (lib/launch.js) to its file. */
async function restoreKeptDraft() {
  const kept = keptDraft(SURFACE);
  const view = currentView();
  if (!kept || !view) return;
  if (kept.path !== view.document?.activePath) {
    await callTool('editor.openFile', { path: kept.path }).catch(() => null);
    await refresh();
  }
  documentEditor.restore(kept);
}

await page.start({
  greeting: 'Ask for a change (replace "Step" with "Next", use the greeting scenario, save all), or run an editor.* tool from the Tools tab. Agent mutations and saves wait for your approval.',
  // Typing that has not reached the host yet (the pause before editor.setDocument, or a stale
  // draft) would be lost by leaving: the browser asks first.
  hasUnsentWork: () => documentEditor.hasDraft(),
  afterRead: restoreKeptDraft,
  loads: () => [saves.loadUnknown()],
});
