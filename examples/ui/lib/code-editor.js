// The studio's code editor, one component for every page: a transparent textarea over a
// highlighted layer and a find-marks layer, a line-number gutter, in-file find (Ctrl+F, Enter /
// Shift+Enter, Esc) and a status line with line, column, line count and the character budget.
// Its editing essentials (auto-indent, Tab / Shift+Tab over lines, auto-closed pairs and tags,
// the matching bracket, Ctrl+/ comments) are the pure text logic of lib/editing.js, applied
// here as one native edit each (`applyEdit`): one Ctrl+Z undoes it whole, and `input` fires.
// The page keeps its textarea (its id, its input listeners, its drafts); the component builds
// the layers, the find bar and the status line around it. Text the page assigns goes through
// `setText`, so the layers follow.

import { commandKey, el, escapeHtml } from './dom.js';
import { editForKey, matchingBracket } from './editing.js';
import { highlightLines } from './highlight.js';
import { diff, mapPosition } from './merge.js';

/** Most matches find marks in one file. */
export const MAX_FIND_MATCHES = 10000;

const LANGUAGE_BY_EXTENSION = {
  html: 'html', htm: 'html', css: 'css', js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  ts: 'typescript', tsx: 'typescript', json: 'json', md: 'markdown', markdown: 'markdown',
};

/** The highlighter language of a file path (by extension; `plaintext` when unknown). */
export function languageOf(path) {
  const extension = String(path ?? '').split('.').at(-1).toLowerCase();
  return LANGUAGE_BY_EXTENSION[extension] ?? 'plaintext';
}

/** Lines rendered above and below the visible ones, so scrolling shows text at once. */
const OVERSCAN_LINES = 60;
/** When a render waits for a frame that does not come (a hidden tab), it runs after this. */
const RENDER_FALLBACK_MS = 100;

/** The widest line in columns (a tab counts as the layers' tab-size of 2). */
function widestColumns(lines) {
  let widest = 0;
  for (const line of lines) {
    let columns = line.length;
    for (let at = line.indexOf('\t'); at >= 0; at = line.indexOf('\t', at + 1)) columns += 1;
    if (columns > widest) widest = columns;
  }
  return widest;
}

/**
 * Builds the editor around `textarea`. Element ids are `idPrefix` + `code-surface`,
 * `code-gutter`, `code-marks`, `code-highlight`, `find-bar`, `find-input`, `find-count`,
 * `find-prev`, `find-next`, `find-close`, `cursor-pos`, `line-count` and `char-count`.
 * `language()` names the highlighter language of the current text; `message` (optional) is a
 * page element moved to the end of the status line.
 */
export function createCodeEditor({ textarea, idPrefix = '', language = () => 'plaintext', maxChars, message = null, onHistory = null }) {
  const id = (name) => `${idPrefix}${name}`;
  const pre = (name, className) => el('pre', { id: id(name), className, attrs: { 'aria-hidden': 'true' } });
  const gutter = pre('code-gutter', 'code-gutter');
  const marks = pre('code-marks', 'code-layer marks');
  const layer = pre('code-highlight', 'code-layer highlight');
  const findInput = el('input', { id: id('find-input'), type: 'search', placeholder: 'Find in file', attrs: { 'aria-label': 'Find text' } });
  const findCount = el('span', { id: id('find-count'), className: 'find-count', textContent: '0 of 0', attrs: { 'aria-live': 'polite' } });
  const findButton = (name, text, label, title) => el('button', { id: id(name), type: 'button', textContent: text, title, attrs: { 'aria-label': label } });
  const findPrev = findButton('find-prev', '↑', 'Previous match', 'Previous (Shift+Enter)');
  const findNext = findButton('find-next', '↓', 'Next match', 'Next (Enter, Ctrl+G)');
  const findClose = findButton('find-close', '✕', 'Close find', 'Close (Esc)');
  const findBar = el('div', { id: id('find-bar'), className: 'find-bar', hidden: true, attrs: { role: 'search', 'aria-label': 'Find in file' } },
    findInput, findCount, findPrev, findNext, findClose);
  const cursor = el('span', { id: id('cursor-pos'), textContent: 'Ln 1, Col 1' });
  const lineCount = el('span', { id: id('line-count'), textContent: '0 lines' });
  const charCount = el('span', { id: id('char-count'), title: 'Characters against the per-file budget' });
  const surface = el('div', { id: id('code-surface'), className: 'code-surface' }, gutter, marks, layer);
  const statusLine = el('div', { className: 'code-status', attrs: { role: 'status' } }, cursor, lineCount, charCount);
  const root = el('div', { className: 'code-editor' }, findBar, surface, statusLine);
  textarea.replaceWith(root);
  textarea.classList.add('code-layer', 'input');
  textarea.wrap = 'off';
  textarea.spellcheck = false;
  surface.append(textarea);
  if (message) {
    message.classList.add('message');
    statusLine.append(message);
  }

  const find = { query: '', matches: [], index: -1 };
  let gutterLines = 0;
  // The bracket at the caret and its match ([first, second] positions), or null.
  let brackets = null;

  /** Escaped `text.slice(from, to)` with the matched brackets in it marked. */
  function marked(text, from, to) {
    let html = '';
    let last = from;
    for (const at of brackets ?? []) {
      if (at < from || at >= to) continue;
      html += `${escapeHtml(text.slice(last, at))}<span class="bracket-match">${escapeHtml(text[at])}</span>`;
      last = at + 1;
    }
    return html + escapeHtml(text.slice(last, to));
  }

  /** `text[from..to]` escaped, with the find matches and matched brackets in it marked. */
  function renderMarks(text, from, to) {
    let html = '';
    let last = from;
    find.matches.forEach((start, index) => {
      const end = start + find.query.length;
      if (end <= from || start >= to) return;
      const [markFrom, markTo] = [Math.max(start, from), Math.min(end, to)];
      html += marked(text, last, markFrom);
      html += `<mark${index === find.index ? ' class="current"' : ''}>${marked(text, markFrom, markTo)}</mark>`;
      last = markTo;
    });
    return html + marked(text, last, to);
  }

  /** Finds the bracket match for the caret; whether it changed. */
  function updateBrackets() {
    const { selectionStart: start, selectionEnd: end, value } = textarea;
    const next = start === end ? matchingBracket(value, start) : null;
    const changed = String(next) !== String(brackets);
    brackets = next;
    return changed;
  }

  /** Line numbers, rebuilt only when the line count changes. */
  function renderGutter(lines) {
    if (lines === gutterLines) return;
    gutterLines = lines;
    gutter.textContent = Array.from({ length: lines }, (_, index) => index + 1).join('\n');
  }

  function syncScroll() {
    gutter.scrollTop = textarea.scrollTop;
    for (const pane of [layer, marks]) {
      pane.scrollTop = textarea.scrollTop;
      pane.scrollLeft = textarea.scrollLeft;
    }
  }

  /**
   * The lines the layers render: those in view and OVERSCAN_LINES around them (all of them
   * while the textarea has no height yet), with the text offsets where they start and end.
   * The layers hold only these, between spacers as tall as the lines left out, so a keystroke
   * in a long file costs what the visible lines cost.
   */
  function visibleWindow(lines) {
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
    const height = textarea.clientHeight;
    const first = height ? Math.max(0, Math.floor(textarea.scrollTop / lineHeight) - OVERSCAN_LINES) : 0;
    const last = height ? Math.min(lines.length, Math.ceil((textarea.scrollTop + height) / lineHeight) + OVERSCAN_LINES) : lines.length;
    let from = 0;
    for (let index = 0; index < first; index += 1) from += lines[index].length + 1;
    let to = from;
    for (let index = first; index < last; index += 1) to += lines[index].length + (index + 1 < last ? 1 : 0);
    return { first, last, from, to, lineHeight };
  }

  /** `html` (the window's lines) between spacers, after a probe as wide as the widest line. */
  function windowed(html, lines, view, text) {
    const spacer = (count) => (count > 0 ? `<div style="height:${count * view.lineHeight}px"></div>` : '');
    // A trailing newline needs one more visible line in the <pre> layers.
    const tail = view.last === lines.length && text.endsWith('\n') ? ' ' : '';
    return `<div class="width-probe" style="width:${widestColumns(lines)}ch"></div>${spacer(view.first)}${html}${tail}${spacer(lines.length - view.last)}`;
  }

  /** Renders the highlight and find layers for the textarea's text (the visible window). */
  function render() {
    renderQueued = false;
    const text = textarea.value;
    updateBrackets();
    const lines = text.split('\n');
    const view = visibleWindow(lines);
    layer.innerHTML = windowed(highlightLines(lines, language(), view.first, view.last), lines, view, text);
    marks.innerHTML = windowed(renderMarks(text, view.from, view.to), lines, view, text);
    renderGutter(lines.length);
    syncScroll();
  }

  let renderQueued = false;

  /**
   * Renders once for a burst of input events: Chromium sends one per line of a multi-line
   * insertion, and rendering each made a 100 KB paste take minutes. A frame, or a short timer
   * where frames do not come (a hidden tab).
   */
  function scheduleRender() {
    if (renderQueued) return;
    renderQueued = true;
    const run = () => {
      if (renderQueued) render();
    };
    requestAnimationFrame(run);
    setTimeout(run, RENDER_FALLBACK_MS);
  }

  /** After the caret moved: the status line, and the marks layer when the bracket match moved. */
  function caretMoved() {
    updateMeta();
    if (!updateBrackets()) return;
    const text = textarea.value;
    const lines = text.split('\n');
    const view = visibleWindow(lines);
    marks.innerHTML = windowed(renderMarks(text, view.from, view.to), lines, view, text);
    syncScroll();
  }

  /**
   * Applies an edit of lib/editing.js: its changed middle replaces the same range through the
   * native insertText (or delete), one undo step that fires `input` as typing does; then the
   * edit's selection. Text of several lines goes through the native insertHTML (escaped, so the
   * same plain text lands): Chromium splits a multi-line insertText into one insertion and one
   * `input` event per line, and Tab over 1,000 lines took over a minute of page listeners.
   */
  function applyEdit(edit) {
    const old = textarea.value;
    if (edit.text !== old) {
      let from = 0;
      while (from < old.length && from < edit.text.length && old[from] === edit.text[from]) from += 1;
      let oldTo = old.length;
      let newTo = edit.text.length;
      while (oldTo > from && newTo > from && old[oldTo - 1] === edit.text[newTo - 1]) {
        oldTo -= 1;
        newTo -= 1;
      }
      const insert = edit.text.slice(from, newTo);
      textarea.setSelectionRange(from, oldTo);
      const applied = (insert.includes('\n') && document.execCommand('insertHTML', false, escapeHtml(insert)))
        || document.execCommand(insert ? 'insertText' : 'delete', false, insert);
      if (!applied) {
        // No execCommand: the edit still lands (without native undo), and `input` still fires.
        textarea.value = edit.text;
        textarea.dispatchEvent(new Event('input', { bubbles: true }));
      }
    }
    textarea.setSelectionRange(edit.start, edit.end);
    caretMoved();
  }

  /** Updates line, column, line count and the character budget. */
  function updateMeta() {
    const before = textarea.value.slice(0, textarea.selectionStart);
    const line = before.split('\n').length;
    const column = before.length - before.lastIndexOf('\n');
    cursor.textContent = `Ln ${line}, Col ${column}`;
    lineCount.textContent = `${textarea.value.split('\n').length} lines`;
    const count = textarea.value.length;
    const over = maxChars !== undefined && count > maxChars;
    charCount.textContent = maxChars === undefined
      ? `${count.toLocaleString('en-US')} chars`
      : `${count.toLocaleString('en-US')} / ${maxChars.toLocaleString('en-US')}${over ? ' · over budget' : ''}`;
    charCount.classList.toggle('over', over);
    surface.classList.toggle('over-budget', over);
  }

  function recomputeMatches(keepPosition = true) {
    const text = textarea.value.toLowerCase();
    const query = find.query.toLowerCase();
    find.matches = [];
    if (query) {
      for (let at = text.indexOf(query); at >= 0 && find.matches.length < MAX_FIND_MATCHES; at = text.indexOf(query, at + query.length)) {
        find.matches.push(at);
      }
    }
    if (!keepPosition || find.index >= find.matches.length) find.index = find.matches.length ? 0 : -1;
    findCount.textContent = find.matches.length ? `${find.index + 1} of ${find.matches.length}` : (query ? 'No results' : '0 of 0');
  }

  /** Selects `start..end` and scrolls its line into view (a third from the top). */
  function selectRange(start, end) {
    textarea.setSelectionRange(start, end);
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
    const line = textarea.value.slice(0, start).split('\n').length - 1;
    textarea.scrollTop = Math.max(0, line * lineHeight - textarea.clientHeight / 3);
    updateMeta();
    render();
  }

  function revealMatch() {
    const start = find.matches[find.index];
    findCount.textContent = `${find.index + 1} of ${find.matches.length}`;
    selectRange(start, start + find.query.length);
  }

  /** Moves to the next (or previous) match and scrolls it into view. */
  function findStep(backwards = false) {
    if (!find.matches.length) return;
    const count = find.matches.length;
    find.index = (find.index + (backwards ? count - 1 : 1)) % count;
    revealMatch();
  }

  /** Opens the find bar with the current one-line selection (if any) as the query. */
  function openFind() {
    const selected = textarea.value.slice(textarea.selectionStart, textarea.selectionEnd);
    findBar.hidden = false;
    if (selected && !selected.includes('\n')) findInput.value = selected;
    findInput.focus();
    findInput.select();
    find.query = findInput.value;
    recomputeMatches(false);
    render();
  }

  function closeFind() {
    findBar.hidden = true;
    find.query = '';
    recomputeMatches(false);
    render();
    textarea.focus();
  }

  /**
   * Shows `text` and re-renders. The caret, the selection and the scroll position stay on the
   * same characters while the person is in the editor: text changed elsewhere (another tab,
   * the agent) moves them only by what changed before them, so the next key lands where they
   * were typing. (Out of the editor, say a file opened from the explorer, nothing is mapped.)
   */
  function setText(text) {
    const old = textarea.value;
    if (old !== text && document.activeElement !== textarea) {
      textarea.value = text;
    } else if (old !== text) {
      const changes = diff(old, text);
      const { selectionStart, selectionEnd, selectionDirection, scrollTop, scrollLeft } = textarea;
      textarea.value = text;
      textarea.setSelectionRange(mapPosition(selectionStart, changes), mapPosition(selectionEnd, changes), selectionDirection);
      textarea.scrollTop = scrollTop;
      textarea.scrollLeft = scrollLeft;
    }
    refresh();
  }

  /** Re-renders everything after the text or the language changed outside typing. */
  function refresh() {
    recomputeMatches(true);
    updateMeta();
    render();
  }

  textarea.addEventListener('input', () => {
    recomputeMatches(false);
    updateMeta();
    scheduleRender();
  });
  textarea.addEventListener('scroll', () => {
    syncScroll();
    scheduleRender();
  });
  for (const event of ['keyup', 'click', 'select', 'selectionchange']) textarea.addEventListener(event, caretMoved);
  // Chromium reports caret moves in a textarea (held arrow keys, drags) on the document.
  document.addEventListener('selectionchange', () => {
    if (document.activeElement === textarea) caretMoved();
  });
  textarea.addEventListener('keydown', (event) => {
    const key = event.key.toLowerCase();
    if (event.key === 'Escape') {
      // Esc leaves the editor (Tab indents), so keyboard users are not trapped.
      textarea.blur();
    } else if (commandKey(event) && !event.shiftKey && key === 'f') {
      event.preventDefault();
      openFind();
    } else if (commandKey(event) && key === 'g') {
      event.preventDefault();
      findStep(event.shiftKey);
    } else if (onHistory && commandKey(event) && (key === 'z' || key === 'y')) {
      // The page's history, one typing burst per step (as its Undo and Redo buttons), instead of
      // the textarea's own undo, which takes back one character per press, each a new write.
      event.preventDefault();
      onHistory(key === 'y' || event.shiftKey ? 'redo' : 'undo');
    } else if (!event.isComposing && !textarea.readOnly && !textarea.disabled) {
      // AltGr (Ctrl+Alt on Windows) types characters such as `{`: that is typing, not a command.
      const command = event.metaKey || (event.ctrlKey && !event.altKey);
      const state = { text: textarea.value, start: textarea.selectionStart, end: textarea.selectionEnd, language: language() };
      const edit = editForKey({ key: event.key, shift: event.shiftKey, command, alt: event.altKey }, state);
      if (!edit) return;
      event.preventDefault();
      applyEdit(edit);
    }
  });
  findClose.addEventListener('click', closeFind);
  findNext.addEventListener('click', () => findStep(false));
  findPrev.addEventListener('click', () => findStep(true));
  findInput.addEventListener('input', () => {
    find.query = findInput.value;
    recomputeMatches(false);
    if (find.matches.length) revealMatch(); else render();
  });
  findInput.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      findStep(event.shiftKey);
    } else if (event.key === 'Escape') {
      // Handled here, so a page's Esc (deny an approval, leave full screen) does not fire too.
      event.preventDefault();
      event.stopPropagation();
      closeFind();
    }
  });
  refresh();

  return {
    element: root,
    textarea,
    setText,
    refresh,
    updateMeta,
    selectRange,
    openFind,
    closeFind,
    findStep,
  };
}
