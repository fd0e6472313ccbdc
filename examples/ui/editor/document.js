// The document editor: the shared code editor (lib/code-editor.js) over a textarea bound to
// the editor's open document. Typing is sent to the
// host with editor.setDocument after a short pause, carrying the document revision the draft
// was started from as expectedDocumentRevision. When the document moved on underneath (an agent
// run, the palette, another tab), the draft is merged onto the newer document (lib/merge.js:
// changes that do not overlap both stay, the caret stays put) and sent again; overlapping changes
// keep the draft and show the stale notice. It never silently overwrites the newer document or
// the person's text.

import { createCodeEditor, languageOf } from '../lib/code-editor.js';
import { keepDraft } from '../lib/launch.js';
import { merge3 } from '../lib/merge.js';
import { callTool, isCommitted, unconfirmedText } from '../lib/surface.js';

/** Longest document the host accepts (`editor.setDocument` enforces the same bound). */
export const MAX_DOCUMENT_CHARS = 80000;
/** Pause after the last keystroke before the draft is sent. */
export const SAVE_DELAY_MS = 500;
const STALE_CODE = 'WORKSPACE_REVISION_CONFLICT';

/**
 * Creates the editor over its elements. `stale` is the notice shown when the draft overlaps a
 * change made elsewhere; its two buttons discard the draft or send it over the newer document.
 * `onStale()` asks the page to read the host's state again (a write found the document moved).
 */
export function createDocumentEditor({ textarea, path, status, find, stale, staleText, discard, overwrite, onWritten = () => {}, onStale = () => {}, surface = 'editor' }) {
  // What the host holds: the document's path, source and revision.
  let stored = null;
  // The person's text when it differs from `stored.source`, the revision it is based on and
  // the source it was started from (kept in the tab until the host stores it: lib/launch.js).
  let draft = null;
  let timer = null;
  let inFlight = null;
  // A conflict the person has to resolve before anything else is sent.
  let conflict = null;
  // The newest document the host showed while our write was in flight (merged onto afterwards).
  let seen = null;
  const code = createCodeEditor({
    textarea,
    idPrefix: 'editor-',
    language: () => languageOf(stored?.path),
    maxChars: MAX_DOCUMENT_CHARS,
    message: status,
  });
  find.addEventListener('click', () => code.openFind());

  function setStatus(text, isError = false) {
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  /** Keeps the unsent draft in the tab (or forgets it once the host has it). */
  function persist() {
    keepDraft(surface, draft && { path: draft.path, text: draft.text, baseSource: draft.baseSource, baseRevision: draft.base });
  }

  function renderStale() {
    stale.hidden = !conflict;
    if (!conflict) return;
    if (conflict.restored) {
      staleText.textContent = `Your unsent draft of ${conflict.path} from before the studio restarted is based on a version that changed since (the document is now at revision ${conflict.current}). Nothing was overwritten: keep the current document, or send your draft over it.`;
      return;
    }
    staleText.textContent = `Your draft of ${conflict.path} is based on document revision ${conflict.base}, but the document is now at revision ${conflict.current}, changed where you were typing. Nothing was overwritten.`;
  }

  /**
   * Moves the draft onto `document` (newer than its base, same path) by merging both changes.
   * Returns false when they overlap (the caller shows the stale notice; the draft stays as typed).
   */
  function rebase(document) {
    if (!draft || draft.path !== document.path) return false;
    const merged = merge3(draft.baseSource, draft.text, document.source);
    if (merged.conflict) return false;
    stored = document;
    textarea.dataset.revision = String(document.revision);
    code.setText(merged.text);
    draft = merged.text === document.source ? null : { path: document.path, text: merged.text, base: document.revision, baseSource: document.source };
    persist();
    setStatus(`Merged the change made elsewhere (document revision ${document.revision}) with your edit.`);
    if (draft) schedule();
    return true;
  }

  /** The draft is based on an older revision than `document`: merge it, else show the notice. */
  function followMoved(document) {
    if (rebase(document)) return;
    stored = document;
    conflict = { path: draft.path, base: draft.base, current: document.revision };
    clearTimeout(timer);
    renderStale();
    setStatus('The document changed elsewhere where you were editing.', true);
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(() => { send(); }, SAVE_DELAY_MS);
  }

  /** Sends the draft (one write at a time); resolves when nothing is left to send. */
  async function send() {
    clearTimeout(timer);
    timer = null;
    if (inFlight) {
      await inFlight;
      return draft && !conflict ? send() : undefined;
    }
    if (!draft || conflict) return undefined;
    const sent = draft;
    seen = null;
    inFlight = write(sent);
    let staleWrite;
    try {
      staleWrite = await inFlight;
    } finally {
      inFlight = null;
    }
    if (staleWrite) return afterStale();
    // The person kept typing while the write waited for the preview: send the rest.
    if (draft && !conflict && draft !== sent) return send();
    return undefined;
  }

  /** A write was refused as stale: merge onto the newer document seen meanwhile, or read it. */
  function afterStale() {
    const newer = seen;
    seen = null;
    if (newer && draft && newer.revision > draft.base) {
      followMoved(newer);
      return undefined;
    }
    setStatus('The document changed before your edit arrived: merging…');
    onStale();
    return undefined;
  }

  /** Sends `sent`; resolves to true when the host refused it as stale (nothing was written). */
  async function write(sent) {
    setStatus(`Sending ${sent.path} · document revision ${sent.base}…`);
    const result = await callTool('editor.setDocument', { source: sent.text, expectedDocumentRevision: sent.base })
      .catch((error) => ({ isError: true, error }));
    if (isCommitted(result)) {
      // Stored at the reported document revision; only the preview did not confirm it.
      written(sent, sent.path, result.error.details.revision);
      setStatus(`Saved to the editor · document ${unconfirmedText(result)}`);
      onWritten(result);
      return false;
    }
    if (result.isError) {
      if (result.error.code === STALE_CODE) return true;
      setStatus(`${result.error.code}: ${result.error.message}`, true);
      return false;
    }
    const outcome = result.structuredContent;
    written(sent, outcome.activePath, outcome.documentRevision);
    setStatus(`Saved to the editor · document revision ${outcome.documentRevision} · preview ${outcome.preview.status}`);
    onWritten(outcome);
    return false;
  }

  /** `sent` is stored at `revision`: it is the new base of any draft typed since. */
  function written(sent, path, revision) {
    stored = { path, source: sent.text, revision };
    if (draft === sent || draft?.text === sent.text) draft = null;
    else if (draft) Object.assign(draft, { base: revision, baseSource: sent.text });
    persist();
    textarea.dataset.revision = String(revision);
  }

  textarea.addEventListener('input', () => {
    if (!stored) return;
    const text = textarea.value.slice(0, MAX_DOCUMENT_CHARS);
    if (text === stored.source && !conflict) {
      draft = null;
      persist();
      clearTimeout(timer);
      setStatus('');
      return;
    }
    draft = { path: stored.path, text, base: draft?.base ?? stored.revision, baseSource: draft?.baseSource ?? stored.source };
    persist();
    if (conflict) return;
    setStatus('Editing…');
    schedule();
  });

  discard.addEventListener('click', () => {
    conflict = null;
    draft = null;
    persist();
    renderStale();
    setStatus('Draft discarded; showing the current document.');
    if (stored) load(stored);
  });

  overwrite.addEventListener('click', () => {
    if (!conflict || !draft || !stored) return;
    // An explicit choice: the draft replaces the newest document the page knows of, still
    // guarded by that revision (a change made since is refused again, not overwritten).
    const current = Number(conflict.current);
    draft.base = Number.isInteger(current) ? Math.max(current, stored.revision) : stored.revision;
    conflict = null;
    renderStale();
    send();
  });

  function load(document) {
    const switched = stored?.path !== document.path;
    stored = document;
    code.setText(document.source);
    textarea.dataset.revision = String(document.revision);
    // Another file starts at its top, not where the previous file's caret was.
    if (switched) code.selectRange(0, 0);
  }

  return {
    /**
     * Shows the host's document (`{path, source, revision}`, or null when the open file cannot
     * be a document). A newer revision replaces the text only when there is no draft.
     */
    render(document, error) {
      path.textContent = document?.path ?? '–';
      textarea.disabled = !document;
      if (!document) {
        stored = null;
        code.setText('');
        setStatus(error ? `${error.code}: ${error.message}` : '', Boolean(error));
        return;
      }
      const moved = !stored || stored.revision !== document.revision || stored.path !== document.path;
      if (!draft && !inFlight) {
        load(document);
        return;
      }
      if (inFlight || !moved) {
        // Our own write is still waiting for its acknowledgement: its result re-bases the draft
        // (or, refused as stale, the draft is merged onto this newer document then).
        if (inFlight) seen = document;
        else stored = document;
        return;
      }
      if (conflict) {
        stored = document;
        // Still unresolved: name the newest revision.
        conflict.current = document.revision;
        renderStale();
      } else if (draft && draft.base !== document.revision) {
        followMoved(document);
      } else {
        stored = document;
      }
    },
    /**
     * Re-applies a draft kept across a studio restart (`{path, text, baseSource, baseRevision}`)
     * to the shown document of the same path: dropped when the host already has it, sent when
     * the document is still the version it was based on, else shown as a conflict for the
     * person to decide. Never dropped silently.
     */
    restore(kept) {
      if (!kept || !stored || kept.path !== stored.path || draft) return;
      if (kept.text === stored.source) {
        keepDraft(surface, null);
        setStatus('Your last edit had reached the studio before it restarted.');
        return;
      }
      code.setText(kept.text);
      if (kept.baseSource === stored.source) {
        draft = { path: kept.path, text: kept.text, base: stored.revision, baseSource: stored.source };
        persist();
        setStatus('The studio restarted: sending your unsent draft…');
        send();
        return;
      }
      draft = { path: kept.path, text: kept.text, base: kept.baseRevision, baseSource: kept.baseSource };
      if (rebase(stored)) {
        setStatus('The studio restarted and the document changed: your unsent draft was merged with it and is being sent.');
        return;
      }
      conflict = { path: kept.path, base: kept.baseRevision, current: stored.revision, restored: true };
      persist();
      renderStale();
      setStatus('The studio restarted and the document changed: your unsent draft is kept here.', true);
    },
    /** Sends any pending draft now and waits for it (before another document action). */
    flush: send,
    /** Whether there is text the host has not stored yet. */
    hasDraft: () => Boolean(draft),
    /** Whether a stale draft waits for the person's decision. */
    hasConflict: () => Boolean(conflict),
  };
}
