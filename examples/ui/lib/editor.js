// The source editor of `/`: the shared code editor (lib/code-editor.js: highlighted overlay,
// in-file find, line/column/budget status) over `#editor`, and the editor tabs. Typed text is a local draft, flushed through workspace.writeFile on idle, blur, tool and
// save boundaries.

import { callTool, downloadWorkspaceFile, isCommitted, unconfirmedText } from './api.js';
import { keepDraft, keptDraft } from './launch.js';
import { $, el } from './dom.js';
import { createCodeEditor } from './code-editor.js';
import { merge3 } from './merge.js';
import { offerRefresh } from './preview.js';
import { MAX_SOURCE_CHARS, actions, fileAt, state, typing } from './store.js';

let draftTimer = null;
let loadedPath = null;
/** The shared code editor over the page's `#editor` textarea (built by wireEditor). */
let code = null;

/** Shows a message in the editor status line. */
export function showEditorStatus(message, isError = false) {
  const line = $('editor-status');
  line.textContent = message;
  line.title = message;
  line.classList.toggle('error', isError);
}

/**
 * Enables the editor when a text file is active. An agent run does not lock it: the person
 * keeps typing, their writes merge with the run's (writeMerging), and an approved patch is
 * rebased onto their edits by the host (host/review.rs).
 */
export function updateEditorEnabled() {
  const file = fileAt(state.activePath);
  $('editor').disabled = !file || file.kind !== 'text';
}

/** Loads the active file into the editor (keeping the caret when the text did not change). */
export async function loadActiveFile() {
  const editor = $('editor');
  const file = fileAt(state.activePath);
  $('editor-path').textContent = state.activePath ?? 'No file open';
  if (!file || file.kind !== 'text') {
    code.setText(file ? `${file.path} is a ${file.mimeType} asset (${file.sizeBytes.toLocaleString('en-US')} bytes); use Download to get it.` : '');
    state.source = '';
  } else {
    // Another file: no typing until its text is shown, or keys typed meanwhile would land in
    // the previous file's text under this file's name (and be written there).
    const switching = loadedPath !== state.activePath;
    if (switching) editor.disabled = true;
    const result = await callTool('workspace.readFile', { path: state.activePath });
    if (switching) updateEditorEnabled();
    if (result.isError) {
      showEditorStatus(`${result.error.code}: ${result.error.message}`, true);
      return;
    }
    // The person typed while the read was in flight, or a write of theirs has not settled yet.
    if (!switching && (state.draft || writing > 0 || conflict)) return;
    state.source = result.structuredContent.source;
    state.sourceRevision = result.structuredContent.revision;
    code.setText(state.source);
  }
  if (loadedPath !== state.activePath) {
    // A newly opened file starts at its top, not where assigning the text left the caret.
    loadedPath = state.activePath;
    editor.setSelectionRange(0, 0);
    editor.scrollTop = 0;
    editor.scrollLeft = 0;
  }
  addTab(state.activePath);
  updateEditorEnabled();
  code.refresh();
  renderTabs();
}

let flushing = Promise.resolve(true);

/**
 * Flushes the draft through workspace.writeFile; resolves to whether it was written. Flushes
 * run one after another, so a save that follows a blur waits for the blur's write.
 */
export function flushDraft({ keepalive = false } = {}) {
  const once = () => flushOnce(keepalive);
  flushing = flushing.then(once, once);
  return flushing;
}

/**
 * Settles once every draft write already started has finished (its text stored and the
 * revision moved, or the draft put back). While a write is in flight `state.draft` is cleared
 * but `state.source` is not updated yet: readers of the workspace wait for this first.
 */
export function draftWritesSettled() {
  return flushing;
}

/** Writes in flight: their text is not stored yet, though `state.draft` is already cleared. */
let writing = 0;

/** Whether typed text has not reached the host yet (a draft, or its write still in flight). */
export function draftPending() {
  const draft = state.draft;
  return writing > 0 || (draft !== null && !(draft.source === state.source && draft.path === state.activePath));
}

/** Merge-and-retry rounds one flush makes before it leaves the text unsaved and says so. */
const MAX_MERGE_ROUNDS = 8;

async function flushOnce(keepalive) {
  clearTimeout(draftTimer);
  if (state.draft === null) return true;
  const { path, source } = state.draft;
  state.draft = null;
  if (source === state.source && path === state.activePath) return true;
  showEditorStatus('Writing…');
  writing += 1;
  try {
    return await writeMerging(path, source, keepalive);
  } finally {
    writing -= 1;
  }
}

/**
 * Writes `source` (typed over `state.source`) guarded by the revision that text was read at, so
 * a write from elsewhere in between is never overwritten: on a revision conflict the file is
 * read again, this tab's changes are merged onto it (lib/merge.js), the editor shows the merge
 * with the caret where it was, and the merge is written. Overlapping changes stop with the
 * conflict bar; nothing is ever dropped.
 */
async function writeMerging(path, source, keepalive) {
  let ours = source;
  for (let round = 0; round < MAX_MERGE_ROUNDS; round += 1) {
    // keepalive lets the write outlive the page when it is sent from pagehide.
    const result = await callTool('workspace.writeFile', { path, source: ours, expectedRevision: state.sourceRevision ?? undefined }, { keepalive })
      .catch((error) => ({ isError: true, error }));
    if (result.error?.code !== 'WORKSPACE_REVISION_CONFLICT') return settleWrite(path, ours, result);
    const merged = await mergeWithCurrent(path, ours);
    if (merged === null) return false;
    ours = merged;
  }
  return keepUnsaved(path, ours, { code: 'WORKSPACE_REVISION_CONFLICT', message: 'The file kept changing while this tab wrote it.' });
}

/** Records a write's outcome; a refused write keeps the text in the editor, unsaved. */
async function settleWrite(path, source, result) {
  if (isCommitted(result)) {
    // Stored: only the preview did not confirm it. Never kept as unsaved, never written again.
    wrote(source, result.error.details.revision);
    showEditorStatus(`Written · ${unconfirmedText(result)}`);
    offerRefresh(true);
    return true;
  }
  if (result.isError) return keepUnsaved(path, source, result.error);
  wrote(source, result.structuredContent.revision);
  if (state.draft === null) keepDraft(SURFACE, null);
  showEditorStatus(`Written · revision ${result.structuredContent.revision}`);
  return true;
}

function wrote(source, revision) {
  state.source = source;
  state.sourceRevision = revision;
  state.status.revision = Math.max(state.status.revision, revision);
}

async function keepUnsaved(path, source, error) {
  if (state.draft === null) state.draft = { path, source };
  showEditorStatus(`${error.code ?? 'WRITE_FAILED'}: ${error.message} Your text is kept in the editor, unsaved.`, true);
  await actions.refreshState();
  renderTabs();
  return false;
}

/**
 * Merges `ours` (typed over `state.source`) onto the file as it is now and moves the editor's
 * base there. Returns the merged text to write, or null when the changes overlap (the conflict
 * bar then shows both versions) or the file cannot be read.
 */
async function mergeWithCurrent(path, ours) {
  const read = await callTool('workspace.readFile', { path }).catch((error) => ({ isError: true, error }));
  if (read.isError) {
    await keepUnsaved(path, ours, read.error);
    return null;
  }
  const { source: theirs, revision } = read.structuredContent;
  const merged = merge3(state.source, ours, theirs);
  // Whatever the person typed while this write was in flight rides on top of the merge.
  const shown = merged.conflict ? merged : merge3(ours, $('editor').value, merged.text);
  if (shown.conflict) {
    state.draft = { path, source: $('editor').value };
    showConflict(path, theirs, revision);
    return null;
  }
  state.source = theirs;
  state.sourceRevision = revision;
  if (path === state.activePath) code.setText(shown.text);
  state.draft = shown.text === merged.text ? null : { path, source: shown.text };
  return merged.text;
}

// ---------------------------------------------------------------- conflicts

/** The other version of a conflicting file, while the conflict bar shows it. */
let conflict = null;

/** Shows the conflict bar: both versions, and the two ways out. Typing stays unsaved meanwhile. */
function showConflict(path, theirs, revision) {
  conflict = { path, theirs, revision };
  $('editor-conflict-text').textContent = `${path} was changed elsewhere where you were typing. Your version stays in the editor, unsaved, until you choose.`;
  $('editor-conflict-theirs').textContent = theirs;
  $('editor-conflict').hidden = false;
  showEditorStatus('Conflict: choose a version in the bar above the editor.', true);
  renderTabs();
}

/** Writes the editor's text over the other version (the person chose theirs to go). */
async function keepMine() {
  if (!conflict) return;
  state.source = conflict.theirs;
  state.sourceRevision = conflict.revision;
  state.draft = { path: conflict.path, source: $('editor').value };
  closeConflict();
  await actions.flushDraft();
}

/** Drops this tab's unsaved text for the other version. */
function takeTheirs() {
  if (!conflict) return;
  state.source = conflict.theirs;
  state.sourceRevision = conflict.revision;
  state.draft = null;
  keepDraft(SURFACE, null);
  code.setText(conflict.theirs);
  closeConflict();
  showEditorStatus(`Showing the other version of ${state.activePath}; your unsaved text was dropped.`);
}

function closeConflict() {
  conflict = null;
  $('editor-conflict').hidden = true;
  renderTabs();
}

const SURFACE = 'workspace';

/**
 * Re-applies the draft this tab kept when the studio restarted (lib/launch.js): dropped when
 * the file already holds it, written when the file is still the version it was typed over,
 * else put back in the editor unsaved, with a line saying the file changed since. Never
 * dropped silently.
 */
export async function restoreKeptDraft() {
  const kept = keptDraft(SURFACE);
  if (!kept || kept.path !== state.activePath || state.draft) return;
  if (kept.text === state.source) {
    keepDraft(SURFACE, null);
    return;
  }
  code.setText(kept.text);
  state.draft = { path: kept.path, source: kept.text };
  renderTabs();
  if (kept.baseSource === state.source) {
    showEditorStatus('The studio restarted: writing your unsent edit…');
    await actions.flushDraft();
    return;
  }
  showEditorStatus(`The studio restarted and ${kept.path} changed since your unsent edit: your text is back in the editor, not written yet. It is written over the current version when you next type, leave the editor or save; reopen the file to discard it.`, true);
}

function onInput() {
  state.draft = { path: state.activePath, source: $('editor').value };
  keepDraft(SURFACE, { path: state.activePath, text: state.draft.source, baseSource: state.source, baseRevision: state.sourceRevision });
  renderTabs();
  clearTimeout(draftTimer);
  // While the conflict bar is up, nothing is written until the person chooses.
  if (!conflict) draftTimer = setTimeout(actions.flushDraft, typing.draftIdleMs);
}

// ---------------------------------------------------------------- tabs

function addTab(path) {
  if (path && !state.openTabs.includes(path)) state.openTabs.push(path);
}

/** Drops tabs of files that no longer exist. */
export function pruneTabs() {
  state.openTabs = state.openTabs.filter((path) => fileAt(path));
}

/** Renders the open-file tabs with their unsaved markers. */
export function renderTabs() {
  pruneTabs();
  const bar = $('editor-tabs');
  bar.replaceChildren();
  for (const path of state.openTabs) {
    const file = fileAt(path);
    const active = path === state.activePath;
    const unsaved = file?.dirty || state.draft?.path === path;
    const tab = el('div', { className: `editor-tab${active ? ' active' : ''}`, dataset: { path } },
      el('button', {
        type: 'button', className: 'tab-label', textContent: path.split('/').at(-1), title: path,
        attrs: { role: 'tab', 'aria-selected': String(active) },
        on: { click: () => actions.openFile(path) },
      }),
      unsaved ? el('span', { className: 'unsaved', textContent: '●', title: 'Unsaved changes', attrs: { 'aria-label': 'unsaved' } }) : null,
      state.openTabs.length < 2 ? null : el('button', {
        type: 'button', className: 'tab-close', textContent: '×', title: `Close ${path}`,
        attrs: { 'aria-label': `Close ${path}` },
        on: { click: () => closeTab(path) },
      }));
    bar.append(tab);
  }
}

async function closeTab(path) {
  const index = state.openTabs.indexOf(path);
  if (index < 0) return;
  if (path === state.activePath) await actions.flushDraft();
  state.openTabs.splice(index, 1);
  if (path === state.activePath) {
    const next = state.openTabs[Math.min(index, state.openTabs.length - 1)];
    if (next) {
      await actions.openFile(next);
      return;
    }
  }
  renderTabs();
}

// ---------------------------------------------------------------- in-file search

/** Moves to the next (or previous) match and scrolls it into view. */
export function findStep(backwards = false) {
  code.findStep(backwards);
}

/** Opens the find bar with the current selection (if any) as the query. */
export function openFind() {
  code.openFind();
}

/** Selects `start..end` in the editor and scrolls it into view. */
export function selectRange(start, end) {
  code.selectRange(start, end);
}

/** Downloads the active file through workspace.downloadFile. */
export async function downloadActiveFile() {
  await actions.flushDraft();
  if (!state.activePath) return;
  const result = await callTool('workspace.downloadFile', { path: state.activePath });
  if (result.isError) {
    showEditorStatus(`${result.error.code}: ${result.error.message}`, true);
    return;
  }
  const file = result.structuredContent;
  downloadWorkspaceFile(file);
  showEditorStatus(`Downloaded ${file.fileName} (${file.sizeBytes.toLocaleString('en-US')} bytes)`);
}

/** Builds the shared code editor over `#editor` and wires the editor and tab controls. */
export function wireEditor() {
  code = createCodeEditor({
    textarea: $('editor'),
    language: () => fileAt(state.activePath)?.language ?? 'plaintext',
    maxChars: MAX_SOURCE_CHARS,
    message: $('editor-status'),
    onHistory: (step) => actions.history(step),
  });
  const editor = $('editor');
  editor.addEventListener('input', onInput);
  editor.addEventListener('blur', () => actions.flushDraft());
  $('find-button').addEventListener('click', openFind);
  $('download-file-button').addEventListener('click', downloadActiveFile);
  $('editor-conflict-keep-mine').addEventListener('click', keepMine);
  $('editor-conflict-take-theirs').addEventListener('click', takeTheirs);
}
