// The tool catalog of the kit (re-exported by surface.js): the registry's canonical tools/list
// definitions with search and scope filters, a definition view (policy, annotations, input and
// output schema), Copy/Download, and Run sample with an argument editor. Samples follow the
// selection and the page's state until the person edits them; edited JSON is kept. Tools
// mounted from MCP servers (`<server>.<tool>`) follow the page's own, grouped by server, each
// server with its scope. The workspace page shows it; the surface pages show the kit's smaller
// palette (createPalette).
//
//   createCatalog({ search, scopeBox, list, detail, copyList, downloadList, shows, scopes,
//       sample, onStatus, beforeRun, afterRun, refreshPreview }) -> { load(), refreshSample() }
//     shows(tool) picks the page's tools from /api/tools; scopes are its [id, label, matches]
//     filters after "All"; sample(tool) builds a tool's sample arguments. A run sends
//     beforeRun() first and afterRun() follows it; an applied result whose preview was not
//     confirmed offers refreshPreview. The detail's argument editor, error line, Run sample
//     button and result are #sample-args, #sample-error, #run-sample and #sample-result.

import { api, callTool, copyText, downloadBlob, isCommitted, parseToolArguments, toolsCallRequest, unconfirmedText } from './api.js';
import { button, el } from './dom.js';
import { confirmToolRun } from './modal.js';

/** The studio's own catalogs; every other `<prefix>.<tool>` comes from an MCP server. */
const STUDIO_NAMESPACES = new Set(['workspace', 'preview', 'editor', 'web']);

/** The MCP server a registry tool was mounted from, or null for the studio's own tools. */
export function serverOf(toolName) {
  const dot = toolName.indexOf('.');
  if (dot <= 0) return null;
  const prefix = toolName.slice(0, dot);
  return STUDIO_NAMESPACES.has(prefix) ? null : prefix;
}

/** How the registry's policy treats a tool, from its annotations. */
function policySummary(tool) {
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

function schemaBlock(title, schema) {
  return el('details', { className: 'schema' },
    el('summary', { textContent: title }),
    el('pre', { textContent: JSON.stringify(schema ?? {}, null, 2) }));
}

/** The tool catalog panel over the page's elements. */
export function createCatalog({
  search, scopeBox, list, detail, copyList, downloadList, shows, scopes: pageScopes, sample, onStatus,
  beforeRun, afterRun, refreshPreview,
}) {
  let tools = [];
  const view = { scope: 'all', selected: null, argsEdited: false, argsFor: null, editedText: '', lastResult: null };
  // Results already scrolled to: a re-render (state refresh) must not yank the panel back.
  const revealedResults = new WeakSet();

  /** "All", the page's scopes, then one per MCP server the listed tools came from. */
  function scopes() {
    const servers = [...new Set(tools.map((tool) => serverOf(tool.name)).filter(Boolean))];
    return [['all', 'All', () => true], ...pageScopes, ...servers.map((server) => [`mcp:${server}`, `MCP · ${server}`, (tool) => serverOf(tool.name) === server])];
  }

  function matchesQuery(tool) {
    const query = search.value.trim().toLowerCase();
    return !query || `${tool.name} ${tool.title ?? ''} ${tool.description ?? ''}`.toLowerCase().includes(query);
  }

  function visibleTools() {
    const scope = (scopes().find(([id]) => id === view.scope) ?? scopes()[0])[2];
    return tools.filter((tool) => scope(tool) && matchesQuery(tool));
  }

  function renderScopes() {
    scopeBox.replaceChildren(...scopes().map(([id, label, matches]) => {
      const count = tools.filter((tool) => matches(tool) && matchesQuery(tool)).length;
      return button(`${label} ${count}`, () => {
        view.scope = id;
        render();
      }, { className: `scope${view.scope === id ? ' active' : ''}`, attrs: { role: 'radio', 'aria-checked': String(view.scope === id) }, dataset: { scope: id } });
    }));
  }

  /** Renders the scope filters, the list and the selected definition. */
  function render() {
    renderScopes();
    list.replaceChildren();
    const shown = visibleTools();
    let group = null;
    for (const tool of shown) {
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
          click: () => select(tool.name),
          keydown: (event) => event.key === 'Enter' && select(tool.name),
        },
      }, el('span', { className: 'name', textContent: tool.name }),
      server ? el('span', { className: 'tag mcp', textContent: 'mcp' }) : null,
      el('span', { className: `tag ${readOnly ? 'read' : 'ask'}`, textContent: readOnly ? 'read-only' : server ? 'asks' : 'mutation' })));
    }
    if (!shown.length) list.append(el('li', { className: 'empty', textContent: 'No tool matches.' }));
    renderDetail();
  }

  function select(name) {
    if (view.selected !== name) {
      view.selected = name;
      view.argsEdited = false;
      view.lastResult = null;
    }
    render();
  }

  const selectedTool = () => tools.find((tool) => tool.name === view.selected);
  const sampleText = (tool) => JSON.stringify(sample(tool), null, 2);
  const argsEditor = () => detail.querySelector('#sample-args');
  const errorLine = () => detail.querySelector('#sample-error');

  /** Refreshes an untouched sample after a state change (revision, active file). */
  function refreshSample() {
    const tool = selectedTool();
    const editor = argsEditor();
    if (!tool || !editor || view.argsEdited) return;
    editor.value = sampleText(tool);
  }

  function callBody(tool) {
    const typed = parseToolArguments(argsEditor()?.value);
    return toolsCallRequest(tool.name, typed.args ?? sample(tool));
  }

  async function copyWithNote(text, note) {
    onStatus((await copyText(text)) ? note : 'The clipboard refused the copy.');
  }

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

  function renderDetail() {
    const tool = selectedTool();
    detail.replaceChildren();
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
          errorLine().textContent = '';
        },
      },
    });
    const annotations = Object.entries(tool.annotations ?? {}).map(([key, value]) => `${key}: ${value}`).join(' · ') || 'none';
    const definition = () => JSON.stringify(tool, null, 2);
    const call = () => JSON.stringify(callBody(tool), null, 2);
    // Native append would show a skipped part (null) as the text "null".
    detail.append(...[
      el('h3', { textContent: tool.name }),
      tool.title ? el('p', { className: 'title', textContent: tool.title }) : null,
      el('p', { className: 'desc', textContent: tool.description ?? '' }),
      el('p', { className: 'policy', textContent: policySummary(tool) }),
      el('p', { className: 'annotations', textContent: `Annotations: ${annotations}` }),
      schemaBlock('Input schema', tool.inputSchema),
      schemaBlock('Output schema', tool.outputSchema),
      el('div', { className: 'copy-row' },
        button('Copy definition', () => copyWithNote(definition(), 'Definition copied.')),
        button('Copy tools/call', () => copyWithNote(call(), 'tools/call JSON copied.')),
        button('Download definition', () => downloadBlob(`${tool.name}.json`, definition())),
        button('Download tools/call', () => downloadBlob(`${tool.name}.call.json`, call()))),
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

  async function runSample(tool) {
    const typed = parseToolArguments(argsEditor().value);
    if (typed.invalid) {
      errorLine().textContent = typed.invalid;
      return;
    }
    const trigger = detail.querySelector('#run-sample');
    const args = await confirmToolRun(tool, typed.args, trigger);
    if (!args) return;
    await beforeRun();
    trigger.disabled = true;
    view.lastResult = await callTool(tool.name, args).catch((error) => ({ isError: true, error }));
    view.argsEdited = view.argsEdited && view.argsFor === tool.name;
    renderDetail();
    await afterRun();
  }

  const listJson = () => JSON.stringify({ tools }, null, 2);
  search.addEventListener('input', render);
  copyList.addEventListener('click', () => copyWithNote(listJson(), 'tools/list copied.'));
  downloadList.addEventListener('click', () => downloadBlob('tools-list.json', listJson()));

  return {
    /** Loads the canonical definitions of the page's tools (and of the MCP servers) from the registry. */
    async load() {
      const data = await api('/api/tools');
      tools = data.tools.filter(shows);
      if (!tools.some((tool) => tool.name === view.selected)) view.selected = tools[0]?.name ?? null;
      if (!scopes().some(([id]) => id === view.scope)) view.scope = 'all';
      render();
    },
    refreshSample,
  };
}
