// surface-page.js: the bootstrap both surface pages (/editor, /web) share. It builds the kit's
// side panels (chat, palette, trace, approvals) and the sandboxed preview from the page's
// `<surface>-*` elements, keeps the page on the host's newest state and routes the event
// socket; the page passes in only what differs: how it renders its state, what a surface event
// or a tool result means to it, and its own start-up steps.
//
//   createSurfacePage({ surface, unreadable, render, revisionOf, isStale?, onSurface?,
//       sample, doneText, appliedText? }) -> { status, fail, refresh, view(), preview,
//       approvals, trace, composer, palette, start({ greeting, hasUnsentWork, beforeRead?,
//       afterRead?, loads? }) }
//     render(state) draws the page's part of GET /api/<surface>/state; the kit then shows
//     revisionOf(state) in the preview and refreshes the palette's sample. A read that
//     isStale(next, current) is dropped. onSurface(data) handles this surface's events (by
//     default a re-read). doneText(name, result) and appliedText(result) word a palette result
//     on the status line.

import {
  api, connectEvents, createApprovals, createComposer, createPalette, createPreview, createTrace, isCommitted,
  restartEndedApprovals, showConnection, unconfirmedText, wireTabs,
} from './surface.js';
import { $ } from './dom.js';
import { guardLeaving } from './leave-guard.js';

/** The surface page of `surface`, wired to its `<surface>-*` elements. */
export function createSurfacePage({
  surface, unreadable, render, revisionOf, isStale = () => false, onSurface = null, sample, doneText,
  appliedText = unconfirmedText,
}) {
  const part = (name) => $(`${surface}-${name}`);
  /** The last /api/<surface>/state snapshot the page rendered. */
  let view = null;

  function status(text, isError = false) {
    part('status').textContent = text;
    part('status').classList.toggle('error', isError);
  }

  const fail = (error) => status(`${error.code}: ${error.message}`, true);

  const preview = createPreview({
    iframe: part('preview'),
    status: part('preview-status'),
    address: part('preview-address'),
    documentPath: (revision) => `/${surface}/preview/${revision}`,
    ackPath: `/api/${surface}/preview/ack`,
    // A revision that changed only stylesheets is swapped into the running document.
    stylesheetsPath: (to, from) => `/api/${surface}/preview/stylesheets/${to}?from=${from}`,
  });

  const approvals = createApprovals({
    container: part('approvals'),
    surface,
    onError: fail,
    onLost: (lost) => composer.say(restartEndedApprovals(lost), 'info'),
  });

  const trace = createTrace({
    list: part('trace'),
    session: part('trace-session'),
    copy: part('trace-copy'),
    download: part('trace-download'),
    clear: part('trace-clear'),
    onStatus: status,
  });

  const composer = createComposer({
    surface,
    form: part('chat-form'),
    prompt: part('prompt'),
    agent: part('agent'),
    cancel: part('cancel'),
    submit: part('run'),
    badge: part('agent-badge'),
    status: part('run-status'),
    log: part('chat-log'),
    onRunChange: (active) => trace.setRunActive(active),
    onFinished: () => refresh(),
  });

  const palette = createPalette({
    surface,
    list: part('palette'),
    detail: part('tool-detail'),
    args: part('tool-args'),
    run: part('tool-run'),
    output: part('tool-output'),
    sample: (name) => sample(name, view),
    onResult: (name, result) => {
      if (isCommitted(result)) status(`${name} applied · ${appliedText(result)}; ⟳ reloads the preview`);
      else status(result.isError ? `${name}: ${result.error.code}` : `${name} done${doneText(result)}`, Boolean(result.isError));
      refresh();
    },
  });

  function show(next) {
    view = next;
    render(next);
    preview.show(revisionOf(next), false, next.liveStylesheetsSince);
    palette.refreshSample();
  }

  let refreshing = null;
  let again = false;

  /** Reads /api/<surface>/state and re-renders; a call during a read schedules exactly one more. */
  async function refresh() {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        const next = await api(`/api/${surface}/state`);
        if (!view || !isStale(next, view)) show(next);
      } while (again);
    })();
    try {
      await refreshing;
    } catch (error) {
      status(`Could not read ${unreadable}: ${error.message}`, true);
    } finally {
      refreshing = null;
    }
    return undefined;
  }

  function onMessage(message) {
    switch (message.type) {
      case 'hello':
        approvals.render(message.approvals);
        refresh();
        break;
      case 'surface':
        if (message.surface !== surface) break;
        if (onSurface) onSurface(message.data ?? {}, view);
        else refresh();
        break;
      case 'approvals': approvals.render(message.pending); break;
      case 'trace': trace.onRow(message.row); break;
      case 'agent': composer.onAgentEvent(message.run); break;
      case 'agentStream': composer.onStreamEvent(message); break;
      case 'settings': composer.applySettings(message.settings); break;
      // A server mounted, unmounted or changed its tools: the palette lists what runs now.
      case 'mcpServers': palette.load(); break;
      case 'lagged':
        refresh();
        trace.load();
        break;
      default: break;
    }
  }

  /**
   * Starts the page: leaving asks while `hasUnsentWork()`, the side tabs and the preview's
   * reload work, the chat greets, the state is read (between `beforeRead` and `afterRead`), the
   * event socket connects, and once the trace, the palette and the page's own `loads` are in
   * the page is marked ready.
   */
  async function start({ greeting, hasUnsentWork, beforeRead = async () => {}, afterRead = async () => {}, loads = () => [] }) {
    guardLeaving(hasUnsentWork);
    wireTabs(document.querySelector(`.${surface}-side`));
    part('preview-reload').addEventListener('click', () => {
      if (view) preview.show(revisionOf(view), true);
    });
    composer.say(greeting, 'info');
    await beforeRead();
    await refresh();
    await afterRead();
    connectEvents({ surface, onMessage, onConnection: (connected) => showConnection(part('connection'), connected, status) });
    await Promise.all([trace.load(), palette.load(), ...loads()]);
    document.body.dataset.ready = 'true';
  }

  return { status, fail, refresh, view: () => view, preview, approvals, trace, composer, palette, start };
}
