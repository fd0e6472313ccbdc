// Live stylesheet edits, shared by every surface's preview: when the host says the next
// revision changed only stylesheets since the one the iframe acknowledged (in the revision's
// announcement, which then carries them, or when asked), its compiled stylesheets are posted
// into the running document, whose bridge swaps them and acknowledges the new revision like a
// load would; page state (clicks, scroll, form input) survives. Anything else, a refusal, or
// no acknowledgement in time reloads the iframe.

import { api } from './api.js';

const STYLESHEETS = 'context-action.preview.stylesheets';
/** How long the iframe may take to acknowledge swapped stylesheets before it is reloaded. */
const SWAP_TIMEOUT_MS = 3000;

/**
 * `stylesheetsPath(to, from)` is the surface's stylesheet route, or null when the surface can
 * only reload (its documents are rewritten after compiling). `load(revision)` points the
 * iframe at a revision's document.
 */
export function createLiveStylesheets({ iframe, stylesheetsPath, load }) {
  // The revision the iframe's current document acknowledged as ready (null: none, or an error).
  let acknowledged = null;
  let target = null;
  let timer = null;

  function reload(revision) {
    clearTimeout(timer);
    acknowledged = null;
    target = revision;
    load(revision);
  }

  async function swap(from, to) {
    let data;
    try {
      data = await api(stylesheetsPath(to, from));
    } catch {
      data = null;
    }
    if (target !== to) return; // a newer revision took over while the request was in flight
    if (!data || data.revision !== to) reload(to);
    else post(from, to, data.stylesheets);
  }

  /** Posts revision `to`'s stylesheets into the document that acknowledged `from`. */
  function post(from, to, stylesheets) {
    const frame = iframe.contentWindow;
    if (!Array.isArray(stylesheets) || !frame || acknowledged !== from) {
      reload(to);
      return;
    }
    // The sandboxed document's origin is opaque, so no target origin can name it: the message
    // goes to this iframe's window only, whose bridge accepts it only from its parent window
    // with the host's origin, for the revision it shows.
    frame.postMessage({ type: STYLESHEETS, revision: from, next: to, stylesheets }, '*');
    timer = setTimeout(() => {
      if (target === to && acknowledged !== to) reload(to);
    }, SWAP_TIMEOUT_MS);
  }

  return {
    /**
     * Moves the preview to `revision`: in place when the iframe's document acknowledged an
     * earlier revision and the surface can swap stylesheets (the host decides whether only
     * they changed since), else by loading its document. `force` always loads. `announced`
     * is what the host's revision announcement carried, `{since, stylesheets}` for a revision
     * that changed only stylesheets since `since`: a document showing a revision from there
     * on takes them at once, without asking the host. `liveSince`, when the page knows it, is
     * the first revision of `revision`'s stylesheet run: a document showing an earlier one
     * reloads without asking (the host could only refuse).
     */
    show(revision, force = false, announced = null, liveSince = undefined) {
      clearTimeout(timer);
      const from = acknowledged;
      target = revision;
      const mustReload = typeof liveSince === 'number' && (from === null || from < liveSince);
      if (force || !stylesheetsPath || from === null || from >= revision || mustReload) reload(revision);
      else if (announced && announced.since <= from) post(from, revision, announced.stylesheets);
      else swap(from, revision);
    },
    /** Records the iframe's bridge message for `revision` (`ready` true, `error` false). */
    acknowledge(revision, ready) {
      if (revision !== target) return;
      clearTimeout(timer);
      acknowledged = ready ? revision : null;
    },
  };
}
