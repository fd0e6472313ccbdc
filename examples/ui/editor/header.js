// The editor header: the two revision clocks, the acknowledged preview, storage mode, the
// folder connection and the dirty paths; and the "Open folder" form, which posts a host path to
// /api/editor/folder/open after confirming that unsaved changes will be replaced.

import { api } from '../lib/surface.js';
import { confirmAction } from '../lib/modal.js';
import { skippedSummary } from '../lib/skipped.js';

/** Longest folder path the form sends. */
const MAX_FOLDER_PATH_CHARS = 1024;
/** Dirty paths named in the header before "+N more". */
const MAX_NAMED_DIRTY = 3;

/** Renders the clocks and state badges of `context` (an editor result context or status). */
export function createHeader({ workspaceRevision, documentRevision, preview, storage, folder, dirty }) {
  function setBadge(node, text, data = {}, title) {
    node.textContent = text;
    Object.assign(node.dataset, data);
    if (title !== undefined) node.title = title;
  }

  return {
    render(status) {
      setBadge(workspaceRevision, `workspace r${status.workspaceRevision}`, { revision: String(status.workspaceRevision) });
      setBadge(documentRevision, `document r${status.documentRevision}`, { revision: String(status.documentRevision) });
      this.renderPreview(status.preview);
      const memory = status.storageMode === 'memory';
      setBadge(storage, memory ? 'memory only' : `storage · ${status.storageMode}`, { mode: status.storageMode },
        status.storageError ? `Not persisted: ${status.storageError}` : 'The editor files are persisted in the data directory');
      const link = status.folder;
      if (link?.connected) {
        setBadge(folder, `folder · ${link.name ?? 'linked'} · ${link.permission}`, { permission: link.permission }, 'Saves write to this folder');
      } else if (link) {
        setBadge(folder, 'no folder', { permission: 'disconnected' }, 'Open a folder to save the editor files to disk');
      }
      const paths = status.dirtyPaths ?? [];
      const named = paths.slice(0, MAX_NAMED_DIRTY).join(', ');
      const more = paths.length > MAX_NAMED_DIRTY ? ` +${paths.length - MAX_NAMED_DIRTY} more` : '';
      setBadge(dirty, paths.length ? `unsaved · ${named}${more}` : 'all saved', { count: String(paths.length) }, paths.join('\n') || 'No unsaved files');
    },
    /** The host's acknowledged preview state (`{revision, status, message?}`). */
    renderPreview(state) {
      if (!state) return;
      setBadge(preview, `preview r${state.revision} · ${state.status}`, { revision: String(state.revision), state: state.status },
        state.message ? `Preview error: ${state.message}` : 'What the sandboxed iframe acknowledged');
    },
  };
}

/**
 * The "Open folder" form: a host path imported into the editor and linked for saving. Opening a
 * folder replaces the editor's files, so unsaved changes are confirmed first.
 */
export function wireFolderForm({ form, input, submit, status, currentView, beforeOpen = async () => {}, onOpened = () => {} }) {
  function setStatus(text, isError = false) {
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const path = input.value.trim().slice(0, MAX_FOLDER_PATH_CHARS);
    if (!path) {
      setStatus('Enter the absolute path of a folder on this machine.', true);
      input.focus();
      return;
    }
    await beforeOpen();
    const view = currentView();
    const dirty = view?.status?.dirtyPaths ?? [];
    if (dirty.length) {
      const confirmed = await confirmAction({
        title: 'Replace the editor files?',
        message: `Opening ${path} replaces the editor's files. ${dirty.length} unsaved file(s) (${dirty.join(', ')}) will be lost.`,
        confirmLabel: 'Open folder',
        trigger: submit,
      });
      if (!confirmed) {
        setStatus('Kept the current files.');
        return;
      }
    }
    submit.disabled = true;
    setStatus(`Opening ${path}…`);
    try {
      const result = await api('/api/editor/folder/open', {
        method: 'POST',
        // The person confirmed above when files were dirty; only then may the host discard them.
        body: { path, expectedWorkspaceRevision: view?.status?.workspaceRevision, discardChanges: dirty.length > 0 },
      });
      const skippedCount = result.import.skippedCount ?? 0;
      const skipped = skippedCount ? ` (${skippedCount} skipped: ${skippedSummary(result.import)})` : '';
      setStatus(`Opened ${result.import.folder?.name ?? path}: ${result.import.fileCount} files${skipped}.`);
      onOpened(result);
    } catch (error) {
      setStatus(`${error.code}: ${error.message}`, true);
    } finally {
      submit.disabled = false;
    }
  });
}
