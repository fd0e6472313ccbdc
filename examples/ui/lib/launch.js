// A studio restart gives every page a new per-launch token, so an open tab's requests and event
// socket are refused from then on. A page notices the new launch (the public launch id it was
// served with no longer matches), keeps its unsent drafts in this tab's session storage, and
// reloads itself with the new token; on load it re-applies the drafts it kept.

const launch = document.querySelector('meta[name="studio-launch"]')?.content ?? '';
const DRAFT_KEY = 'studio-unsent-draft:';
const APPROVALS_KEY = 'studio-shown-approvals:';
const RELAUNCHED_KEY = 'studio-relaunched';
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
  keepForRelaunch(RELAUNCHED_KEY, true);
  onBeforeReload();
  location.reload();
}

/**
 * Keeps `value` (JSON) under `key` in this tab's session storage, or forgets it (`null`): it
 * survives this tab's reload, not the tab.
 */
function keepForRelaunch(key, value) {
  try {
    if (value) sessionStorage.setItem(key, JSON.stringify(value));
    else sessionStorage.removeItem(key);
  } catch {
    // Storage full or disabled: the leave guard still asks before the page goes.
  }
}

function keptForRelaunch(key) {
  try {
    const text = sessionStorage.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/**
 * Keeps `draft` (`{path, text, baseSource, baseRevision}`) for `surface` until the host stores
 * it, or forgets it (`null`).
 */
export function keepDraft(surface, draft) {
  keepForRelaunch(DRAFT_KEY + surface, draft);
}

/** The draft kept for `surface`, if any. */
export function keptDraft(surface) {
  return keptForRelaunch(DRAFT_KEY + surface);
}

/** Keeps the approvals `surface` shows (`[{id, name}]`), so a restart can say which it ended. */
export function keepApprovals(surface, approvals) {
  keepForRelaunch(APPROVALS_KEY + surface, approvals.length ? approvals : null);
}

/** The approvals `surface` showed before this load, if any. */
export function keptApprovals(surface) {
  return keptForRelaunch(APPROVALS_KEY + surface) ?? [];
}

/** Whether this load is the reload of a studio restart (asked once: the answer is consumed). */
export function consumeRelaunched() {
  const relaunched = keptForRelaunch(RELAUNCHED_KEY) === true;
  keepForRelaunch(RELAUNCHED_KEY, null);
  return relaunched;
}
