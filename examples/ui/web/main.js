// The realtime web-coding page (/web): three file tabs with a textarea editor, the web.* tool
// palette, the agent composer, approvals, the trace and a sandboxed preview. The host owns the
// workspace; every change goes through a web.* tool (palette, editor Save or an agent run) and
// the page follows the host's events. Shared panels come from lib/surface.js.

import {
  api, connectEvents, createApprovals, createComposer, createPalette, createPreview, createTrace, isCommitted, showConnection,
  unconfirmedText, wireTabs,
} from '../lib/surface.js';
import { $ } from '../lib/dom.js';
import { guardLeaving } from '../lib/leave-guard.js';
import { createFileEditor } from './files.js';
import { sampleArguments } from './samples.js';

const SURFACE = 'web';
let workspace = null;

function status(text, isError = false) {
  $('web-status').textContent = text;
  $('web-status').classList.toggle('error', isError);
}

// ---------------------------------------------------------------- panels

const editor = createFileEditor({
  tabs: $('web-tabs'),
  panel: $('web-editor-panel'),
  textarea: $('web-editor'),
  find: $('web-find'),
  save: $('web-save'),
  revert: $('web-revert'),
  status: $('web-editor-status'),
  onSaved: () => refresh(),
});

const preview = createPreview({
  iframe: $('web-preview'),
  status: $('web-preview-status'),
  address: $('web-preview-address'),
  documentPath: (revision) => `/web/preview/${revision}`,
  ackPath: '/api/web/preview/ack',
  stylesheetsPath: (to, from) => `/api/web/preview/stylesheets/${to}?from=${from}`,
});

const approvals = createApprovals({
  container: $('web-approvals'),
  onError: (error) => status(`${error.code}: ${error.message}`, true),
});

const trace = createTrace({
  list: $('web-trace'),
  session: $('web-trace-session'),
  copy: $('web-trace-copy'),
  download: $('web-trace-download'),
  clear: $('web-trace-clear'),
  onStatus: status,
});

const composer = createComposer({
  surface: SURFACE,
  form: $('web-chat-form'),
  prompt: $('web-prompt'),
  agent: $('web-agent'),
  cancel: $('web-cancel'),
  submit: $('web-run'),
  badge: $('web-agent-badge'),
  status: $('web-run-status'),
  log: $('web-chat-log'),
  onRunChange: (active) => trace.setRunActive(active),
  onFinished: () => refresh(),
});

const palette = createPalette({
  surface: SURFACE,
  list: $('web-palette'),
  detail: $('web-tool-detail'),
  args: $('web-tool-args'),
  run: $('web-tool-run'),
  output: $('web-tool-output'),
  sample: (name) => sampleArguments(name, workspace, editor.activePath() ?? 'index.html'),
  onResult: (name, result) => {
    if (isCommitted(result)) status(`${name} applied · ${unconfirmedText(result)}; ⟳ reloads the preview`);
    else status(result.isError ? `${name}: ${result.error.code}` : `${name} done${result.structuredContent?.revision ? ` · revision ${result.structuredContent.revision}` : ''}`, Boolean(result.isError));
    refresh();
  },
});

// ---------------------------------------------------------------- workspace state

let refreshing = null;
let again = false;

/** Reads /api/web/state and re-renders; a call during a read schedules exactly one more. */
async function refresh() {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      const next = await api('/api/web/state');
      // A newer view already arrived (a write answered while this read was in flight).
      if (!workspace || next.revision >= workspace.revision) render(next);
    } while (again);
  })();
  try {
    await refreshing;
  } catch (error) {
    status(`Could not read the web workspace: ${error.message}`, true);
  } finally {
    refreshing = null;
  }
}

function render(next) {
  workspace = next;
  const storage = $('web-storage');
  storage.textContent = next.storageMode === 'memory' ? 'memory only' : `storage · ${next.storageMode}`;
  storage.dataset.mode = next.storageMode;
  storage.title = next.storageError ? `Not persisted: ${next.storageError}` : 'The web workspace is persisted in the data directory';
  $('web-revision').textContent = `rev ${next.revision}`;
  $('web-revision').dataset.revision = String(next.revision);
  editor.render(next);
  preview.show(next.revision, false, next.liveStylesheetsSince);
  palette.refreshSample();
}

// ---------------------------------------------------------------- events

function onMessage(message) {
  switch (message.type) {
    case 'hello':
      approvals.render(message.approvals);
      refresh();
      break;
    case 'surface':
      if (message.surface === SURFACE && message.data?.revision !== workspace?.revision) refresh();
      break;
    case 'approvals': approvals.render(message.pending); break;
    case 'trace': trace.onRow(message.row); break;
    case 'agent': composer.onAgentEvent(message.run); break;
    case 'agentStream': composer.onStreamEvent(message); break;
    case 'settings': composer.applySettings(message.settings); break;
    case 'lagged':
      refresh();
      trace.load();
      break;
    default: break;
  }
}

function onConnection(connected) {
  showConnection($('web-connection'), connected, status);
}

// ---------------------------------------------------------------- start

// The host keeps every draft; leaving asks only in the moment before the latest one reached it.
guardLeaving(() => editor.hasUnstoredDrafts());

wireTabs(document.querySelector('.web-side'));
$('web-preview-reload').addEventListener('click', () => {
  if (workspace) preview.show(workspace.revision, true);
});
composer.say('Ask for a change, or run a web.* tool from the Tools tab. Mutations from the agent wait for your approval.', 'info');
await editor.restore().catch((error) => status(`Could not read the kept drafts: ${error.message}`, true));
await refresh();
connectEvents({ surface: SURFACE, onMessage, onConnection });
await Promise.all([trace.load(), palette.load()]);
document.body.dataset.ready = 'true';
