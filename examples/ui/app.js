// Live Code Studio page: UI only. The host owns the registry, workspace, approvals and trace;
// every mutation goes through POST /api/tools/call (a direct local call) or an agent run.

const token = document.querySelector('meta[name="studio-token"]').content;
const MAX_SOURCE_CHARS = 80000;
const DRAFT_IDLE_MS = 700;
const MAX_CHAT_ENTRIES = 200;

const $ = (id) => document.getElementById(id);
const state = {
  status: null,
  files: [],
  activePath: null,
  draft: null,
  draftTimer: null,
  previewRevision: null,
  activeRun: null,
  trace: new Map(),
  tools: [],
  lastPrompt: '',
};

async function api(path, { method = 'GET', body } = {}) {
  const headers = { 'x-studio-token': token };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = data?.error ?? { code: `HTTP_${response.status}`, message: text };
    throw Object.assign(new Error(error.message), error);
  }
  return data;
}

async function callTool(name, args = {}) {
  return api('/api/tools/call', { method: 'POST', body: { method: 'tools/call', params: { name, arguments: args } } });
}

// ---------------------------------------------------------------- workspace state

async function refreshState() {
  const data = await api('/api/state');
  state.status = data.status;
  state.files = data.files;
  renderHeader();
  renderTree();
  renderApprovals(data.approvals);
  if (!state.activePath || !state.files.some((f) => f.path === state.activePath)) {
    state.activePath = data.status.activePath;
  }
  if (state.draft === null) await loadActiveFile();
  showPreview(data.status.revision);
}

function renderHeader() {
  const { status } = state;
  const storage = $('storage-badge');
  storage.textContent = `storage: ${status.storageMode}${status.storageError ? ' (!)' : ''}`;
  storage.dataset.mode = status.storageMode;
  storage.title = status.storageError ?? 'Where the workspace is persisted';
  const folder = status.folder ?? {};
  $('folder-badge').textContent = folder.connected ? `folder: ${folder.name} · ${folder.permission}` : 'browser workspace';
  $('revision-badge').textContent = `rev ${status.revision}`;
}

function renderTree() {
  const tree = $('file-tree');
  tree.replaceChildren();
  const seenDirs = new Set();
  const sorted = [...state.files].sort((a, b) => a.path.localeCompare(b.path));
  for (const file of sorted) {
    const parts = file.path.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      const dir = parts.slice(0, depth).join('/');
      if (seenDirs.has(dir)) continue;
      seenDirs.add(dir);
      const li = document.createElement('li');
      li.className = 'dir';
      li.style.paddingLeft = `${12 + (depth - 1) * 12}px`;
      li.textContent = `${parts[depth - 1]}/`;
      tree.append(li);
    }
    const li = document.createElement('li');
    li.setAttribute('role', 'treeitem');
    li.dataset.path = file.path;
    li.style.paddingLeft = `${12 + (parts.length - 1) * 12}px`;
    li.textContent = parts.at(-1);
    if (file.dirty) {
      const marker = document.createElement('span');
      marker.className = 'dirty';
      marker.textContent = '●';
      marker.title = 'Unsaved changes';
      li.append(marker);
    }
    li.setAttribute('aria-selected', String(file.path === state.activePath));
    li.addEventListener('click', () => openFile(file.path));
    tree.append(li);
  }
}

async function openFile(path) {
  await flushDraft();
  const result = await callTool('workspace.openFile', { path });
  if (result.isError) return showEditorStatus(result.error.message, true);
  state.activePath = path;
  await loadActiveFile();
  renderTree();
}

async function loadActiveFile() {
  const editor = $('editor');
  const file = state.files.find((f) => f.path === state.activePath);
  $('editor-path').textContent = state.activePath ?? '–';
  if (!file || file.kind !== 'text') {
    editor.value = file ? `(${file.mimeType} asset, ${file.sizeBytes} bytes)` : '';
    editor.disabled = true;
    return;
  }
  const result = await callTool('workspace.readFile', { path: state.activePath });
  if (result.isError) return showEditorStatus(result.error.message, true);
  editor.value = result.structuredContent.source;
  editor.disabled = Boolean(state.activeRun);
  state.draft = null;
  updateEditorMeta();
}

function updateEditorMeta() {
  const editor = $('editor');
  const before = editor.value.slice(0, editor.selectionStart);
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  $('cursor-pos').textContent = `Ln ${line}, Col ${column} · ${editor.value.split('\n').length} lines`;
  const count = editor.value.length;
  $('char-count').textContent = `${count.toLocaleString()} / ${MAX_SOURCE_CHARS.toLocaleString()}`;
  editor.classList.toggle('over-budget', count > MAX_SOURCE_CHARS);
}

function showEditorStatus(message, isError = false) {
  const line = $('editor-status');
  line.textContent = message;
  line.classList.toggle('error', isError);
}

async function flushDraft() {
  clearTimeout(state.draftTimer);
  if (state.draft === null) return;
  const { path, source } = state.draft;
  state.draft = null;
  const result = await callTool('workspace.writeFile', { path, source, expectedRevision: state.status.revision });
  if (result.isError) {
    showEditorStatus(`${result.error.code}: ${result.error.message}`, true);
    await refreshState();
    return;
  }
  showEditorStatus(`Saved to the workspace · revision ${result.structuredContent.revision}`);
}

// ---------------------------------------------------------------- preview

function showPreview(revision) {
  if (state.previewRevision === revision) return;
  state.previewRevision = revision;
  $('preview-status').textContent = `loading revision ${revision}`;
  $('preview').src = `/preview/${revision}`;
}

window.addEventListener('message', (event) => {
  const frame = $('preview');
  if (event.source !== frame.contentWindow) return;
  const message = event.data;
  if (!message || message.revision !== state.previewRevision) return;
  const ok = message.type === 'context-action.preview.ready';
  $('preview-status').textContent = ok ? `revision ${message.revision} ready` : `revision ${message.revision} error: ${message.message}`;
  api('/api/preview/ack', { method: 'POST', body: message }).catch(() => {});
});

// ---------------------------------------------------------------- approvals

function renderApprovals(pending) {
  const box = $('approvals');
  box.replaceChildren();
  for (const approval of pending ?? []) {
    const card = document.createElement('div');
    card.className = 'approval';
    card.dataset.approvalId = approval.id;
    const title = document.createElement('h3');
    title.textContent = approval.name;
    const description = document.createElement('p');
    description.textContent = approval.description;
    const meta = document.createElement('p');
    meta.textContent = `${approval.source}${approval.mode ? ` · ${approval.mode}` : ''} · arguments: ${approval.argumentKeys.join(', ') || 'none'}`;
    card.append(title, description, meta);
    if (approval.safeArgumentPreview) {
      const preview = document.createElement('p');
      preview.textContent = approval.safeArgumentPreview;
      card.append(preview);
    }
    const buttons = document.createElement('div');
    buttons.className = 'buttons';
    const deny = button('Deny', () => resolveApproval(approval.id, 'deny'));
    deny.className = 'deny';
    const approve = button('Approve', () => resolveApproval(approval.id, 'allow'));
    approve.className = 'approve';
    buttons.append(deny, approve);
    card.append(buttons);
    box.append(card);
  }
}

async function resolveApproval(id, decision) {
  await api(`/api/approvals/${encodeURIComponent(id)}`, { method: 'POST', body: { decision } }).catch(() => {});
}

function button(label, onClick) {
  const element = document.createElement('button');
  element.type = 'button';
  element.textContent = label;
  element.addEventListener('click', onClick);
  return element;
}

// ---------------------------------------------------------------- chat and agent runs

function chat(text, kind, actions = []) {
  const log = $('chat-log');
  const entry = document.createElement('li');
  entry.className = kind;
  entry.textContent = text;
  if (actions.length) {
    const row = document.createElement('div');
    row.className = 'recovery';
    for (const [label, handler] of actions) row.append(button(label, handler));
    entry.append(row);
  }
  log.append(entry);
  while (log.children.length > MAX_CHAT_ENTRIES) log.firstElementChild.remove();
  entry.scrollIntoView({ block: 'end' });
}

async function runPrompt(prompt, agent = $('agent-select').value) {
  await flushDraft();
  state.lastPrompt = prompt;
  chat(prompt, 'user');
  try {
    const run = await api('/api/agent/runs', { method: 'POST', body: { prompt, agent } });
    setActiveRun(run);
  } catch (error) {
    chat(`${error.code}: ${error.message}`, 'failed', [['Use local agent & retry', () => runPrompt(prompt, 'local')]]);
  }
}

function setActiveRun(run) {
  state.activeRun = run && !['completed', 'failed', 'denied', 'cancelled'].includes(run.state) ? run : null;
  $('cancel-run').disabled = !state.activeRun;
  $('send-prompt').disabled = Boolean(state.activeRun);
  $('clear-trace').disabled = Boolean(state.activeRun);
  $('editor').disabled = Boolean(state.activeRun) || !state.files.some((f) => f.path === state.activePath && f.kind === 'text');
  const badge = $('agent-badge');
  badge.dataset.state = run ? run.state : 'idle';
  badge.textContent = run ? `agent ${run.state}` : 'agent idle';
}

const RECOVERY_LABELS = {
  retry: 'Retry',
  'reread-and-retry': 'Re-read & retry',
  'refresh-preview': 'Refresh preview',
  'reconnect-folder': 'Reconnect folder',
  'grant-permission': 'Grant access',
  'use-local-agent': 'Use local agent & retry',
};

function recoveryHandler(action, prompt) {
  switch (action) {
    case 'refresh-preview': return () => callTool('preview.refresh');
    case 'reconnect-folder': return () => $('folder-path').focus();
    case 'use-local-agent': return () => runPrompt(prompt, 'local');
    default: return () => runPrompt(prompt);
  }
}

function onAgentEvent(run) {
  if (state.activeRun && run.runId !== state.activeRun.runId) return;
  setActiveRun(run);
  if (!run.report) return;
  const outcome = run.report.outcome;
  const prompt = state.lastPrompt;
  switch (outcome.status) {
    case 'completed': chat(outcome.message, 'completed'); break;
    case 'denied': chat(`Denied: ${outcome.tool} — ${outcome.message}`, 'denied', [['Retry', () => runPrompt(prompt)]]); break;
    case 'cancelled': chat(`Cancelled: ${outcome.message}`, 'cancelled', [['Retry', () => runPrompt(prompt)]]); break;
    default: {
      const actions = (outcome.actions ?? []).map((action) => [RECOVERY_LABELS[action] ?? action, recoveryHandler(action, prompt)]);
      chat(`${outcome.code}: ${outcome.message}`, 'failed', actions);
    }
  }
  refreshState();
}

// ---------------------------------------------------------------- trace and catalog

function renderTraceRow(row) {
  state.trace.set(row.traceId, row);
  const log = $('trace-log');
  let item = log.querySelector(`[data-trace-id="${CSS.escape(row.traceId)}"]`);
  if (!item) {
    item = document.createElement('li');
    item.dataset.traceId = row.traceId;
    log.append(item);
  }
  const label = row.status === 'failed' && row.retryable !== undefined ? (row.retryable ? 'retryable' : 'terminal') : '';
  item.replaceChildren();
  const name = document.createElement('span');
  name.textContent = `${row.kind} ${row.name}`;
  const status = document.createElement('span');
  status.className = `status-${row.status}`;
  status.textContent = `${row.status}${row.durationMs !== undefined ? ` · ${row.durationMs} ms` : ''}`;
  const meta = document.createElement('span');
  meta.className = 'meta';
  meta.textContent = [row.source && `${row.source} · ${row.mode ?? ''}`, row.errorCode, label, row.toolCallId && `call ${row.toolCallId}`, `trace ${row.traceId}`].filter(Boolean).join(' · ');
  item.append(name, status, meta);
}

async function loadTrace() {
  const data = await api('/api/trace');
  $('trace-log').replaceChildren();
  state.trace.clear();
  data.rows.forEach(renderTraceRow);
}

async function loadCatalog() {
  const data = await api('/api/tools');
  state.tools = data.tools;
  renderCatalog();
}

function renderCatalog() {
  const query = $('catalog-search').value.trim().toLowerCase();
  const list = $('catalog-list');
  list.replaceChildren();
  for (const tool of state.tools) {
    if (query && !`${tool.name} ${tool.description ?? ''}`.toLowerCase().includes(query)) continue;
    const item = document.createElement('li');
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = tool.name;
    const tag = document.createElement('span');
    const readOnly = tool.annotations?.readOnlyHint === true;
    tag.className = readOnly ? 'tag' : 'tag ask';
    tag.textContent = readOnly ? 'allow' : 'approval for model/MCP';
    const description = document.createElement('div');
    description.className = 'desc';
    description.textContent = tool.description ?? '';
    item.append(name, tag, description);
    list.append(item);
  }
}

// ---------------------------------------------------------------- events

function connectEvents() {
  const socket = new WebSocket(`ws://${location.host}/api/events?client=ui&token=${encodeURIComponent(token)}`);
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    switch (message.type) {
      case 'workspace': refreshState(); break;
      case 'approvals': renderApprovals(message.pending); break;
      case 'trace': renderTraceRow(message.row); break;
      case 'agent': onAgentEvent(message.run); break;
      case 'settings': break;
      default: break;
    }
  });
  socket.addEventListener('close', () => setTimeout(connectEvents, 1000));
}

// ---------------------------------------------------------------- dialogs and controls

function openModal(dialog, trigger, focusTarget) {
  dialog.showModal();
  document.body.style.overflow = 'hidden';
  focusTarget?.focus();
  dialog.addEventListener('close', () => {
    document.body.style.overflow = '';
    trigger?.focus();
  }, { once: true });
  dialog.addEventListener('click', (event) => { if (event.target === dialog) dialog.close(); });
}

function wireControls() {
  const editor = $('editor');
  editor.addEventListener('input', () => {
    state.draft = { path: state.activePath, source: editor.value };
    updateEditorMeta();
    clearTimeout(state.draftTimer);
    state.draftTimer = setTimeout(flushDraft, DRAFT_IDLE_MS);
  });
  editor.addEventListener('blur', flushDraft);
  editor.addEventListener('keyup', updateEditorMeta);
  editor.addEventListener('click', updateEditorMeta);

  $('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const prompt = $('prompt').value.trim();
    if (!prompt || state.activeRun) return;
    $('prompt').value = '';
    runPrompt(prompt);
  });
  $('cancel-run').addEventListener('click', () => state.activeRun && api(`/api/agent/runs/${state.activeRun.runId}/cancel`, { method: 'POST' }).catch(() => {}));
  $('refresh-preview').addEventListener('click', () => { state.previewRevision = null; callTool('preview.refresh').then(refreshState); });
  $('fullscreen-preview').addEventListener('click', () => document.querySelector('.preview-pane').classList.add('fullscreen'));
  $('save-button').addEventListener('click', save);
  $('export-button').addEventListener('click', () => { window.location.href = '/api/export'; });
  $('open-folder-button').addEventListener('click', openFolder);
  $('copy-trace').addEventListener('click', () => navigator.clipboard?.writeText(JSON.stringify([...state.trace.values()], null, 2)));
  $('clear-trace').addEventListener('click', () => api('/api/trace', { method: 'DELETE' }).then(loadTrace).catch((error) => chat(error.message, 'failed')));
  $('catalog-search').addEventListener('input', renderCatalog);

  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener('click', () => {
      for (const other of document.querySelectorAll('[role="tab"]')) {
        other.setAttribute('aria-selected', String(other === tab));
        $(`tab-${other.dataset.tab}`).hidden = other !== tab;
      }
    });
  }

  $('settings-button').addEventListener('click', async () => {
    const settings = await api('/api/settings');
    $('settings-model').value = settings.model;
    $('settings-endpoint').value = settings.endpoint;
    $('settings-policy').value = settings.dataPolicy;
    $('settings-key').value = '';
    $('settings-key').placeholder = settings.hasApiKey ? 'a key is set (leave empty to keep it)' : 'kept in host memory';
    $('settings-error').textContent = '';
    openModal($('settings-dialog'), $('settings-button'), $('settings-model'));
  });
  $('settings-cancel').addEventListener('click', () => $('settings-dialog').close());
  $('settings-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { model: $('settings-model').value, endpoint: $('settings-endpoint').value, dataPolicy: $('settings-policy').value, saveKey: $('settings-save-key').checked };
    if ($('settings-key').value) body.apiKey = $('settings-key').value;
    try {
      await api('/api/settings', { method: 'PUT', body });
      $('settings-dialog').close();
    } catch (error) {
      $('settings-error').textContent = error.message;
    }
  });

  $('new-file-button').addEventListener('click', () => {
    $('new-file-error').textContent = '';
    $('new-file-path').value = '';
    openModal($('new-file-dialog'), $('new-file-button'), $('new-file-path'));
  });
  $('new-file-cancel').addEventListener('click', () => $('new-file-dialog').close());
  $('new-file-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const result = await callTool('workspace.createFile', { path: $('new-file-path').value, source: '', expectedRevision: state.status.revision });
    if (result.isError) {
      $('new-file-error').textContent = result.error.message;
      return;
    }
    $('new-file-dialog').close();
    state.activePath = result.structuredContent.activePath;
    state.draft = null;
    await refreshState();
    await loadActiveFile();
  });

  document.addEventListener('keydown', (event) => {
    if (document.querySelector('dialog[open]')) return;
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
      event.preventDefault();
      save();
    }
    if (event.key === 'Escape') document.querySelector('.preview-pane').classList.remove('fullscreen');
  });
}

async function save() {
  await flushDraft();
  const tool = state.status.folder?.connected ? 'workspace.saveAll' : 'workspace.saveCheckpoint';
  const result = await callTool(tool, { expectedRevision: state.status.revision });
  showEditorStatus(result.isError ? `${result.error.code}: ${result.error.message}` : 'Saved.', result.isError);
  await refreshState();
}

async function openFolder() {
  const path = $('folder-path').value.trim();
  if (!path) return;
  try {
    await api('/api/folder/open', { method: 'POST', body: { path } });
    state.draft = null;
    await refreshState();
    await loadActiveFile();
  } catch (error) {
    showEditorStatus(`${error.code}: ${error.message}`, true);
  }
}

function applyDeepLink() {
  const url = new URL(window.location.href);
  const prompt = url.searchParams.get('prompt');
  if (prompt === null) return;
  $('prompt').value = prompt.slice(0, 4000);
  url.searchParams.delete('prompt');
  window.history.replaceState(null, '', url);
}

wireControls();
applyDeepLink();
connectEvents();
await refreshState();
await Promise.all([loadTrace(), loadCatalog()]);
