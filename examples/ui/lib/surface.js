// surface.js: the page kit of the studio's pages (/, /editor, /web). The host owns the registry,
// workspace, approvals and trace; a page renders them and calls the host. Every factory takes the
// elements it renders into, so each page keeps its own markup; what only one page does is passed
// in as an option. The surface pages start through lib/surface-page.js.
//
// API
//   api(path, { method, body })  Token-aware JSON fetch (lib/api.js). Non-2xx throws an Error
//                                carrying the host's { code, message, retryable }.
//   callTool(name, args)         POST /api/tools/call: a direct local (palette) call.
//   studioToken                  The per-launch token of this page.
//   cancelRunOnLeave(runId)      Cancels a run with fetch({ keepalive: true }) and the token
//                                header, so the request survives the page going away.
//
//   connectEvents({ surface, onMessage, onConnection }) -> { close() }
//       WebSocket /api/events?client=ui&surface=<surface>: attaching makes this page the
//       surface's preview acknowledger. Reconnects with a bounded backoff; onMessage(message)
//       gets every event, onConnection(connected) every connection change. When the studio
//       restarted (lib/launch.js) the page reloads itself with the new token, calling
//       onRelaunch() first to keep what must survive the reload.
//
//   createApprovals({ container, onError }) -> { render(pending), denyFirst() }
//       Approval cards: tool, description, source · mode, session, argument names and the
//       host's safe preview (path, theme; never file source), the diff and the exact
//       arguments that will run (lib/review.js). Allow/Deny POST /api/approvals/{id}; Allow
//       carries the arguments' digest. Esc outside an open <dialog> denies the oldest pending card.
//
//   createCatalog({ search, scopeBox, list, detail, ... }) -> { load(), refreshSample() },
//   serverOf(toolName)
//       The workspace page's tool catalog (lib/catalog.js): search, scopes, definitions,
//       Copy/Download and Run sample; and the MCP server a tool was mounted from.
//
//   createTrace({ list, session, copy, download, clear, onStatus, confirmClear? }) -> { load(),
//       onRow(row), setRunActive(active) }
//       Rows of /api/trace (agent.request, tools/list, tools/call) with a session selector that
//       only narrows the visible rows and names each session by what started it
//       (lib/sessions.js); Copy, Download and Clear act on the full trace, Clear is disabled
//       while a run is active and, on a page with a confirm dialog, asks first (confirmClear).
//
//   createComposer({ surface, form, prompt, agent, cancel, submit, badge, status, log,
//       onRunChange, onFinished, beforeRun?, metadata?, recoveries?, outcomeOnBadge?,
//       clientRuns?, cancelOnLeave? }) -> { run(prompt, agent?), onAgentEvent(run),
//       onStreamEvent(message), applySettings(settings), activeRun(), say(text, kind, actions?) }
//       Prompt + agent select (a ready provider selects it, lib/agent.js) + Run/Cancel
//       through /api/agent/runs with `surface`; a provider retry's count shows while it backs off.
//       onStreamEvent(message) renders the run's `agentStream` events (lib/stream.js): text
//       as it arrives, tool calls assembling then running. The badge follows the run's `agent` events
//       (started, waiting, approval, completed, not-understood, denied, failed, cancelled);
//       outcomes land in the log. onRunChange(running, run) follows the page's run.
//       The workspace page passes in its differences: beforeRun() (send the editor's draft
//       first; false stops), metadata() (the Design Mode selection), recoveries(outcome,
//       rerun) (buttons for the host's `outcome.actions`), outcomeOnBadge: false (the badge
//       rests idle after a run), clientRuns (an MCP client's run shows on the badge) and
//       cancelOnLeave: false; by default leaving the page (pagehide) cancels the run.
//
//   createPalette({ surface, list, detail, args, run, output, sample, onResult }) -> { load(),
//       select(name), refreshSample() }
//       The surface's tools from /api/tools; selecting one only inspects it, Run sample
//       executes the JSON arguments through callTool. Generated samples refresh (for example
//       with a new revision) until the person edits them.
//
//   createPreview({ iframe, status, address, documentPath, ackPath, stylesheetsPath?, onAcknowledged }) ->
//       { show(revision, force?), revision() }
//       Points the sandboxed iframe at documentPath(revision), or with stylesheetsPath swaps a
//       stylesheet-only revision into the running document. Bridge messages
//       (context-action.preview.ready / .error) are accepted only from that iframe's window and
//       for the revision it shows, then forwarded to ackPath.
//
//   wireTabs(tablist, onSelect?), showConnection(badge, connected, status)
//       Keyboard-navigable side tabs, and the event socket's state on a badge.

import { deniedLine, personLine } from './person.js';
export { createApprovals, restartEndedApprovals } from './approvals.js';
export { createCatalog, serverOf } from './catalog.js';
import { serverOf } from './catalog.js';
import { reloadForNewLaunch, studioRelaunched } from './launch.js';
import { api, callTool, downloadBlob, copyText, isCommitted, parseToolArguments, studioToken, unconfirmedText } from './api.js';
import { el } from './dom.js';
import { createLiveStylesheets } from './live-css.js';
import { confirmToolRun } from './modal.js';
import { createSessionDirectory, sessionText } from './sessions.js';
import { applyAgentChoice, retryAnnouncement, runStatusText } from './agent.js';
import { appendEntry, chatEntry, createRunStream } from './stream.js';

export { api, callTool, isCommitted, studioToken, unconfirmedText };

/** Longest prompt the host accepts. */
export const MAX_PROMPT_CHARS = 4000;
const MAX_OUTPUT_CHARS = 6000;
const MAX_DETAIL_CHARS = 2000;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 8000;
const FINAL_STATES = ['completed', 'not-understood', 'failed', 'denied', 'cancelled'];
const READY = 'context-action.preview.ready';
const ERROR = 'context-action.preview.error';
const RUNTIME_ERROR = 'context-action.preview.runtimeError';

/** Cancels `runId` in a request that outlives the page (pagehide, navigation). */
export function cancelRunOnLeave(runId) {
  return fetch(`/api/agent/runs/${encodeURIComponent(runId)}/cancel`, {
    method: 'POST',
    keepalive: true,
    headers: { 'x-studio-token': studioToken },
  }).catch(() => {});
}

// ---------------------------------------------------------------- events

/** Connects the page's event socket for `surface`, reconnecting after a drop. */
export function connectEvents({ surface, onMessage, onConnection = () => {}, onRelaunch = () => {} }) {
  let socket = null;
  let closed = false;
  let delay = RECONNECT_MIN_MS;
  const open = () => {
    const query = new URLSearchParams({ client: 'ui', surface, token: studioToken });
    socket = new WebSocket(`ws://${location.host}/api/events?${query}`);
    socket.addEventListener('open', () => {
      delay = RECONNECT_MIN_MS;
      onConnection(true);
    });
    socket.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      onMessage(message);
    });
    socket.addEventListener('close', async () => {
      if (closed) return;
      onConnection(false);
      // A restarted studio refuses this page's token: reload with the new one.
      if (await studioRelaunched()) {
        reloadForNewLaunch(onRelaunch);
        return;
      }
      setTimeout(open, delay);
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    });
  };
  open();
  return {
    close() {
      closed = true;
      socket?.close();
    },
  };
}

// ---------------------------------------------------------------- approvals


// ---------------------------------------------------------------- trace

/** The trace panel: session selector over the rows, full-trace Copy/Download/Clear. */
export function createTrace({ list, session, copy, download, clear, onStatus = () => {}, confirmClear = async () => true }) {
  let rows = new Map();
  let selected = '';
  let runActive = false;

  const visible = () => [...rows.values()].filter((row) => !selected || row.sessionId === selected);
  const fullExport = () => JSON.stringify({ rows: [...rows.values()] }, null, 2);

  const sessionNames = createSessionDirectory(() => render());

  function renderRow(row) {
    const retry = row.status === 'failed' && row.retryable !== undefined ? (row.retryable ? 'retryable' : 'terminal') : null;
    const detail = JSON.stringify({ argumentKeys: row.argumentKeys, sessionId: row.sessionId, provenance: row.provenance }, null, 2);
    return el('li', { className: `trace-row kind-${row.kind.replace(/[/.]/g, '-')}`, dataset: { traceId: row.traceId, status: row.status, kind: row.kind }, title: `trace ${row.traceId}${row.sessionId ? ` · session ${row.sessionId}` : ''}` },
      el('div', { className: 'row-head' },
        el('span', { className: 'kind', textContent: row.kind }),
        el('span', { className: 'name', textContent: row.name }),
        el('span', { className: `status status-${row.status}`, textContent: row.status }),
        el('span', { className: 'duration', textContent: row.durationMs !== undefined ? `${row.durationMs} ms` : '…' })),
      el('div', { className: 'meta', textContent: [
        row.source ? `${row.source} · ${row.mode ?? '–'}` : null,
        row.errorCode,
        retry,
        row.toolCallId ? `call ${row.toolCallId}` : null,
      ].filter(Boolean).join('  ·  ') }),
      el('details', { className: 'row-details' },
        el('summary', { textContent: 'Details' }),
        el('pre', { textContent: detail.length > MAX_DETAIL_CHARS ? `${detail.slice(0, MAX_DETAIL_CHARS)}\n… (truncated)` : detail })));
  }

  function render() {
    const known = sessionNames.of(rows.values());
    const options = [['', 'All sessions'], ...known.map((entry) => [entry.id, sessionText(entry)])];
    if (!options.some(([id]) => id === selected)) selected = '';
    if ([...session.options].map((option) => `${option.value}\t${option.textContent}`).join('\n') !== options.map((option) => option.join('\t')).join('\n')) {
      session.replaceChildren(...options.map(([id, text]) => el('option', { value: id, textContent: text, title: id || 'every session' })));
    }
    session.value = selected;
    // The selector only matters once there is more than one session to choose from.
    session.disabled = known.length < 2;
    const shown = visible();
    list.replaceChildren(...shown.map(renderRow));
    if (!shown.length) list.append(el('li', { className: 'empty', textContent: 'No calls yet. Run a prompt or a tool sample.' }));
    list.scrollTop = list.scrollHeight;
    copy.disabled = rows.size === 0;
    download.disabled = rows.size === 0;
    clear.disabled = runActive || rows.size === 0;
  }

  async function load() {
    const data = await api('/api/trace');
    rows = new Map(data.rows.map((row) => [row.traceId, row]));
    await sessionNames.refresh();
    render();
  }

  session.addEventListener('change', () => {
    selected = session.value;
    render();
  });
  copy.addEventListener('click', async () => {
    const ok = await copyText(fullExport());
    onStatus(ok ? `Copied ${rows.size} trace rows.` : 'The clipboard refused the copy.', !ok);
  });
  download.addEventListener('click', () => downloadBlob(`trace-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, fullExport()));
  clear.addEventListener('click', async () => {
    if (runActive || !(await confirmClear(clear))) return;
    try {
      await api('/api/trace', { method: 'DELETE' });
      await load();
      onStatus('Trace cleared.');
    } catch (error) {
      onStatus(`${error.code}: ${error.message}`, true);
    }
  });

  return {
    load,
    onRow(row) {
      rows.set(row.traceId, row);
      render();
    },
    setRunActive(active) {
      runActive = active;
      render();
    },
  };
}

// ---------------------------------------------------------------- composer

/** The prompt composer and its run lifecycle. */
export function createComposer({
  surface, form, prompt, agent, cancel, submit, badge, status, log, onRunChange = () => {}, onFinished = () => {},
  beforeRun = async () => true, metadata = () => null, recoveries = null, outcomeOnBadge = true, clientRuns = false,
  cancelOnLeave = true,
}) {
  let active = null;
  let lastPrompt = '';
  let settings = null;
  const announcedRetries = new Set();
  // The socket can report a run before its POST answered: keep the latest event per run.
  const seen = new Map();

  const stream = createRunStream(log);

  function say(text, kind, actions = []) {
    appendEntry(log, chatEntry(text, kind, actions));
  }

  function setRun(run) {
    active = run && !FINAL_STATES.includes(run.state) ? run : null;
    const running = Boolean(active);
    cancel.disabled = !running;
    submit.disabled = running;
    status.textContent = running ? runStatusText(run) : '';
    const shown = outcomeOnBadge ? run : active;
    const mode = run?.agent ?? agent.value;
    // Picking the provider agent before it is ready (no key where the profile needs one, or no
    // model, as the host's settings report it) says so up front.
    const keyMissing = !shown && mode !== 'local' && settings && !(settings.ready ?? settings.hasApiKey);
    badge.dataset.state = shown?.state ?? 'idle';
    badge.textContent = `${mode === 'local' ? 'local agent' : settings?.providerLabel ?? 'OpenRouter'} · ${keyMissing ? 'no key' : (shown?.state ?? 'idle').replace('-', ' ')}`;
    onRunChange(running, active);
  }

  /** An MCP client's run in progress (started, waiting, approval) on the badge; idle once it ends. */
  function showClientRun(run) {
    if (FINAL_STATES.includes(run.state)) {
      setRun(null);
      return;
    }
    badge.dataset.state = run.state;
    badge.textContent = `MCP client · ${run.state}`;
  }

  function finish(run) {
    const outcome = run.report?.outcome;
    if (!outcome) return;
    const text = lastPrompt;
    const retry = ['Retry', () => start(text)];
    // The page's recovery actions for the outcome, when it offers them (`outcome.actions`).
    const offered = recoveries?.(outcome, (chosen) => start(text, chosen)) ?? null;
    const shown = stream.finish(run, offered ?? []);
    switch (outcome.status) {
      case 'completed': if (!shown) say(outcome.message, 'completed', offered ?? []); break;
      case 'not-understood': say(outcome.message, 'not-understood'); break;
      case 'denied': say(deniedLine(outcome), 'denied', [retry]); break;
      case 'cancelled': say(`Cancelled: ${outcome.message}`, 'cancelled', [retry]); break;
      default: say(personLine(outcome), 'failed', offered ?? (outcome.retryable === false ? [] : [retry]));
    }
    onFinished(run);
  }

  function apply(run) {
    setRun(run);
    const retry = retryAnnouncement(run, announcedRetries);
    if (retry) say(retry, 'info');
    if (FINAL_STATES.includes(run.state)) finish(run);
  }

  async function start(text, chosen = agent.value) {
    if (active || !text) return;
    if (!(await beforeRun())) return;
    lastPrompt = text;
    say(text, 'user');
    try {
      const context = metadata();
      const body = { prompt: text, agent: chosen, surface, ...(context ? { metadata: context } : {}) };
      const run = await api('/api/agent/runs', { method: 'POST', body });
      stream.attach(run.runId);
      apply(seen.get(run.runId) ?? run);
    } catch (error) {
      say(`${error.code}: ${error.message}`, 'failed', chosen === 'local' ? [] : [['Use local agent & retry', () => start(text, 'local')]]);
    }
  }

  function applySettings(next) {
    settings = next;
    applyAgentChoice(agent, next);
    setRun(active);
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = prompt.value.trim().slice(0, MAX_PROMPT_CHARS);
    if (!text || active) return;
    prompt.value = '';
    start(text);
  });
  prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  cancel.addEventListener('click', () => {
    if (active) api(`/api/agent/runs/${encodeURIComponent(active.runId)}/cancel`, { method: 'POST' }).catch(() => {});
  });
  agent.addEventListener('change', () => setRun(active));
  // Leaving the route aborts the in-flight execution (provider request, call, preview wait).
  if (cancelOnLeave) {
    window.addEventListener('pagehide', () => {
      if (active) cancelRunOnLeave(active.runId);
    });
  }
  api('/api/settings').then(applySettings).catch(() => applySettings(null));
  setRun(null);

  return {
    run: start,
    onAgentEvent(run) {
      seen.set(run.runId, run);
      if (seen.size > 32) seen.delete(seen.keys().next().value);
      if (active?.runId === run.runId) apply(run);
      else if (clientRuns && !active && run.agent === 'mcp') showClientRun(run);
    },
    onStreamEvent: (message) => stream.onEvent(message),
    applySettings,
    activeRun: () => active,
    say,
  };
}

// ---------------------------------------------------------------- tool palette

/** The surface's tool palette: inspect a tool, edit its sample, run it directly. */
export function createPalette({ surface, list, detail, args, run, output, sample, onResult = () => {} }) {
  let tools = [];
  let selected = null;
  let edited = false;

  function policyText(tool) {
    return tool.annotations?.readOnlyHint ? 'allow' : 'local demo allow · model and MCP calls ask for approval';
  }

  function renderList() {
    list.replaceChildren(...tools.map((tool) => {
      const server = serverOf(tool.name);
      return el('li', {},
        el('button', {
          type: 'button', className: `palette-tool${server ? ' mounted' : ''}`, textContent: tool.name,
          title: server ? `${tool.title ?? tool.name} · from the MCP server "${server}"` : tool.title ?? tool.name,
          dataset: { tool: tool.name, ...(server ? { server } : {}) },
          attrs: { 'aria-pressed': String(tool.name === selected) },
          on: { click: () => select(tool.name) },
        }));
    }));
  }

  function select(name) {
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) return;
    selected = name;
    renderList();
    detail.replaceChildren(
      el('h3', { textContent: tool.title ?? tool.name }),
      el('p', { className: 'tool-desc', textContent: tool.description ?? '' }),
      el('p', { className: 'tool-policy', textContent: `Policy: ${policyText(tool)}` }));
    edited = false;
    refreshSample();
    run.disabled = false;
  }

  function refreshSample() {
    if (!selected || edited) return;
    args.value = JSON.stringify(sample(selected) ?? {}, null, 2);
  }

  async function execute() {
    if (!selected) return;
    const typed = parseToolArguments(args.value);
    if (typed.invalid) {
      output.textContent = typed.invalid;
      output.dataset.state = 'error';
      return;
    }
    const parsed = await confirmToolRun(tools.find((tool) => tool.name === selected), typed.args, run);
    if (!parsed) return;
    run.disabled = true;
    output.textContent = `Running ${selected}…`;
    output.dataset.state = 'running';
    try {
      const result = await callTool(selected, parsed);
      const text = JSON.stringify(result.isError ? { error: result.error } : result.structuredContent ?? result.content, null, 2);
      output.textContent = text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n… (truncated)` : text;
      // A committed result is applied (only its preview was not confirmed), not an error.
      output.dataset.state = isCommitted(result) ? 'applied' : result.isError ? 'error' : 'ok';
      edited = false;
      onResult(selected, result);
    } catch (error) {
      output.textContent = `${error.code}: ${error.message}`;
      output.dataset.state = 'error';
    } finally {
      run.disabled = false;
    }
  }

  args.addEventListener('input', () => { edited = true; });
  run.addEventListener('click', execute);
  run.disabled = true;

  return {
    /** The page's own tools, then the tools mounted from MCP servers (every page can run them). */
    async load() {
      const data = await api('/api/tools');
      const own = data.tools.filter((tool) => tool.name.startsWith(`${surface}.`));
      const mounted = data.tools.filter((tool) => serverOf(tool.name) !== null);
      tools = [...own, ...mounted];
      renderList();
    },
    select,
    refreshSample,
  };
}

// ---------------------------------------------------------------- preview

/**
 * The sandboxed preview iframe and its acknowledgement forwarding. With `stylesheetsPath(to,
 * from)` (the surface's stylesheet route) a revision that changed only stylesheets is swapped
 * into the running document instead of reloading it (live-css.js).
 */
export function createPreview({ iframe, status, address, documentPath, ackPath, stylesheetsPath = null, onAcknowledged = () => {} }) {
  let current = null;
  const live = createLiveStylesheets({ iframe, stylesheetsPath, load: (revision) => { iframe.src = documentPath(revision); } });

  function setStatus(text, state) {
    status.textContent = text;
    status.dataset.state = state;
  }

  window.addEventListener('message', (event) => {
    // Only the preview iframe's own window, and only for the revision it currently shows.
    if (event.source !== iframe.contentWindow) return;
    const message = event.data;
    if (!message || message.revision !== current) return;
    if (message.type === RUNTIME_ERROR) {
      // The host keeps the revision's runtime errors for its status tools.
      api(ackPath, { method: 'POST', body: message }).catch(() => {});
      return;
    }
    if (message.type !== READY && message.type !== ERROR) return;
    live.acknowledge(message.revision, message.type === READY);
    if (message.type === READY) setStatus(`revision ${message.revision} ready`, 'ready');
    else setStatus(`revision ${message.revision} error`, 'error');
    const body = message.type === READY
      ? { type: READY, revision: message.revision }
      : { type: ERROR, revision: message.revision, message: String(message.message ?? '').slice(0, 500) };
    api(ackPath, { method: 'POST', body }).then(() => onAcknowledged(body)).catch(() => {});
  });

  return {
    /** `liveSince`: the state's `liveStylesheetsSince` (see live-css.js), when known. */
    show(revision, force = false, liveSince = undefined) {
      if (!force && revision === current) return;
      current = revision;
      setStatus(`loading revision ${revision}`, 'loading');
      address.textContent = documentPath(revision);
      live.show(revision, force, null, liveSince ?? undefined);
    },
    revision: () => current,
  };
}

/**
 * Wires a tab list: click selects, ArrowLeft/ArrowRight move along (roving tabindex), and only
 * the selected tab's panel (`aria-controls`) is shown; `onSelect(name)` follows each selection.
 * `tablist` is the element holding the tabs.
 */
export function wireTabs(tablist, onSelect = () => {}) {
  const tabs = [...tablist.querySelectorAll('[role="tab"]')];
  const select = (name) => {
    for (const tab of tabs) {
      const selected = tab.dataset.tab === name;
      tab.setAttribute('aria-selected', String(selected));
      tab.tabIndex = selected ? 0 : -1;
      document.getElementById(tab.getAttribute('aria-controls')).hidden = !selected;
    }
    onSelect(name);
  };
  for (const tab of tabs) {
    tab.addEventListener('click', () => select(tab.dataset.tab));
    tab.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
      const next = tabs[(tabs.indexOf(tab) + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
      select(next.dataset.tab);
      next.focus();
    });
  }
}

/** Shows the event socket's state on `badge` and reports a lost connection through `status`. */
export function showConnection(badge, connected, status) {
  badge.dataset.state = connected ? 'connected' : 'reconnecting';
  badge.textContent = connected ? 'live' : 'reconnecting…';
  if (!connected) status('Connection to the studio host lost; reconnecting…', true);
  else status('');
}
