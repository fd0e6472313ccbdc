// A diff as the pages show it: files (collapsible), hunks with line numbers, unified or side by
// side, highlighted with the studio's highlighter; `[` and `]` move between hunk headers, Space
// or Enter on a header works its control. Used by the
// approval cards (review.js) and the Changes panel (changes.js), which add their own per-hunk
// and per-file controls.

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

function hunkView(file, hunk, { sideBySide, control }) {
  const header = el('div', { className: 'diff-hunk-head', attrs: { tabindex: '0' } },
    control ?? el('span', { textContent: `Hunk ${hunk.index + 1}` }),
    el('code', { textContent: `@@ -${hunk.oldStart},${hunk.oldLen} +${hunk.newStart},${hunk.newLen} @@` }),
    el('span', { className: 'diff-counts', textContent: `+${hunk.additions} −${hunk.deletions}` }));
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
 * A diff view. `hunkControl(file, hunk)` and `fileControl(file)` may return an element put in a
 * hunk's header or a file's summary (they are called on every redraw). `show(diff)` renders a
 * `WorkspaceDiff` from the host.
 */
export function createDiffView({ hunkControl = () => null, fileControl = () => null } = {}) {
  let sideBySide = false;
  let diff = null;
  const body = el('div', { className: 'diff-files' });
  const counts = el('span', { className: 'diff-counts' });
  const toggle = button('Side by side', () => {
    sideBySide = !sideBySide;
    toggle.textContent = sideBySide ? 'Unified' : 'Side by side';
    draw();
  }, { className: 'diff-view-toggle' });
  const toolbar = el('div', { className: 'diff-toolbar' }, counts, toggle);
  const element = el('div', { className: 'diff-view' }, toolbar, body);

  function draw() {
    const files = diff?.files ?? [];
    body.replaceChildren(...files.map((file) => {
      const hunks = (file.text?.hunks ?? []).map((hunk) => hunkView(file, hunk, { sideBySide, control: hunkControl(file, hunk) }));
      const details = el('details', { className: 'diff-file', open: true, dataset: { path: file.path } },
        el('summary', {}, el('span', { textContent: fileSummary(file) }), fileControl(file)), ...hunks);
      if (file.text?.truncated) details.append(el('p', { className: 'diff-note', textContent: `${file.text.hunkCount - file.text.hunks.length} more hunks not shown.` }));
      return details;
    }));
  }

  function show(next) {
    diff = next;
    const files = diff?.files ?? [];
    counts.textContent = `${files.length} file(s) · +${diff?.additions ?? 0} −${diff?.deletions ?? 0}`;
    toolbar.hidden = files.length === 0;
    draw();
  }

  element.addEventListener('keydown', (event) => {
    const head = event.target.closest?.('.diff-hunk-head');
    // Space or Enter on a focused hunk header works its control (accept / revert).
    if (head === event.target && (event.key === ' ' || event.key === 'Enter')) {
      head.querySelector('input, button')?.click();
      event.preventDefault();
      return;
    }
    if (event.key !== '[' && event.key !== ']') return;
    const heads = [...element.querySelectorAll('.diff-hunk-head')];
    const at = heads.indexOf(document.activeElement?.closest('.diff-hunk-head'));
    const next = heads[event.key === ']' ? Math.min(at + 1, heads.length - 1) : Math.max(at - 1, 0)];
    next?.focus();
    event.preventDefault();
  });
  return { element, show };
}
