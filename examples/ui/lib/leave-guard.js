// The browser's "leave this page?" question while a page holds work the host does not have
// yet. One guard for every page; each page says what counts as unsaved.

/** Asks before the page unloads whenever `hasUnsavedWork()` is true. */
export function guardLeaving(hasUnsavedWork) {
  window.addEventListener('beforeunload', (event) => {
    if (!hasUnsavedWork()) return;
    event.preventDefault();
    event.returnValue = '';
  });
}
