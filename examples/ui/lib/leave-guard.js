// The browser's "leave this page?" question while a page holds work the host does not have
// yet. One guard for every page; each page says what counts as unsaved. A reload for a new
// studio launch keeps the drafts itself (lib/launch.js), so it does not ask.

import { isRelaunching } from './launch.js';

/** Asks before the page unloads whenever `hasUnsavedWork()` is true. */
export function guardLeaving(hasUnsavedWork) {
  window.addEventListener('beforeunload', (event) => {
    if (isRelaunching() || !hasUnsavedWork()) return;
    event.preventDefault();
    event.returnValue = '';
  });
}
