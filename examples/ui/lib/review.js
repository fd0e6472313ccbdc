// What a pending approval would change: the diff the host computes on request
// (GET /api/approvals/{id}/diff, never stored), per file and per hunk, with what a destructive
// call loses. When the call is a one-file text edit, each hunk has a checkbox and Allow applies
// only the checked ones (the host narrows the call and the result says what was left out).
// The review also shows the exact arguments the call runs with; Allow sends their digest back
// (`argumentsDigest`), so the host runs nothing but what was shown (409 otherwise).

import { api } from './api.js';
import { el } from './dom.js';
import { createDiffView } from './diff-view.js';

/**
 * Fills `slot` with the review of approval `id` and returns its controls: `accepted()` is the
 * list of checked hunk indices (or null when the call runs whole) and `digest` names the diff.
 * `applied` carries the person's hunk choices over from an earlier load of the same card.
 */
export async function loadReview(id, slot, applied = new Map()) {
  let view;
  try {
    view = await api(`/api/approvals/${encodeURIComponent(id)}/diff`);
  } catch (error) {
    slot.replaceChildren(el('p', { className: 'diff-note', textContent: `No diff: ${error.message}` }));
    return { accepted: () => null, digest: null, argumentsDigest: null };
  }
  // Hunk index -> applied (`applied`): kept so a redraw (unified / side by side) or a reload
  // keeps the choice.
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
  parts.push(argumentsView(view));
  slot.replaceChildren(...parts);
  diffView.show(view.diff);
  const hunkCount = view.diff?.files?.find(narrowable)?.text?.hunkCount ?? 0;
  return {
    applied,
    digest: view.diff?.digest ?? null,
    argumentsDigest: view.argumentsDigest ?? null,
    accepted: () => {
      const chosen = [...Array(hunkCount).keys()].filter((index) => applied.get(index) ?? true);
      return chosen.length === hunkCount ? null : chosen;
    },
  };
}
const MAX_SHOWN_ARGUMENT_CHARS = 4000;

/** The arguments the call will run with (long ones cut for display; the digest covers all). */
function argumentsView(view) {
  const text = JSON.stringify(view.arguments ?? {}, null, 2);
  const shown = text.length > MAX_SHOWN_ARGUMENT_CHARS ? `${text.slice(0, MAX_SHOWN_ARGUMENT_CHARS)}\n… (${text.length} characters)` : text;
  return el('details', { className: 'approval-arguments', open: text.length <= 600 },
    el('summary', { textContent: 'Runs with these arguments', title: view.argumentsDigest ?? '' }),
    el('pre', { textContent: shown, dataset: { digest: view.argumentsDigest ?? '' } }));
}

/**
 * The decision body for Allow: the whole call, or the checked hunks with the diff's digest;
 * with the digest of the arguments shown when the review loaded.
 */
export function allowBody(review) {
  const hunks = review?.accepted?.() ?? null;
  const body = hunks === null ? { decision: 'allow' } : { decision: 'allow', hunks, digest: review.digest };
  return review?.argumentsDigest ? { ...body, argumentsDigest: review.argumentsDigest } : body;
}

/**
 * A card's review slot for approval `id`: loads the diff into `reviews` and relabels the card's
 * approve button (`label`) while only some hunks are checked. [`reloadReviews`] loads it again.
 */
export function reviewSlot(id, reviews, label) {
  const slot = el('div', { className: 'approval-review', textContent: 'Loading the proposed change…' });
  slot.dataset.reviewId = id;
  load(id, slot, reviews);
  slot.addEventListener('hunks-changed', () => {
    const approve = slot.closest('.approval')?.querySelector('.approve');
    if (approve) approve.textContent = reviews.get(id)?.accepted() ? `${label} selected hunks` : label;
  });
  return slot;
}

/** Loads approval `id`'s review into `slot`, keeping the hunk choices of an earlier load. */
function load(id, slot, reviews) {
  const earlier = reviews.get(id);
  // Until it loads the entry is the promise, so an early Approve waits for what it approves.
  const loading = loadReview(id, slot, earlier?.applied ?? new Map());
  reviews.set(id, loading);
  loading.then((review) => { if (reviews.get(id) === loading) reviews.set(id, review); });
}

/**
 * Loads every review shown in `container` again: the workspace moved, so a pending edit's diff
 * (its context, a rebase note) is computed against what the files hold now.
 */
export function reloadReviews(container, reviews) {
  for (const slot of container.querySelectorAll('.approval-review[data-review-id]')) {
    const id = slot.dataset.reviewId;
    if (reviews.has(id)) load(id, slot, reviews);
  }
}

/** Forgets the reviews of approvals no longer pending (the map lives as long as the page). */
export function forgetSettled(reviews, pending) {
  const ids = new Set(pending.map((approval) => approval.id));
  for (const id of reviews.keys()) if (!ids.has(id)) reviews.delete(id);
}
