// The realtime web-coding page (/web): three file tabs with a textarea editor, the web.* tool
// palette, the agent composer, approvals, the trace and a sandboxed preview. The host owns the
// workspace; every change goes through a web.* tool (palette, editor Save or an agent run) and
// the page follows the host's events. The shared panels and the start-up come from
// lib/surface-page.js.

import { $ } from '../lib/dom.js';
import { api } from '../lib/surface.js';
import { createSurfacePage } from '../lib/surface-page.js';
import { createFileEditor } from './files.js';
import { sampleArguments } from './samples.js';

const editor = createFileEditor({
  tabs: $('web-tabs'),
  panel: $('web-editor-panel'),
  textarea: $('web-editor'),
  find: $('web-find'),
  save: $('web-save'),
  revert: $('web-revert'),
  status: $('web-editor-status'),
  onSaved: () => page.refresh(),
  readWorkspace: () => api('/api/web/state'),
});

function render(workspace) {
  const storage = $('web-storage');
  storage.textContent = workspace.storageMode === 'memory' ? 'memory only' : `storage · ${workspace.storageMode}`;
  storage.dataset.mode = workspace.storageMode;
  storage.title = workspace.storageError ? `Not persisted: ${workspace.storageError}` : 'The web workspace is persisted in the data directory';
  $('web-revision').textContent = `rev ${workspace.revision}`;
  $('web-revision').dataset.revision = String(workspace.revision);
  editor.render(workspace);
}

const page = createSurfacePage({
  surface: 'web',
  unreadable: 'the web workspace',
  render,
  revisionOf: (workspace) => workspace.revision,
  // A newer view already arrived (a write answered while this read was in flight).
  isStale: (next, current) => next.revision < current.revision,
  onSurface: (data, workspace) => {
    if (data.revision !== workspace?.revision) page.refresh();
  },
  sample: (name, workspace) => sampleArguments(name, workspace, editor.activePath() ?? 'index.html'),
  doneText: (result) => (result.structuredContent?.revision ? ` · revision ${result.structuredContent.revision}` : ''),
});

await page.start({
  greeting: 'Ask for a change, or run a web.* tool from the Tools tab. Mutations from the agent wait for your approval.',
  // The host keeps every draft; leaving asks only in the moment before the latest one reached it.
  hasUnsentWork: () => editor.hasUnstoredDrafts(),
  beforeRead: () => editor.restore().catch((error) => page.status(`Could not read the kept drafts: ${error.message}`, true)),
});
