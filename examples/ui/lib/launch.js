// A studio restart gives every page a new per-launch token, so an open tab's requests and event
// socket are refused from then on. A page notices the new launch (the public launch id it was
// served with no longer matches), keeps its unsent drafts in this tab's session storage, and
// reloads itself with the new token; on load it re-applies the drafts it kept.

const launch = document.querySelector('meta[name="studio-launch"]')?.content ?? '';
const DRAFT_KEY = 'studio-unsent-draft:';
let relaunching = false;

/** Whether the page is reloading for a new launch (its drafts are kept; leaving need not ask). */
export const isRelaunching = () => relaunching;

/**
 * Whether the studio answering now is another launch than the one that served this page;
 * false when nothing answers (the host is down: keep waiting).
 */
export async function studioRelaunched() {
  try {
    const response = await fetch('/api/launch', { cache: 'no-store' });
    if (!response.ok) return false;
    const data = await response.json();
    return Boolean(data?.launch) && data.launch !== launch;
  } catch {
    return false;
  }
}

/** Reloads the page for the new launch (its token); `onBeforeReload` keeps what must survive. */
export function reloadForNewLaunch(onBeforeReload = () => {}) {
  if (relaunching) return;
  relaunching = true;
  onBeforeReload();
  location.reload();
}

/**
 * Keeps `draft` (`{path, text, baseSource, baseRevision}`) for `surface` until the host stores
 * it, or forgets it (`null`). Session storage: it survives this tab's reload, not the tab.
 */
export function keepDraft(surface, draft) {
  try {
    if (draft) sessionStorage.setItem(DRAFT_KEY + surface, JSON.stringify(draft));
    else sessionStorage.removeItem(DRAFT_KEY + surface);
  } catch {
    // Storage full or disabled: the leave guard still asks before the page goes.
  }
}

/** The draft kept for `surface`, if any. */
export function keptDraft(surface) {
  try {
    const text = sessionStorage.getItem(DRAFT_KEY + surface);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}
