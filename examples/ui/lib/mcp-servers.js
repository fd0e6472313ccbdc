// Settings → MCP servers: the `mcpServers` JSON people already have (Claude Desktop, VS Code),
// pre-filled with the host's masked view; Save PUTs it to /api/mcp/servers. Below it, each
// server's state (connecting, ready with N tools, failed or unavailable with the coded reason,
// disabled), its tools and the tools it offered that were not mounted, with Trust and Disable
// toggles per server and per tool. A toggle edits the saved configuration and PUTs it at once.
//
// Secrets never reach the page: env and header values arrive masked, and a masked value sent
// back keeps the saved secret. Every tab applies the `mcpServers` event the host publishes on
// each change, so states move live.

import { api } from './api.js';
import { $, el } from './dom.js';

const view = { generation: -1, config: { mcpServers: {} }, servers: [] };
let onToolsChanged = () => {};
let toolKey = '';

/** What the status of `server` says in one line. */
function stateText(server) {
  switch (server.state) {
    case 'connecting': return 'connecting…';
    case 'ready': return `ready · ${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}`;
    case 'failed': return `failed · ${server.code}`;
    case 'unavailable': return `unavailable · ${server.code}`;
    case 'disabled': return 'disabled';
    default: return server.state;
  }
}

function retryText(server) {
  if (server.retryInMs === undefined) return '';
  const seconds = Math.max(1, Math.round(server.retryInMs / 1000));
  return ` · next attempt in ${seconds} s`;
}

/** The saved (masked) configuration of the server `name`. */
function configOf(name) {
  return view.config?.mcpServers?.[name] ?? {};
}

/** A toggle: a labelled checkbox that edits the saved configuration when flipped. */
function toggle(label, checked, title, change, dataset) {
  const box = el('input', { type: 'checkbox', checked, dataset, on: { change: (event) => change(event.target.checked, event.target) } });
  return el('label', { className: 'inline mcp-toggle', title }, box, ` ${label}`);
}

/** Adds (or removes) `item` in the list `key` of `server`'s configuration. */
function setListed(server, key, item, listed) {
  const items = new Set(server[key] ?? []);
  if (listed) items.add(item);
  else items.delete(item);
  if (items.size) server[key] = [...items];
  else delete server[key];
}

function setFlag(server, key, set) {
  if (set) server[key] = true;
  else delete server[key];
}

/** Applies `edit` to a copy of the saved configuration and saves it. */
async function editSaved(edit, control) {
  const next = structuredClone(view.config ?? { mcpServers: {} });
  next.mcpServers ??= {};
  edit(next.mcpServers);
  if (control) control.disabled = true;
  await save(next);
  if (control) control.disabled = false;
}

function toolRow(server, name, mounted) {
  const remote = name.slice(server.name.length + 1);
  const saved = configOf(server.name);
  const trusted = saved.trusted === true || (saved.trustedTools ?? []).includes(remote);
  const disabled = (saved.disabledTools ?? []).includes(remote);
  return el('li', { className: 'mcp-tool', dataset: { tool: remote, mounted: String(mounted) } },
    el('code', { textContent: `${server.name}.${remote}` }),
    trusted ? el('span', { className: 'mcp-badge trusted', textContent: 'runs without asking' }) : el('span', { className: 'mcp-badge asks', textContent: 'asks' }),
    toggle('Trust', (saved.trustedTools ?? []).includes(remote), `Run ${remote} without asking (even when the server is not trusted)`,
      (checked, box) => editSaved((servers) => setListed(servers[server.name], 'trustedTools', remote, checked), box),
      { action: 'trust-tool' }),
    toggle('Disable', disabled, `Do not mount ${remote}`,
      (checked, box) => editSaved((servers) => setListed(servers[server.name], 'disabledTools', remote, checked), box),
      { action: 'disable-tool' }));
}

function serverItem(server) {
  const saved = configOf(server.name);
  const mounted = server.tools ?? [];
  // Disabled tools are not mounted; list them so they can be enabled again.
  const disabled = (saved.disabledTools ?? [])
    .map((remote) => `${server.name}.${remote}`)
    .filter((name) => !mounted.includes(name));
  const failure = server.state === 'failed' || server.state === 'unavailable';
  const about = [server.serverInfo, server.protocolVersion && `protocol ${server.protocolVersion}`, server.transport].filter(Boolean).join(' · ');
  return el('li', { className: 'mcp-server', dataset: { server: server.name, state: server.state } },
    el('div', { className: 'mcp-server-head' },
      el('span', { className: 'mcp-name', textContent: server.name }),
      el('span', { className: 'mcp-state', dataset: { state: server.state }, textContent: stateText(server) }),
      el('span', { className: 'mcp-spacer' }),
      toggle('Trust', saved.trusted === true, 'Run every tool of this server without asking a person',
        (checked, box) => editSaved((servers) => setFlag(servers[server.name], 'trusted', checked), box),
        { action: 'trust-server' }),
      toggle('Disable', saved.disabled === true, 'Keep this server in the configuration but do not connect to it',
        (checked, box) => editSaved((servers) => setFlag(servers[server.name], 'disabled', checked), box),
        { action: 'disable-server' })),
    about ? el('p', { className: 'mcp-about', textContent: about }) : null,
    failure ? el('p', { className: 'mcp-failure', textContent: `${server.code}: ${server.message}${retryText(server)}` }) : null,
    mounted.length || disabled.length
      ? el('ul', { className: 'mcp-tools', attrs: { 'aria-label': `Tools of ${server.name}` } },
        ...mounted.map((name) => toolRow(server, name, true)),
        ...disabled.map((name) => toolRow(server, name, false)))
      : null,
    server.skipped?.length
      ? el('details', { className: 'mcp-skipped' },
        el('summary', { textContent: `${server.skipped.length} tool${server.skipped.length === 1 ? '' : 's'} not mounted` }),
        el('ul', {}, ...server.skipped.map((skipped) => el('li', {},
          el('code', { textContent: skipped.name }), ` ${skipped.reason}`))))
      : null);
}

function renderServers() {
  const list = $('mcp-server-list');
  if (!list) return;
  list.replaceChildren(...view.servers.map(serverItem));
  if (!view.servers.length) list.append(el('li', { className: 'empty', textContent: 'No MCP servers yet.' }));
}

/** Fills the configuration box, unless the person is editing it (or `force`). */
function fillConfig({ force = false } = {}) {
  const box = $('mcp-config');
  if (!box || (!force && box.dataset.edited === 'true')) return;
  const servers = view.config?.mcpServers ?? {};
  box.value = JSON.stringify({ mcpServers: servers }, null, 2);
  delete box.dataset.edited;
}

/** Applies the host's `{generation, config, servers}` view (a GET or PUT answer, or an
 * `mcpServers` event); an answer that arrives after a newer event is older and is skipped. */
export function applyMcpServers(next) {
  if (!next || (next.generation ?? 0) < view.generation) return;
  view.generation = next.generation ?? 0;
  view.config = next.config ?? { mcpServers: {} };
  view.servers = next.servers ?? [];
  fillConfig();
  renderServers();
  const key = view.servers.flatMap((server) => server.tools ?? []).join('\n');
  if (key !== toolKey) {
    toolKey = key;
    onToolsChanged();
  }
}

function showError(message) {
  $('mcp-error').textContent = message;
}

/** PUTs `config`; on success the answer becomes the view and the box is refilled. */
async function save(config) {
  showError('');
  $('mcp-save-status').textContent = 'Saving…';
  try {
    const saved = await api('/api/mcp/servers', { method: 'PUT', body: config });
    $('mcp-save-status').textContent = 'Saved.';
    applyMcpServers(saved);
    return true;
  } catch (error) {
    $('mcp-save-status').textContent = '';
    // A refused configuration's message starts with the JSON pointer it is about.
    showError(`${error.message} (${error.code})`);
    renderServers();
    return false;
  }
}

async function saveBox() {
  let config;
  try {
    config = JSON.parse($('mcp-config').value || '{}');
  } catch (error) {
    showError(`The configuration is not valid JSON: ${error.message}`);
    return;
  }
  $('mcp-save').disabled = true;
  if (await save(config)) fillConfig({ force: true });
  $('mcp-save').disabled = false;
}

/** Reads the host's view (when the settings dialog opens). */
export async function loadMcpServers() {
  try {
    applyMcpServers(await api('/api/mcp/servers'));
    fillConfig({ force: true });
    showError('');
    $('mcp-save-status').textContent = '';
  } catch (error) {
    showError(`${error.message} (${error.code})`);
  }
}

/** Wires the section; `toolsChanged()` runs when the set of mounted tools changes. */
export function wireMcpServers({ toolsChanged = () => {} } = {}) {
  onToolsChanged = toolsChanged;
  $('mcp-save').addEventListener('click', saveBox);
  $('mcp-config').addEventListener('input', () => {
    $('mcp-config').dataset.edited = 'true';
    $('mcp-save-status').textContent = '';
  });
}
