// What a pending approval would change: the diff the host computes on request
// (GET /api/approvals/{id}/diff, never stored), per file and per hunk, with what a destructive
// call loses. When the call is a one-file text edit, each hunk has a checkbox and Allow applies
// only the checked ones (the host narrows the call and the result says what was left out).

import { api } from './api.js';
import { el, button } from './dom.js';
import { highlight } from './highlight.js';

const LANGUAGE_OF = { js: 'javascript', mjs: 'javascript', ts: 'typescript', css: 'css', html: 'html', htm: 'html', json: 'json', md: 'markdown' };

function languageOf(path) {
  return LANGUAGE_OF[path.split('.').pop()?.toLowerCase()] ?? 'text';
}

/** One unified diff line (or a side-by-side context line) as a table row; the text is highlighted (escaped) HTML. */
function lineRow(line, language, sideBySide) {
  const code = (text) => el('td', { className: 'diff-code', innerHTML: highlight(text, language) });
  const number = (n) => el('td', { className: 'diff-num', textContent: n ?? '' });
  const row = el('tr', { className: `diff-${line.tag}` });
  if (!sideBySide) {
    const mark = line.tag === 'added' ? '+' : line.tag === 'removed' ? '−' : ' ';
    row.append(number(line.oldLine), number(line.newLine), el('td', { className: 'diff-mark', textContent: mark }), code(line.text));
  } else {
    // Side by side, only context lines come here (changes are paired by pairedRows).
    row.append(number(line.oldLine), code(line.text), number(line.newLine), code(line.text));
  }
  return row;
}

/** Side-by-side rows: a run of removed lines faces the run of added lines that replaces it. */
function pairedRows(lines, language) {
  const rows = [];
  for (let at = 0; at < lines.length;) {
    if (lines[at].tag === 'context') {
      rows.push(lineRow(lines[at], language, true));
      at += 1;
      continue;
    }
    const removed = [];
    const added = [];
    while (at < lines.length && lines[at].tag === 'removed') removed.push(lines[at++]);
    while (at < lines.length && lines[at].tag === 'added') added.push(lines[at++]);
    for (let i = 0; i < Math.max(removed.length, added.length); i += 1) rows.push(pairRow(removed[i], added[i], language));
  }
  return rows;
}

function pairRow(removed, added, language) {
  const side = (line, tag) => line
    ? [el('td', { className: 'diff-num', textContent: tag === 'removed' ? line.oldLine : line.newLine }), el('td', { className: `diff-code diff-${tag}`, innerHTML: highlight(line.text, language) })]
    : [el('td', { className: 'diff-num' }), el('td')];
  return el('tr', { className: 'diff-pair' }, ...side(removed, 'removed'), ...side(added, 'added'));
}

function hunkView(file, hunk, { narrowable, sideBySide, onToggle }) {
  const header = el('div', { className: 'diff-hunk-head', attrs: { tabindex: '0' } },
    el('code', { textContent: `@@ -${hunk.oldStart},${hunk.oldLen} +${hunk.newStart},${hunk.newLen} @@` }),
    el('span', { className: 'diff-counts', textContent: `+${hunk.additions} −${hunk.deletions}` }));
  if (narrowable) {
    const box = el('input', { type: 'checkbox', checked: true, className: 'hunk-accept', attrs: { 'aria-label': `Apply hunk ${hunk.index + 1} of ${file.path}` } });
    box.dataset.hunk = String(hunk.index);
    box.addEventListener('change', onToggle);
    header.prepend(el('label', { className: 'hunk-toggle', title: 'Apply this hunk' }, box, ` Hunk ${hunk.index + 1}`));
  }
  const language = languageOf(file.path);
  const rows = sideBySide ? pairedRows(hunk.lines, language) : hunk.lines.map((line) => lineRow(line, language, false));
  const table = el('table', { className: `diff-table${sideBySide ? ' side-by-side' : ''}` }, ...rows);
  return el('div', { className: 'diff-hunk', dataset: { hunk: String(hunk.index) } }, header, hunk.lines.length ? table : el('p', { className: 'diff-note', textContent: 'Lines not shown (the diff is too long).' }));
}

function fileSummary(file) {
  const what = file.change === 'renamed' ? `${file.oldPath} → ${file.path}` : file.path;
  const counts = file.kind === 'text' ? `+${file.additions} −${file.deletions}` : `${file.kind}: ${file.oldBytes} → ${file.newBytes} bytes`;
  return `${file.change} · ${what} · ${counts}`;
}

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
  let sideBySide = false;
  const parts = [];
  if (view.effect) parts.push(el('p', { className: 'approval-effect', attrs: { role: 'note' }, textContent: view.effect }));
  if (view.note) parts.push(el('p', { className: 'diff-note', textContent: view.note }));
  const body = el('div', { className: 'diff-files' });
  const toggles = () => [...slot.querySelectorAll('input.hunk-accept')];
  const onToggle = () => slot.dispatchEvent(new CustomEvent('hunks-changed', { bubbles: true }));
  function draw() {
    const files = view.diff?.files ?? [];
    const checked = new Map(toggles().map((box) => [box.dataset.hunk, box.checked]));
    body.replaceChildren(...files.map((file) => {
      const narrowable = file.path === view.narrowablePath && file.kind === 'text';
      const hunks = (file.text?.hunks ?? []).map((hunk) => hunkView(file, hunk, { narrowable, sideBySide, onToggle }));
      const details = el('details', { className: 'diff-file', open: true, dataset: { path: file.path } },
        el('summary', { textContent: fileSummary(file) }), ...hunks);
      if (file.text?.truncated) details.append(el('p', { className: 'diff-note', textContent: `${file.text.hunkCount - file.text.hunks.length} more hunks not shown.` }));
      return details;
    }));
    for (const box of toggles()) if (checked.has(box.dataset.hunk)) box.checked = checked.get(box.dataset.hunk);
  }
  draw();
  if (view.diff?.files?.length) {
    parts.push(el('div', { className: 'diff-toolbar' },
      el('span', { className: 'diff-counts', textContent: `${view.diff.files.length} file(s) · +${view.diff.additions} −${view.diff.deletions}` }),
      button('Side by side', (event) => {
        sideBySide = !sideBySide;
        event.target.textContent = sideBySide ? 'Unified' : 'Side by side';
        draw();
      }, { className: 'diff-view-toggle' })));
  }
  parts.push(body);
  slot.replaceChildren(...parts);
  // [ and ] move between hunk headers (keyboard review).
  slot.addEventListener('keydown', (event) => {
    if (event.key !== '[' && event.key !== ']') return;
    const heads = [...slot.querySelectorAll('.diff-hunk-head')];
    const at = heads.indexOf(document.activeElement?.closest('.diff-hunk-head'));
    const next = heads[event.key === ']' ? Math.min(at + 1, heads.length - 1) : Math.max(at - 1, 0)];
    next?.focus();
    event.preventDefault();
  });
  return {
    digest: view.diff?.digest ?? null,
    accepted: () => {
      const boxes = toggles();
      if (!boxes.length || boxes.every((box) => box.checked)) return null;
      return boxes.filter((box) => box.checked).map((box) => Number(box.dataset.hunk));
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
