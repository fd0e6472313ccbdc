// The explorer: a sorted, nested file tree with collapsible folders and unsaved markers, and
// the file and folder commands (new, rename, delete, save, reload, disconnect, open by path).
// Every command is a registry tool call; destructive ones confirm in the page first.

import { api, callTool, isCommitted } from './api.js';
import { $, el } from './dom.js';
import { confirmAction, openModal } from './modal.js';
import { reportApplied } from './preview.js';
import { skippedReport, skippedSummary } from './skipped.js';
import { MAX_SOURCE_CHARS, actions, busy, fileAt, state } from './store.js';

const collapsed = new Set();

/** A nested tree of the workspace paths: directories first, then files, each sorted by name. */
export function buildTree(files) {
  const root = { dirs: new Map(), files: [] };
  for (const file of files) {
    const parts = file.path.split('/');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      if (!node.dirs.has(part)) node.dirs.set(part, { dirs: new Map(), files: [] });
      node = node.dirs.get(part);
    }
    node.files.push(file);
  }
  return root;
}

function renderNode(node, prefix, depth, into) {
  const byName = (a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' });
  for (const name of [...node.dirs.keys()].sort(byName)) {
    const path = `${prefix}${name}`;
    const open = !collapsed.has(path);
    into.append(el('li', {
      className: 'dir', tabIndex: -1,
      attrs: { role: 'treeitem', 'aria-expanded': String(open), 'aria-level': String(depth + 1) },
      dataset: { dir: path },
      style: `padding-left:${10 + depth * 14}px`,
      on: { click: () => toggleDir(path), keydown: (event) => event.key === 'Enter' && toggleDir(path) },
    }, el('span', { className: 'twisty', textContent: open ? '▾' : '▸', attrs: { 'aria-hidden': 'true' } }), `${name}/`));
    if (open) renderNode(node.dirs.get(name), `${path}/`, depth + 1, into);
  }
  for (const file of [...node.files].sort((a, b) => byName(a.path, b.path))) {
    const unsaved = file.dirty || state.draft?.path === file.path;
    const selected = file.path === state.activePath;
    into.append(el('li', {
      className: `file lang-${file.language}`, tabIndex: selected ? 0 : -1,
      attrs: { role: 'treeitem', 'aria-selected': String(selected), 'aria-level': String(depth + 1), title: file.path },
      dataset: { path: file.path },
      style: `padding-left:${10 + depth * 14 + 14}px`,
      on: {
        click: () => actions.openFile(file.path),
        keydown: (event) => event.key === 'Enter' && actions.openFile(file.path),
      },
    }, el('span', { className: 'name', textContent: file.path.split('/').at(-1) }),
    unsaved ? el('span', { className: 'unsaved', textContent: '●', title: 'Unsaved changes', attrs: { 'aria-label': 'unsaved changes' } }) : null,
    state.draft?.path === file.path && state.draft.source.length > MAX_SOURCE_CHARS ? el('span', { className: 'over', textContent: 'over budget' }) : null));
  }
}

function toggleDir(path) {
  if (collapsed.has(path)) collapsed.delete(path); else collapsed.add(path);
  renderTree();
  document.querySelector(`[data-dir="${CSS.escape(path)}"]`)?.focus();
}

/** Arrow keys move between tree items; Left/Right collapse and expand folders. */
function onTreeKeydown(event) {
  const items = [...$('file-tree').querySelectorAll('[role="treeitem"]')];
  const index = items.indexOf(document.activeElement);
  if (index < 0) return;
  const current = items[index];
  let next = null;
  if (event.key === 'ArrowDown') next = items[index + 1];
  else if (event.key === 'ArrowUp') next = items[index - 1];
  else if (event.key === 'Home') next = items[0];
  else if (event.key === 'End') next = items.at(-1);
  else if (current.dataset.dir && event.key === 'ArrowLeft' && current.getAttribute('aria-expanded') === 'true') toggleDir(current.dataset.dir);
  else if (current.dataset.dir && event.key === 'ArrowRight' && current.getAttribute('aria-expanded') === 'false') toggleDir(current.dataset.dir);
  else return;
  event.preventDefault();
  if (next) {
    for (const item of items) item.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
}

/** Renders the explorer tree and the folder controls' enabled state. */
export function renderTree() {
  const tree = $('file-tree');
  tree.replaceChildren();
  renderNode(buildTree(state.files), '', 0, tree);
  const folder = state.status?.folder ?? {};
  $('save-button').textContent = folder.connected ? 'Save to folder' : 'Save';
  $('save-button').classList.toggle('primary', Boolean(state.status?.isDirty));
  $('save-button').title = folder.connected ? 'Write dirty files to the linked folder (Ctrl+S)' : 'Save a checkpoint of the browser workspace (Ctrl+S)';
  const running = busy();
  $('reload-folder-button').disabled = running || !folder.reloadAvailable;
  $('disconnect-folder-button').disabled = running || !folder.connected;
  const active = fileAt(state.activePath);
  $('rename-button').disabled = running || !active;
  $('delete-button').disabled = running || !active;
  $('new-file-button').disabled = running;
  $('save-button').disabled = running;
  $('open-folder-button').disabled = running;
}

function reportSkipped(what, outcome) {
  const text = skippedReport(what, outcome);
  if (text) actions.say(text, 'info');
}

function report(result, success) {
  if (reportApplied(result, success.replace(/\.$/, ''))) return true;
  if (result.isError) {
    actions.status(`${result.error.code}: ${result.error.message}`, true);
    return false;
  }
  actions.status(success);
  return true;
}

/** Saves through workspace.saveAll (linked folder) or workspace.saveCheckpoint. */
export async function save() {
  if (!(await actions.flushDraft())) return;
  const linked = state.status.folder?.connected;
  const result = await callTool(linked ? 'workspace.saveAll' : 'workspace.saveCheckpoint', { expectedRevision: state.status.revision });
  report(result, linked ? 'Saved to the folder.' : 'Checkpoint saved.');
  await actions.refreshState();
}

async function reloadFolder(trigger) {
  await actions.flushDraft();
  if (state.status.isDirty) {
    const ok = await confirmAction({
      title: 'Discard unsaved changes?',
      message: `Reloading reads the folder again and discards ${state.status.dirtyPaths.length} unsaved file(s).`,
      confirmLabel: 'Reload and discard',
      trigger,
    });
    if (!ok) return;
  }
  // discardChanges only after the person confirmed the loss above.
  const result = await callTool('workspace.reloadFolder', { expectedRevision: state.status.revision, discardChanges: state.status.isDirty });
  if (report(result, 'Folder reloaded.')) reportSkipped('The reload', result.structuredContent);
  await actions.refreshState({ reloadEditor: true });
}

async function disconnectFolder() {
  report(await callTool('workspace.disconnectFolder', {}), 'Folder disconnected; the workspace stays in the studio.');
  await actions.refreshState();
}

async function openFolder(trigger) {
  const path = $('folder-path').value.trim();
  if (!path) {
    actions.status('Type the path of a folder on this machine first.', true);
    $('folder-path').focus();
    return;
  }
  await actions.flushDraft();
  if (state.status.isDirty) {
    const ok = await confirmAction({
      title: 'Replace the workspace?',
      message: `Opening ${path} replaces the workspace and discards ${state.status.dirtyPaths.length} unsaved file(s).`,
      confirmLabel: 'Open folder',
      trigger,
    });
    if (!ok) return;
  }
  try {
    const body = { path, expectedRevision: state.status.revision, discardChanges: state.status.isDirty };
    const outcome = await api('/api/folder/open', { method: 'POST', body });
    const summary = skippedSummary(outcome);
    actions.status(`Opened ${path}: ${outcome.fileCount} file(s)${summary ? `; skipped ${summary}` : ''}.`);
    reportSkipped(`Opening ${path}`, outcome);
    await actions.refreshState({ reloadEditor: true });
  } catch (error) {
    actions.status(`${error.code}: ${error.message}`, true);
  }
}

async function deleteActive(trigger) {
  const path = state.activePath;
  if (!path) return;
  await actions.flushDraft();
  const ok = await confirmAction({
    title: `Delete ${path}?`,
    message: 'The file is removed from the workspace (Undo brings it back; a linked folder loses it on the next save).',
    confirmLabel: 'Delete',
    trigger,
  });
  if (!ok) return;
  if (report(await callTool('workspace.deleteFile', { path, expectedRevision: state.status.revision }), `Deleted ${path}.`)) {
    state.openTabs = state.openTabs.filter((tab) => tab !== path);
    await actions.refreshState({ reloadEditor: true });
  }
}

function wireDialogForm(formId, dialogId, errorId, submit) {
  $(formId).addEventListener('submit', async (event) => {
    event.preventDefault();
    $(errorId).textContent = '';
    const error = await submit();
    if (error) $(errorId).textContent = error;
    else $(dialogId).close('done');
  });
}

/**
 * A refusal the way the dialogs show it: the message, what the validator found (the tool's own
 * bounds, such as the path length), and the code.
 */
function refusalText(error) {
  const issues = (error.details?.issues ?? []).map((issue) => `${issue.pointer.replace(/^\//, '') || 'arguments'} ${issue.message}`);
  return `${error.message}${issues.length ? `: ${issues.join('; ')}` : ''} (${error.code})`;
}

/** Wires the explorer and folder controls. */
export function wireExplorer() {
  $('file-tree').addEventListener('keydown', onTreeKeydown);
  $('new-file-button').addEventListener('click', () => {
    $('new-file-error').textContent = '';
    $('new-file-path').value = '';
    openModal($('new-file-dialog'), $('new-file-button'), $('new-file-path'));
  });
  $('new-file-cancel').addEventListener('click', () => $('new-file-dialog').close('cancel'));
  wireDialogForm('new-file-form', 'new-file-dialog', 'new-file-error', async () => {
    const path = $('new-file-path').value.trim();
    if (!path) return 'Enter a path, for example docs/notes.md.';
    await actions.flushDraft();
    const result = await callTool('workspace.createFile', { path, source: '', expectedRevision: state.status.revision });
    if (result.isError && !isCommitted(result)) return refusalText(result.error);
    reportApplied(result, `Created ${path}`);
    await actions.refreshState();
    await actions.openFile(result.structuredContent?.activePath ?? path);
    return null;
  });

  $('rename-button').addEventListener('click', () => {
    $('rename-error').textContent = '';
    $('rename-path').value = state.activePath ?? '';
    openModal($('rename-dialog'), $('rename-button'), $('rename-path'));
  });
  $('rename-cancel').addEventListener('click', () => $('rename-dialog').close('cancel'));
  wireDialogForm('rename-form', 'rename-dialog', 'rename-error', async () => {
    const from = state.activePath;
    const to = $('rename-path').value.trim();
    if (!to) return 'Enter the new path.';
    if (to === from) return 'The new path is the same as the current one.';
    await actions.flushDraft();
    const result = await callTool('workspace.renameFile', { fromPath: from, toPath: to, expectedRevision: state.status.revision });
    if (result.isError && !isCommitted(result)) return refusalText(result.error);
    state.openTabs = state.openTabs.map((tab) => (tab === from ? to : tab));
    state.activePath = to;
    await actions.refreshState({ reloadEditor: true });
    if (!reportApplied(result, `Renamed ${from} to ${to}`)) actions.status(`Renamed ${from} to ${to}.`);
    return null;
  });

  $('delete-button').addEventListener('click', () => deleteActive($('delete-button')));
  $('save-button').addEventListener('click', save);
  $('reload-folder-button').addEventListener('click', () => reloadFolder($('reload-folder-button')));
  $('disconnect-folder-button').addEventListener('click', disconnectFolder);
  $('open-folder-button').addEventListener('click', () => openFolder($('open-folder-button')));
  $('folder-path').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') openFolder($('open-folder-button'));
  });
}
