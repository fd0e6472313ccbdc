// The source editor: one overlay surface (a transparent textarea over highlighted and
// search-mark layers), editor tabs, in-file search and the line/column/budget status.
// Typed text is a local draft, flushed through workspace.writeFile on idle, blur, tool and
// save boundaries.

import { callTool, downloadWorkspaceFile, isCommitted, unconfirmedText } from './api.js';
import { $, el, escapeHtml } from './dom.js';
import { highlight } from './highlight.js';
import { offerRefresh } from './preview.js';
import { DRAFT_IDLE_MS, MAX_SOURCE_CHARS, actions, busy, fileAt, state } from './store.js';

let draftTimer = null;
let loadedPath = null;
const find = { query: '', matches: [], index: -1 };

/** Renders the highlight and search layers for the textarea's text. */
function renderLayers() {
  const editor = $('editor');
  const file = fileAt(state.activePath);
  const text = editor.value;
  // A trailing newline needs one more visible line in the <pre> layers.
  const tail = text.endsWith('\n') ? ' ' : '';
  $('code-highlight').innerHTML = highlight(text, file?.language ?? 'plaintext') + tail;
  $('code-marks').innerHTML = renderMarks(text) + tail;
  renderGutter(text);
  syncScroll();
}

function renderMarks(text) {
  if (!find.matches.length) return escapeHtml(text);
  let html = '';
  let last = 0;
  find.matches.forEach((start, index) => {
    const end = start + find.query.length;
    html += escapeHtml(text.slice(last, start));
    html += `<mark${index === find.index ? ' class="current"' : ''}>${escapeHtml(text.slice(start, end))}</mark>`;
    last = end;
  });
  return html + escapeHtml(text.slice(last));
}

let gutterLines = 0;

/** Line numbers, rebuilt only when the line count changes. */
function renderGutter(text) {
  const lines = text.split('\n').length;
  if (lines === gutterLines) return;
  gutterLines = lines;
  $('code-gutter').textContent = Array.from({ length: lines }, (_, index) => index + 1).join('\n');
}

function syncScroll() {
  const editor = $('editor');
  $('code-gutter').scrollTop = editor.scrollTop;
  for (const layer of [$('code-highlight'), $('code-marks')]) {
    layer.scrollTop = editor.scrollTop;
    layer.scrollLeft = editor.scrollLeft;
  }
}

/** Updates line, column, line count and the character budget. */
export function updateEditorMeta() {
  const editor = $('editor');
  const before = editor.value.slice(0, editor.selectionStart);
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  $('cursor-pos').textContent = `Ln ${line}, Col ${column}`;
  $('line-count').textContent = `${editor.value.split('\n').length} lines`;
  const count = editor.value.length;
  const over = count > MAX_SOURCE_CHARS;
  $('char-count').textContent = `${count.toLocaleString('en-US')} / ${MAX_SOURCE_CHARS.toLocaleString('en-US')}${over ? ' · over budget' : ''}`;
  $('char-count').classList.toggle('over', over);
  $('code-surface').classList.toggle('over-budget', over);
}

/** Shows a message in the editor status line. */
export function showEditorStatus(message, isError = false) {
  const line = $('editor-status');
  line.textContent = message;
  line.title = message;
  line.classList.toggle('error', isError);
}

/** Enables the editor when a text file is active and no agent run is in flight. */
export function updateEditorEnabled() {
  const file = fileAt(state.activePath);
  $('editor').disabled = busy() || !file || file.kind !== 'text';
  $('code-surface').classList.toggle('locked', busy());
}

/** Loads the active file into the editor (keeping the caret when the text did not change). */
export async function loadActiveFile() {
  const editor = $('editor');
  const file = fileAt(state.activePath);
  $('editor-path').textContent = state.activePath ?? 'No file open';
  if (!file || file.kind !== 'text') {
    editor.value = file ? `${file.path} is a ${file.mimeType} asset (${file.sizeBytes.toLocaleString('en-US')} bytes); use Download to get it.` : '';
    state.source = '';
  } else {
    const result = await callTool('workspace.readFile', { path: state.activePath });
    if (result.isError) {
      showEditorStatus(`${result.error.code}: ${result.error.message}`, true);
      return;
    }
    if (state.draft) return; // the person typed while the read was in flight
    state.source = result.structuredContent.source;
    state.sourceRevision = result.structuredContent.revision;
    if (editor.value !== state.source) editor.value = state.source;
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
  updateEditorMeta();
  recomputeMatches(false);
  renderLayers();
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

/** Writes in flight: their text is not stored yet, though `state.draft` is already cleared. */
let writing = 0;

/** Whether typed text has not reached the host yet (a draft, or its write still in flight). */
export function draftPending() {
  const draft = state.draft;
  return writing > 0 || (draft !== null && !(draft.source === state.source && draft.path === state.activePath));
}

async function flushOnce(keepalive) {
  clearTimeout(draftTimer);
  if (state.draft === null) return true;
  const { path, source } = state.draft;
  state.draft = null;
  if (source === state.source && path === state.activePath) return true;
  showEditorStatus('Writing…');
  writing += 1;
  // keepalive lets the write outlive the page when it is sent from pagehide.
  const result = await callTool('workspace.writeFile', { path, source, expectedRevision: state.status.revision }, { keepalive })
    .finally(() => { writing -= 1; });
  if (isCommitted(result)) {
    // Stored: only the preview did not confirm it. Never kept as unsaved, never written again.
    state.source = source;
    state.status.revision = result.error.details.revision;
    showEditorStatus(`Written · ${unconfirmedText(result)}`);
    offerRefresh(true);
    return true;
  }
  if (result.isError) {
    // Keep the text: a refused write must not lose what the person typed.
    if (state.draft === null) state.draft = { path, source };
    showEditorStatus(`${result.error.code}: ${result.error.message} Your text is kept in the editor, unsaved.`, true);
    await actions.refreshState();
    renderTabs();
    return false;
  }
  state.source = source;
  state.status.revision = result.structuredContent.revision;
  showEditorStatus(`Written · revision ${result.structuredContent.revision}`);
  return true;
}

function onInput() {
  const editor = $('editor');
  state.draft = { path: state.activePath, source: editor.value };
  updateEditorMeta();
  recomputeMatches(false);
  renderLayers();
  renderTabs();
  clearTimeout(draftTimer);
  draftTimer = setTimeout(actions.flushDraft, DRAFT_IDLE_MS);
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

function recomputeMatches(keepPosition = true) {
  const text = $('editor').value.toLowerCase();
  const query = find.query.toLowerCase();
  find.matches = [];
  if (query) {
    for (let at = text.indexOf(query); at >= 0 && find.matches.length < 10000; at = text.indexOf(query, at + query.length)) {
      find.matches.push(at);
    }
  }
  if (!keepPosition || find.index >= find.matches.length) find.index = find.matches.length ? 0 : -1;
  $('find-count').textContent = find.matches.length ? `${find.index + 1} of ${find.matches.length}` : (query ? 'No results' : '0 of 0');
}

/** Moves to the next (or previous) match and scrolls it into view. */
export function findStep(backwards = false) {
  if (!find.matches.length) return;
  const count = find.matches.length;
  find.index = (find.index + (backwards ? count - 1 : 1)) % count;
  revealMatch();
}

function revealMatch() {
  const editor = $('editor');
  const start = find.matches[find.index];
  $('find-count').textContent = `${find.index + 1} of ${find.matches.length}`;
  editor.setSelectionRange(start, start + find.query.length);
  const lineHeight = parseFloat(getComputedStyle(editor).lineHeight) || 20;
  const line = editor.value.slice(0, start).split('\n').length - 1;
  editor.scrollTop = Math.max(0, line * lineHeight - editor.clientHeight / 3);
  updateEditorMeta();
  renderLayers();
}

/** Opens the find bar with the current selection (if any) as the query. */
export function openFind() {
  const editor = $('editor');
  const selected = editor.value.slice(editor.selectionStart, editor.selectionEnd);
  $('find-bar').hidden = false;
  if (selected && !selected.includes('\n')) $('find-input').value = selected;
  $('find-input').focus();
  $('find-input').select();
  find.query = $('find-input').value;
  recomputeMatches(false);
  renderLayers();
}

function closeFind() {
  $('find-bar').hidden = true;
  find.query = '';
  recomputeMatches(false);
  renderLayers();
  $('editor').focus();
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

/** Wires the editor, tab and find controls. */
export function wireEditor() {
  const editor = $('editor');
  editor.addEventListener('input', onInput);
  editor.addEventListener('blur', () => actions.flushDraft());
  editor.addEventListener('scroll', syncScroll);
  for (const event of ['keyup', 'click', 'select']) editor.addEventListener(event, updateEditorMeta);
  editor.addEventListener('keydown', (event) => {
    // Tab inserts two spaces inside the editor; Esc leaves it so keyboard users are not trapped.
    if (event.key === 'Tab' && !event.ctrlKey && !event.metaKey && !event.altKey && !event.shiftKey) {
      event.preventDefault();
      document.execCommand('insertText', false, '  ');
    } else if (event.key === 'Escape') {
      editor.blur();
    }
  });
  $('find-button').addEventListener('click', openFind);
  $('find-close').addEventListener('click', closeFind);
  $('find-next').addEventListener('click', () => findStep(false));
  $('find-prev').addEventListener('click', () => findStep(true));
  $('find-input').addEventListener('input', () => {
    find.query = $('find-input').value;
    recomputeMatches(false);
    if (find.matches.length) revealMatch(); else renderLayers();
  });
  $('find-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      findStep(event.shiftKey);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      closeFind();
    }
  });
  $('download-file-button').addEventListener('click', downloadActiveFile);
}
