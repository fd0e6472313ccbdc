// Leaving `/` with work nobody holds yet: the browser asks first (beforeunload), and the typed
// draft is sent on pagehide, so the last keystrokes before the idle flush are not lost.

import { draftPending, flushDraft } from './editor.js';
import { guardLeaving } from './leave-guard.js';
import { state } from './store.js';

/** Whether leaving now loses work: an unstored draft, or unsaved edits of a linked folder. */
export function hasUnsavedWork() {
  const folderDirty = Boolean(state.status?.folder?.connected) && (state.status?.dirtyPaths?.length ?? 0) > 0;
  return draftPending() || folderDirty;
}

/** Wires the leave guard and the pagehide flush. */
export function wireUnload() {
  guardLeaving(hasUnsavedWork);
  window.addEventListener('pagehide', () => flushDraft({ keepalive: true }));
}
