// What a pending approval would change: the diff the host computes on request
// (GET /api/approvals/{id}/diff, never stored), per file and per hunk, with what a destructive
// call loses. When the call is a one-file text edit, each hunk has a checkbox and Allow applies
// only the checked ones (the host narrows the call and the result says what was left out).

import { api } from './api.js';
import { el } from './dom.js';
import { createDiffView } from './diff-view.js';

/**
 * Fills `slot` with the review of approval `id` and returns its controls: `accepted()` is the
 * list of checked hunk indices (or null when the call runs whole) and `digest` names the diff.
 */
export async function loadReview(id, slot) {
  let view;
  try {
    view = await api(`/api/approvals/${encodeURIComponent(id)}/diff`);
  } catch (error) {
    slot.replaceChildren(el('p', { className: 'diff-note', textContent: `No diff: ${error.message}` }));
    return { accepted: () => null, digest: null };
  }
  // Hunk index -> applied; kept here so a redraw (unified / side by side) keeps the choice.
  const applied = new Map();
  const narrowable = (file) => file.path === view.narrowablePath && file.kind === 'text';
  const hunkControl = (file, hunk) => {
    if (!narrowable(file)) return null;
    const box = el('input', { type: 'checkbox', checked: applied.get(hunk.index) ?? true, className: 'hunk-accept', attrs: { 'aria-label': `Apply hunk ${hunk.index + 1} of ${file.path}` } });
    box.dataset.hunk = String(hunk.index);
    box.addEventListener('change', () => {
      applied.set(hunk.index, box.checked);
      slot.dispatchEvent(new CustomEvent('hunks-changed', { bubbles: true }));
    });
    return el('label', { className: 'hunk-toggle', title: 'Apply this hunk' }, box, ` Hunk ${hunk.index + 1}`);
  };
  const diffView = createDiffView({ hunkControl });
  const parts = [];
  if (view.effect) parts.push(el('p', { className: 'approval-effect', attrs: { role: 'note' }, textContent: view.effect }));
  if (view.note) parts.push(el('p', { className: 'diff-note', textContent: view.note }));
  if (view.diff) parts.push(diffView.element);
  slot.replaceChildren(...parts);
  diffView.show(view.diff);
  const hunkCount = view.diff?.files?.find(narrowable)?.text?.hunkCount ?? 0;
  return {
    digest: view.diff?.digest ?? null,
    accepted: () => {
      const chosen = [...Array(hunkCount).keys()].filter((index) => applied.get(index) ?? true);
      return chosen.length === hunkCount ? null : chosen;
    },
  };
}
/** The decision body for Allow: the whole call, or the checked hunks with the diff's digest. */
export function allowBody(review) {
  const hunks = review?.accepted?.() ?? null;
  return hunks === null ? { decision: 'allow' } : { decision: 'allow', hunks, digest: review.digest };
}

/**
 * A card's review slot for approval `id`: loads the diff once into `reviews` and relabels the
 * card's approve button (`label`) while only some hunks are checked.
 */
export function reviewSlot(id, reviews, label) {
  const slot = el('div', { className: 'approval-review', textContent: 'Loading the proposed change…' });
  loadReview(id, slot).then((review) => reviews.set(id, review));
  slot.addEventListener('hunks-changed', () => {
    const approve = slot.closest('.approval')?.querySelector('.approve');
    if (approve) approve.textContent = reviews.get(id)?.accepted() ? `${label} selected hunks` : label;
  });
  return slot;
}

/** Forgets the reviews of approvals no longer pending (the map lives as long as the page). */
export function forgetSettled(reviews, pending) {
  const ids = new Set(pending.map((approval) => approval.id));
  for (const id of reviews.keys()) if (!ids.has(id)) reviews.delete(id);
}
