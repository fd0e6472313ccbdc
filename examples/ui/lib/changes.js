// The Changes panel: every change of the workspace against the linked folder on disk (read
// now), else against its checkpoint (the last import or save), from GET /api/changes while the
// panel is open. A hunk of a modified
// text file reverts on its own (POST /api/changes/revert-hunk: a direct workspace.writeFile
// through the registry); any file reverts whole through workspace.revertFile.

import { api, callTool } from './api.js';
import { $, el, button } from './dom.js';
import { createDiffView } from './diff-view.js';

let digest = null;
let revision = null;
let loading = null;
/** What the last revert did (kept above the count until the next action or Refresh). */
let lastAction = { text: '', failed: false };

function report(text, failed = false) {
  lastAction = { text, failed };
}

function showSummary(countText) {
  const line = $('changes-summary');
  line.textContent = [lastAction.text, countText].filter(Boolean).join(' ');
  line.classList.toggle('failed', lastAction.failed);
}

async function revertHunk(path, hunk) {
  try {
    const result = await api('/api/changes/revert-hunk', { method: 'POST', body: { path, hunk, digest } });
    if (result?.isError) report(`${result.error.code}: ${result.error.message}`, true);
    else report(`Reverted hunk ${hunk + 1} of ${path} (revision ${result.structuredContent?.revision ?? '?'}).`);
  } catch (error) {
    report(`${error.code}: ${error.message}`, true);
  }
  await refreshChanges();
}

async function revertFile(path) {
  const result = await callTool('workspace.revertFile', { path, expectedRevision: revision });
  if (result?.isError) report(`${result.error.code}: ${result.error.message}`, true);
  else report(`Reverted ${path}.`);
  await refreshChanges();
}

const view = createDiffView({
  hunkControl: (file, hunk) => (file.change === 'modified' && file.kind === 'text'
    ? button(`Revert hunk ${hunk.index + 1}`, () => revertHunk(file.path, hunk.index), { className: 'revert-hunk', title: 'Restore these lines as saved' })
    : null),
  fileControl: (file) => button('Revert file', (event) => {
    event.preventDefault();
    revertFile(file.path);
  }, { className: 'revert-file', title: 'Restore the whole file as saved' }),
});

/** Reloads the changes when the panel is open (after every workspace event, and on opening). */
export async function refreshChanges() {
  if ($('tab-changes').hidden) return;
  if (loading) return loading;
  loading = (async () => {
    try {
      const changes = await api('/api/changes');
      digest = changes.diff.digest;
      revision = changes.revision;
      const count = changes.diff.files.length;
      const base = changes.base === 'folder' ? 'the folder on disk' : 'the last import or save';
      const summary = count ? `${count} changed file(s) at revision ${revision}, against ${base}.` : `No changes against ${base}.`;
      showSummary([summary, changes.note].filter(Boolean).join(' '));
      view.show(changes.diff);
    } catch (error) {
      report(`${error.code}: ${error.message}`, true);
      showSummary('');
    } finally {
      loading = null;
    }
  })();
  return loading;
}

/** Mounts the panel's diff view. */
export function wireChanges() {
  $('changes-list').replaceChildren(view.element);
  view.show(null);
  $('refresh-changes').addEventListener('click', () => {
    report('');
    refreshChanges();
  });
}
