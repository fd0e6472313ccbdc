// Workspace search across text files: at most MAX_SEARCH_RESULTS hits as path:line with a
// preview. Sources are read through workspace.readFile once per revision, after any draft
// write in flight has settled, and the unsaved draft of the active file overlays its stored
// source.

import { callTool } from './api.js';
import { $, el } from './dom.js';
import { draftWritesSettled } from './editor.js';
import { actions, state } from './store.js';

/** Most results one search lists. */
export const MAX_SEARCH_RESULTS = 80;
const PREVIEW_CHARS = 120;

const sources = { revision: null, byPath: new Map() };
let searchTimer = null;

async function textSources() {
  // A draft write in flight has left `state.draft` but not reached `state.source` or the
  // revision yet: searching now would find its text nowhere.
  await draftWritesSettled();
  if (sources.revision !== state.status.revision) {
    sources.byPath = new Map();
    sources.revision = state.status.revision;
  }
  for (const file of state.files) {
    if (file.kind !== 'text' || sources.byPath.has(file.path)) continue;
    const result = await callTool('workspace.readFile', { path: file.path });
    if (!result.isError) sources.byPath.set(file.path, result.structuredContent.source);
  }
  const merged = new Map(sources.byPath);
  if (state.draft) merged.set(state.draft.path, state.draft.source);
  return merged;
}

/** Case-insensitive line matches of `query` in `files` (a Map of path → source), capped. */
export function searchSources(files, query) {
  const needle = query.toLowerCase();
  const results = [];
  let total = 0;
  for (const [path, source] of [...files.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    source.split('\n').forEach((line, index) => {
      const column = line.toLowerCase().indexOf(needle);
      if (column < 0) return;
      total += 1;
      if (results.length < MAX_SEARCH_RESULTS) results.push({ path, line: index + 1, column: column + 1, text: line });
    });
  }
  return { results, total };
}

function previewOf(result, query) {
  const start = Math.max(0, result.column - 1 - 30);
  const text = result.text.slice(start, start + PREVIEW_CHARS);
  const at = result.column - 1 - start;
  return [start > 0 ? '…' : '', text.slice(0, at), el('mark', { textContent: text.slice(at, at + query.length) }), text.slice(at + query.length)];
}

async function runSearch() {
  const query = $('workspace-search').value;
  const list = $('search-results');
  if (!query.trim()) {
    list.replaceChildren();
    $('search-summary').textContent = '';
    return;
  }
  const { results, total } = searchSources(await textSources(), query);
  if (query !== $('workspace-search').value) return; // a newer query is on its way
  list.replaceChildren(...results.map((result) => el('li', {},
    el('button', {
      type: 'button', className: 'search-hit',
      attrs: { 'aria-label': `${result.path} line ${result.line}` },
      on: { click: () => actions.openFile(result.path, { line: result.line, column: result.column, length: query.length }) },
    }, el('span', { className: 'where', textContent: `${result.path}:${result.line}` }),
    el('span', { className: 'preview', textContent: '' }, previewOf(result, query))))));
  $('search-summary').textContent = total > results.length
    ? `${total} matches · showing the first ${results.length}`
    : `${total} match${total === 1 ? '' : 'es'}`;
}

/** Opens the Search panel and focuses its field. */
export function focusWorkspaceSearch() {
  document.querySelector('[data-tab="search"]').click();
  $('workspace-search').focus();
  $('workspace-search').select();
}

/** Wires the search field (debounced). */
export function wireSearch() {
  $('workspace-search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 150);
  });
  $('workspace-search').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      clearTimeout(searchTimer);
      runSearch();
    }
  });
}
