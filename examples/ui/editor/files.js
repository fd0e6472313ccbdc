// The editor's file list. Text files open as the document through editor.openFile (which waits
// until the preview shows the new document revision); assets are listed but cannot be a document.

import { el } from '../lib/dom.js';

/** Creates the list in `list`; `onOpen(path, button)` opens a text file. */
export function createFileList({ list, onOpen }) {
  let files = [];
  let activePath = null;
  let dirty = new Set();
  let busy = false;

  function item(file) {
    const active = file.path === activePath;
    const isDirty = dirty.has(file.path) || file.dirty;
    const label = el('span', { className: 'file-name', textContent: file.path });
    const meta = el('span', { className: 'file-meta', textContent: file.kind === 'asset' ? 'asset' : file.language, title: `${file.mimeType} · ${file.sizeBytes} bytes` });
    const mark = isDirty ? el('span', { className: 'dirty-mark', textContent: '●', title: 'Unsaved', attrs: { 'aria-label': 'unsaved' } }) : null;
    if (file.kind !== 'text') {
      // Visible for context, but not a control: an asset cannot be opened as the document.
      return el('li', { className: 'file asset', dataset: { path: file.path, kind: 'asset' }, title: 'Assets are shown in the preview but cannot be opened as the document' },
        label, meta, mark);
    }
    return el('li', { className: 'file', dataset: { path: file.path, kind: 'text' } },
      el('button', {
        type: 'button',
        className: `file-button${active ? ' active' : ''}`,
        disabled: busy,
        attrs: { 'aria-current': active ? 'true' : 'false', 'aria-label': `Open ${file.path}${isDirty ? ' (unsaved)' : ''}` },
        on: { click: (event) => { if (!active) onOpen(file.path, event.currentTarget); } },
      }, label, meta, mark));
  }

  function render() {
    list.replaceChildren(...files.map(item));
    if (!files.length) list.append(el('li', { className: 'empty', textContent: 'No files.' }));
  }

  return {
    /** Shows `nextFiles` (FileSummary list) with `nextActive` open and `dirtyPaths` unsaved. */
    render(nextFiles, nextActive, dirtyPaths = []) {
      files = nextFiles ?? [];
      activePath = nextActive;
      dirty = new Set(dirtyPaths);
      render();
    },
    /** Disables the buttons while an open is in flight (one document change at a time). */
    setBusy(next) {
      busy = next;
      render();
    },
  };
}
