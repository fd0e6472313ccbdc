// Saving to the linked folder: Save (the open file, editor.saveFile) and Save all (every dirty
// text file, editor.saveAll), both direct local calls guarded by the workspace revision the page
// shows. A partial saveAll leaves the written files clean and the rest dirty; the page says which.
// A save whose outcome is unknown (the write may or may not have landed) is listed from
// GET /api/editor/saves with a "Check folder and recover" action, which reads the files back
// through the folder and completes the record only when every byte matches.

import { api, callTool } from '../lib/surface.js';
import { button, el } from '../lib/dom.js';

/** Unknown saves shown at once (the host bounds its listing too). */
const MAX_SHOWN_UNKNOWN = 20;

/** Creates the save controls. `beforeSave()` flushes the document draft first. */
export function createSaves({ save, saveAll, status, unknownList, unknownBox, beforeSave = async () => {}, onChanged = () => {} }) {
  let view = null;
  let busy = false;

  function setStatus(text, isError = false) {
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  function renderButtons() {
    const folder = view?.status?.folder;
    const connected = Boolean(folder?.connected);
    const dirty = view?.status?.dirtyPaths ?? [];
    const activeDirty = dirty.includes(view?.status?.activePath);
    const writable = connected && folder.permission === 'granted';
    save.disabled = busy || !writable || !activeDirty;
    saveAll.disabled = busy || !writable || dirty.length === 0;
    const why = !connected ? 'Open a folder first: saves write to the folder you opened.' : (!writable ? `The folder is ${folder.permission}.` : null);
    save.title = why ?? (activeDirty ? `Write ${view.status.activePath} to ${folder.name ?? 'the folder'} (editor.saveFile)` : 'The open file has no unsaved changes.');
    saveAll.title = why ?? (dirty.length ? `Write ${dirty.length} unsaved file(s) to ${folder.name ?? 'the folder'} (editor.saveAll)` : 'Nothing is unsaved.');
  }

  async function run(tool, args, trigger) {
    if (busy) return;
    busy = true;
    renderButtons();
    try {
      await beforeSave();
      setStatus(`${tool}…`);
      const result = await callTool(tool, { ...args(), expectedWorkspaceRevision: view?.status?.workspaceRevision })
        .catch((error) => ({ isError: true, error }));
      if (result.isError) reportFailure(result.error);
      else reportSaved(result.structuredContent);
    } finally {
      busy = false;
      renderButtons();
      trigger?.focus();
      onChanged();
      loadUnknown();
    }
  }

  function reportSaved(outcome) {
    const replayed = outcome.replayedPaths?.length ? ` (${outcome.replayedPaths.length} already in the folder)` : '';
    const left = outcome.dirtyPaths?.length ? ` · still unsaved: ${outcome.dirtyPaths.join(', ')}` : '';
    setStatus(`Saved ${outcome.savedPaths.join(', ') || 'nothing'}${replayed}${left}`);
  }

  function reportFailure(error) {
    const completed = error.details?.completedPaths;
    const partial = completed?.length ? ` Saved before the failure: ${completed.join(', ')}; the rest stay unsaved.` : '';
    setStatus(`${error.code}: ${error.message}${partial}`, true);
  }

  function unknownItem(entry) {
    const paths = (entry.save?.manifest ?? []).map((file) => file.path);
    const summary = paths.length ? paths.join(', ') : 'no manifest';
    const recover = button('Check folder and recover', async (event) => {
      const trigger = event.currentTarget;
      trigger.disabled = true;
      try {
        const result = await api('/api/editor/saves/recover', { method: 'POST', body: { key: entry.key } });
        setStatus(result.recovered ? `Recovered: the folder holds ${result.confirmedPaths.join(', ')}.` : `The save is already ${result.state}.`);
        onChanged();
      } catch (error) {
        const path = error.details?.path ? ` (${error.details.path})` : '';
        setStatus(`${error.code}: ${error.message}${path} The save stays unknown.`, true);
      } finally {
        trigger.disabled = false;
        loadUnknown();
      }
    }, { className: 'recover', title: 'Read the files back from the folder and complete the save only if every byte matches' });
    return el('li', { className: 'unknown-save', dataset: { key: entry.key } },
      el('div', { className: 'unknown-head' },
        el('code', { textContent: entry.save?.tool ?? entry.key.split(':')[0] }),
        el('span', { textContent: ` · ${entry.save?.folder ?? 'folder'} · ${summary}` })),
      entry.reason ? el('p', { className: 'hint', textContent: entry.reason }) : null,
      recover);
  }

  async function loadUnknown() {
    try {
      const listing = await api('/api/editor/saves');
      const entries = listing.unknown.slice(0, MAX_SHOWN_UNKNOWN);
      unknownList.replaceChildren(...entries.map(unknownItem));
      unknownBox.hidden = entries.length === 0;
    } catch (error) {
      unknownBox.hidden = false;
      unknownList.replaceChildren(el('li', { className: 'error', textContent: `Save records unavailable: ${error.code}` }));
    }
  }

  save.addEventListener('click', (event) => run('editor.saveFile', () => ({ path: view?.status?.activePath }), event.currentTarget));
  saveAll.addEventListener('click', (event) => run('editor.saveAll', () => ({}), event.currentTarget));
  unknownBox.hidden = true;

  return {
    /** Follows the page's view (the /api/editor/state snapshot). */
    render(next) {
      view = next;
      renderButtons();
    },
    /** Saves the open file (Ctrl+S). */
    saveActive: () => { if (!save.disabled) run('editor.saveFile', () => ({ path: view?.status?.activePath }), save); },
    loadUnknown,
  };
}
