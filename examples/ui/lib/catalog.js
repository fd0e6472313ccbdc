// The tool catalog: the registry's canonical tools/list definitions with search and scope
// filters, a definition view (policy, annotations, input and output schema), Copy/Download, and
// Run sample with an argument editor. Samples follow the selection and the workspace revision
// until the person edits them; edited JSON is kept. Tools mounted from MCP servers
// (`<server>.<tool>`) follow the studio's own, grouped by server, each server with its scope.

import { api, callTool, copyText, downloadBlob, isCommitted, toolsCallRequest, unconfirmedText } from './api.js';
import { $, button, el } from './dom.js';
import { serverOf } from './mcp-servers.js';
import { confirmToolRun } from './modal.js';
import { refreshPreview } from './preview.js';
import { sampleArguments } from './samples.js';
import { actions, state } from './store.js';

const SCOPES = [
  ['all', 'All', () => true],
  ['read-only', 'Read-only', (tool) => tool.annotations?.readOnlyHint === true],
  ['workspace', 'Workspace', (tool) => tool.name.startsWith('workspace.')],
  ['preview', 'Preview', (tool) => tool.name.startsWith('preview.')],
];

const view = { scope: 'all', selected: null, argsEdited: false, argsFor: null, lastResult: null };

/** This page's surface (the registry also holds `editor.*` and `web.*`, shown on their pages)
 * and every tool mounted from an MCP server. */
const shownHere = (tool) => tool.name.startsWith('workspace.') || tool.name.startsWith('preview.') || serverOf(tool.name) !== null;

/** The MCP servers the listed tools came from, in catalog order. */
function servers() {
  return [...new Set(state.tools.map((tool) => serverOf(tool.name)).filter(Boolean))];
}

/** The fixed scopes, then one per MCP server. */
function scopes() {
  return [...SCOPES, ...servers().map((server) => [`mcp:${server}`, `MCP · ${server}`, (tool) => serverOf(tool.name) === server])];
}

/** Loads the canonical definitions of this surface (and of the MCP servers) from the registry. */
export async function loadCatalog() {
  const data = await api('/api/tools');
  state.tools = data.tools.filter(shownHere);
  if (!state.tools.some((tool) => tool.name === view.selected)) view.selected = state.tools[0]?.name ?? null;
  if (!scopes().some(([id]) => id === view.scope)) view.scope = 'all';
  renderCatalog();
}

/** How the registry's policy treats a tool, from its annotations. */
export function policySummary(tool) {
  const hints = tool.annotations ?? {};
  const server = serverOf(tool.name);
  if (server) {
    const trusted = hints.readOnlyHint === true ? ' It is trusted and read-only: it runs for every caller.' : '';
    return `From the MCP server "${server}": runs directly from this page; a model or MCP client needs your approval unless you trust the server or the tool (Settings → MCP servers).${trusted}`;
  }
  if (hints.readOnlyHint === true) return 'Read-only: runs for every caller without approval.';
  const extra = [hints.destructiveHint && 'destructive', hints.openWorldHint && 'leaves the workspace'].filter(Boolean);
  return `Mutation${extra.length ? ` (${extra.join(', ')})` : ''}: runs directly from this page; a model or MCP client needs your approval.`;
}

function visibleTools() {
  const query = $('catalog-search').value.trim().toLowerCase();
  const scope = (scopes().find(([id]) => id === view.scope) ?? SCOPES[0])[2];
  return state.tools.filter((tool) => scope(tool) && (!query || `${tool.name} ${tool.title ?? ''} ${tool.description ?? ''}`.toLowerCase().includes(query)));
}

function renderScopes() {
  const box = $('catalog-scopes');
  box.replaceChildren();
  const query = $('catalog-search').value.trim().toLowerCase();
  for (const [id, label, matches] of scopes()) {
    const count = state.tools.filter((tool) => matches(tool) && (!query || `${tool.name} ${tool.title ?? ''} ${tool.description ?? ''}`.toLowerCase().includes(query))).length;
    box.append(button(`${label} ${count}`, () => {
      view.scope = id;
      renderCatalog();
    }, { className: `scope${view.scope === id ? ' active' : ''}`, attrs: { role: 'radio', 'aria-checked': String(view.scope === id) }, dataset: { scope: id } }));
  }
}

/** Renders the scope filters, the list and the selected definition. */
export function renderCatalog() {
  renderScopes();
  const list = $('catalog-list');
  list.replaceChildren();
  const tools = visibleTools();
  let group = null;
  for (const tool of tools) {
    const readOnly = tool.annotations?.readOnlyHint === true;
    const server = serverOf(tool.name);
    if (server !== group) {
      group = server;
      if (server) list.append(el('li', { className: 'group', textContent: `MCP server · ${server}`, attrs: { role: 'presentation' }, dataset: { server } }));
    }
    list.append(el('li', {
      className: `tool${tool.name === view.selected ? ' selected' : ''}`, tabIndex: 0,
      attrs: { role: 'option', 'aria-selected': String(tool.name === view.selected) },
      dataset: { tool: tool.name },
      on: {
        click: () => selectTool(tool.name),
        keydown: (event) => event.key === 'Enter' && selectTool(tool.name),
      },
    }, el('span', { className: 'name', textContent: tool.name }),
    server ? el('span', { className: 'tag mcp', textContent: 'mcp' }) : null,
    el('span', { className: `tag ${readOnly ? 'read' : 'ask'}`, textContent: readOnly ? 'read-only' : server ? 'asks' : 'mutation' })));
  }
  if (!tools.length) list.append(el('li', { className: 'empty', textContent: 'No tool matches.' }));
  renderDetail();
}

function selectTool(name) {
  if (view.selected !== name) {
    view.selected = name;
    view.argsEdited = false;
    view.lastResult = null;
  }
  renderCatalog();
}

function selectedTool() {
  return state.tools.find((tool) => tool.name === view.selected);
}

function sampleText(tool) {
  return JSON.stringify(sampleArguments(tool, { revision: state.status?.revision ?? 0, activePath: state.activePath }), null, 2);
}

/** Refreshes an untouched sample after a revision or active-file change. */
export function refreshSample() {
  const tool = selectedTool();
  const editor = $('sample-args');
  if (!tool || !editor || view.argsEdited) return;
  editor.value = sampleText(tool);
}

function schemaBlock(title, schema) {
  return el('details', { className: 'schema' },
    el('summary', { textContent: title }),
    el('pre', { textContent: JSON.stringify(schema ?? {}, null, 2) }));
}

function renderDetail() {
  const box = $('catalog-detail');
  const tool = selectedTool();
  box.replaceChildren();
  if (!tool) return;
  const args = el('textarea', {
    id: 'sample-args', className: 'sample-args', spellcheck: false, rows: 6,
    value: view.argsFor === tool.name && view.argsEdited ? view.editedText : sampleText(tool),
    attrs: { 'aria-label': `Arguments for ${tool.name}` },
    on: {
      input: (event) => {
        view.argsEdited = true;
        view.argsFor = tool.name;
        view.editedText = event.target.value;
        $('sample-error').textContent = '';
      },
    },
  });
  const annotations = Object.entries(tool.annotations ?? {}).map(([key, value]) => `${key}: ${value}`).join(' · ') || 'none';
  // Native append would show a skipped part (null) as the text "null".
  box.append(...[
    el('h3', { textContent: tool.name }),
    tool.title ? el('p', { className: 'title', textContent: tool.title }) : null,
    el('p', { className: 'desc', textContent: tool.description ?? '' }),
    el('p', { className: 'policy', textContent: policySummary(tool) }),
    el('p', { className: 'annotations', textContent: `Annotations: ${annotations}` }),
    schemaBlock('Input schema', tool.inputSchema),
    schemaBlock('Output schema', tool.outputSchema),
    el('div', { className: 'copy-row' },
      button('Copy definition', () => copyWithNote(JSON.stringify(tool, null, 2), 'Definition copied.')),
      button('Copy tools/call', () => copyWithNote(JSON.stringify(callBody(tool), null, 2), 'tools/call JSON copied.')),
      button('Download definition', () => downloadBlob(`${tool.name}.json`, JSON.stringify(tool, null, 2))),
      button('Download tools/call', () => downloadBlob(`${tool.name}.call.json`, JSON.stringify(callBody(tool), null, 2)))),
    el('label', { className: 'sample-label', htmlFor: 'sample-args', textContent: 'Arguments (JSON)' }),
    args,
    el('p', { id: 'sample-error', className: 'error', attrs: { role: 'alert' } }),
    el('div', { className: 'copy-row' },
      button('Reset sample', () => {
        view.argsEdited = false;
        args.value = sampleText(tool);
      }),
      button('Run sample', () => runSample(tool), { id: 'run-sample', className: 'primary' })),
    view.lastResult ? resultBlock(view.lastResult) : null,
  ].filter(Boolean));
}

function callBody(tool) {
  let args;
  try {
    args = JSON.parse($('sample-args')?.value ?? '{}');
  } catch {
    args = sampleArguments(tool, { revision: state.status?.revision ?? 0, activePath: state.activePath });
  }
  return toolsCallRequest(tool.name, args);
}

// Results already scrolled to: a re-render (state refresh) must not yank the panel back.
const revealedResults = new WeakSet();

/** Scrolls a fresh result into its panel's view once: the Run sample row at the top, the
 *  result right under it, so both show together. */
function revealOnce(node, result) {
  if (revealedResults.has(result)) return;
  revealedResults.add(result);
  requestAnimationFrame(() => {
    if (!node.isConnected) return;
    (node.previousElementSibling ?? node).scrollIntoView({ block: 'start' });
  });
}

function resultBlock(result) {
  const failed = Boolean(result.isError);
  // An applied change whose preview was not confirmed offers a refresh, never a repeat.
  const applied = isCommitted(result);
  const head = applied ? `Applied · ${unconfirmedText(result)}`
    : failed ? `Failed · ${result.error?.code}${result.error?.retryable ? ' · retryable' : ''}` : 'Succeeded';
  const block = el('div', { className: `sample-result ${applied ? 'applied' : failed ? 'failed' : 'ok'}`, id: 'sample-result', attrs: { 'aria-live': 'polite' } },
    el('div', { className: 'result-head', textContent: head }),
    el('pre', { textContent: JSON.stringify(failed ? result.error : (result.structuredContent ?? result.content), null, 2).slice(0, 4000) }),
    applied ? button('Refresh preview', refreshPreview)
      : failed && result.error?.retryable ? button('Retry', () => runSample(selectedTool())) : null);
  revealOnce(block, result);
  return block;
}

async function copyWithNote(text, note) {
  actions.status((await copyText(text)) ? note : 'The clipboard refused the copy.');
}

async function runSample(tool) {
  let args;
  try {
    args = JSON.parse($('sample-args').value);
  } catch (error) {
    $('sample-error').textContent = `The arguments are not valid JSON: ${error.message}`;
    return;
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    $('sample-error').textContent = 'The arguments must be a JSON object.';
    return;
  }
  args = await confirmToolRun(tool, args, $('run-sample'));
  if (!args) return;
  await actions.flushDraft();
  $('run-sample').disabled = true;
  view.lastResult = await callTool(tool.name, args).catch((error) => ({ isError: true, error }));
  view.argsEdited = view.argsEdited && view.argsFor === tool.name;
  renderDetail();
  await actions.refreshState({ reloadEditor: true });
}

/** Wires the catalog toolbar. */
export function wireCatalog() {
  $('catalog-search').addEventListener('input', renderCatalog);
  $('copy-tool-list').addEventListener('click', () => copyWithNote(JSON.stringify({ tools: state.tools }, null, 2), 'tools/list copied.'));
  $('download-tool-list').addEventListener('click', () => downloadBlob('tools-list.json', JSON.stringify({ tools: state.tools }, null, 2)));
}
