// The /web drafts as the host keeps them (GET/PUT/DELETE /api/web/drafts): a draft is sent a
// moment after the last keystroke and on pagehide, and removed when it is saved or discarded,
// so a reload or a closed tab finds it again.

import { api } from '../lib/surface.js';

/** Pause after the last keystroke before a draft is sent to the host. */
export const DRAFT_STORE_DELAY_MS = 300;

/** The host side of the page's drafts; `onError(error)` hears a refused store. */
export function createDraftStore({ onError = () => {} } = {}) {
  // path -> the draft to store ({ text, base }), or null to remove the host's draft.
  const staged = new Map();
  let timer = null;
  let inFlight = 0;

  const url = (path) => `/api/web/drafts/${path.split('/').map(encodeURIComponent).join('/')}`;

  async function send(path, draft, keepalive) {
    inFlight += 1;
    try {
      if (draft) await api(url(path), { method: 'PUT', body: { source: draft.text, base: draft.base }, keepalive });
      else await api(url(path), { method: 'DELETE', keepalive });
    } catch (error) {
      // Not stored: stage it again (unless newer typing did), so it goes out with the next flush.
      if (!staged.has(path)) staged.set(path, draft);
      onError(error);
    } finally {
      inFlight -= 1;
    }
  }

  /** Sends every staged change now. */
  function flush({ keepalive = false } = {}) {
    clearTimeout(timer);
    const batch = [...staged.entries()];
    staged.clear();
    return Promise.all(batch.map(([path, draft]) => send(path, draft, keepalive)));
  }

  window.addEventListener('pagehide', () => flush({ keepalive: true }));

  return {
    /** The host's drafts as a Map of path -> { text, base }. */
    async restore() {
      const { drafts } = await api('/api/web/drafts');
      return new Map(drafts.map((draft) => [draft.path, { text: draft.source, base: draft.base }]));
    },
    /** Stages `draft` of `path` (null: the file has no draft any more) and sends it soon. */
    stage(path, draft) {
      staged.set(path, draft ? { ...draft } : null);
      clearTimeout(timer);
      timer = setTimeout(flush, DRAFT_STORE_DELAY_MS);
    },
    /** Removes the draft of `path` on the host at once (saved or discarded). */
    drop(path) {
      staged.delete(path);
      return send(path, null, false);
    },
    flush,
    /** Whether a change has not reached the host yet (staged, or its request in flight). */
    pending: () => staged.size > 0 || inFlight > 0,
  };
}
