// The editing essentials of the code editor (lib/code-editor.js): auto-indent on Enter, Tab and
// Shift+Tab over lines, auto-closed brackets, quotes and HTML tags (typed closers step over,
// Backspace deletes an empty pair), the bracket matching the one at the caret and toggled line
// comments. Everything here is pure text logic: a function takes the text, the selection
// (`start`, `end`) and the language and returns the edit `{ text, start, end }` (the new text
// and selection), or null when the key stays the browser's. The editor applies an edit as one
// native edit, so one Ctrl+Z undoes it whole and the page's `input` listeners fire.

/** One indent level: the two spaces the editor's Tab has always inserted. */
export const INDENT = '  ';

const OPENERS = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = { ')': '(', ']': '[', '}': '{' };
const QUOTES = new Set(['"', "'", '`']);
/** HTML elements that never have a closing tag. */
const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** Line comments by language: an opener and (for CSS and HTML, which have none) a closer. */
const COMMENTS = { css: ['/*', '*/'], html: ['<!--', '-->'], markdown: ['<!--', '-->'] };
const LINE_COMMENT = ['//', ''];
// An opening tag the caret is about to end: `<name` with attributes (quoted values may hold `>`).
const OPEN_TAG = /^<([A-Za-z][\w:.-]*)(?:\s(?:[^<>"']|"[^"]*"|'[^']*')*)?$/;

/** The edit that puts `insert` over `from..to` and the selection at `start..end`. */
function replace(text, from, to, insert, start, end = start) {
  return { text: text.slice(0, from) + insert + text.slice(to), start, end };
}

function lineStartOf(text, at) {
  // lastIndexOf with a fromIndex of -1 would still look at index 0.
  return at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

function lineEndOf(text, at) {
  const end = text.indexOf('\n', at);
  return end < 0 ? text.length : end;
}

function leadingWhitespace(line) {
  return /^[ \t]*/.exec(line)[0];
}

function spansLines(text, start, end) {
  return text.slice(start, end).includes('\n');
}

/**
 * The lines a selection covers, `from` (a line start) to `to` (a line end). A last line the
 * selection only touches at its first column is left out, as a dragged selection of whole
 * lines ends there.
 */
function selectedLines(text, start, end) {
  const last = end > start && text[end - 1] === '\n' ? end - 1 : end;
  return { from: lineStartOf(text, start), to: lineEndOf(text, last) };
}

/** Replaces the covered lines by `lines` and selects them whole, so the next Tab acts on the same lines. */
function replaceLines(text, from, to, lines) {
  const block = lines.join('\n');
  return replace(text, from, to, block, from, from + block.length);
}

/** The name of the opening tag `before` ends inside of (`<div class="a"`), or null. */
function openTagBefore(before) {
  const tag = before.slice(before.lastIndexOf('<'));
  const match = OPEN_TAG.exec(tag);
  // `<br/` ends a self-closing tag; void elements never close.
  if (!match || tag.endsWith('/') || VOID_ELEMENTS.has(match[1].toLowerCase())) return null;
  return match[1];
}

/** The closer one more indent level stands for when `before` ends in an opener, or null. */
function openerAtEnd(before, language) {
  const last = before.at(-1);
  if (OPENERS[last]) return OPENERS[last];
  if (language !== 'html' || last !== '>') return null;
  const name = openTagBefore(before.slice(0, -1));
  return name ? `</${name}>` : null;
}

/**
 * Enter: the new line keeps the current line's indent (up to the caret), one level more after
 * an opener at the caret, and between a pair (`{|}`, `<div>|</div>`) the closer moves to a line
 * of its own below. Null for a plain newline, which the browser types itself.
 */
export function newlineWithIndent({ text, start, end, language }) {
  const before = text.slice(lineStartOf(text, start), start);
  const indent = leadingWhitespace(before);
  const closer = openerAtEnd(before, language);
  if (!closer) {
    return indent ? replace(text, start, end, `\n${indent}`, start + 1 + indent.length) : null;
  }
  const inner = `\n${indent}${INDENT}`;
  const caret = start + inner.length;
  const after = text.slice(end, end + closer.length);
  if (after.toLowerCase() === closer.toLowerCase()) return replace(text, start, end, `${inner}\n${indent}`, caret);
  return replace(text, start, end, inner, caret);
}

/**
 * Tab: over a selection of several lines, every non-blank line gains one indent level (blank
 * lines would only gain trailing spaces); otherwise two spaces replace the selection.
 */
export function indentLines({ text, start, end }) {
  if (!spansLines(text, start, end)) return replace(text, start, end, INDENT, start + INDENT.length);
  const { from, to } = selectedLines(text, start, end);
  const lines = text.slice(from, to).split('\n').map((line) => (line ? INDENT + line : line));
  return replaceLines(text, from, to, lines);
}

/** How much of one indent level (up to two spaces, or one tab) `line` starts with. */
function outdentWidth(line) {
  if (line.startsWith('\t')) return 1;
  return /^ {0,2}/.exec(line)[0].length;
}

/**
 * Shift+Tab: every covered line (the caret's line without a selection) loses up to one indent
 * level. The key is always taken, even with nothing to remove, so it never moves the focus
 * (Esc leaves the editor).
 */
export function outdentLines({ text, start, end }) {
  if (spansLines(text, start, end)) {
    const { from, to } = selectedLines(text, start, end);
    const lines = text.slice(from, to).split('\n').map((line) => line.slice(outdentWidth(line)));
    return replaceLines(text, from, to, lines);
  }
  const lineStart = lineStartOf(text, start);
  const width = outdentWidth(text.slice(lineStart, lineStart + INDENT.length));
  // A caret inside the removed indent lands at the line start.
  const shift = (at) => at - Math.min(width, at - lineStart);
  return replace(text, lineStart, lineStart + width, '', shift(start), shift(end));
}

/**
 * An opening bracket or quote typed at a caret gets its closer, with the caret between them.
 * Not before a word character (the person is wrapping existing text by hand), and a quote not
 * right after one (`don't`, or the closing quote of a string typed by hand).
 */
export function closePair({ text, start, end }, char) {
  const closer = OPENERS[char] ?? (QUOTES.has(char) ? char : null);
  if (!closer || start !== end) return null;
  const next = text[end] ?? '';
  if (next && !/[\s)\]}>,;:]/.test(next)) return null;
  if (QUOTES.has(char) && /\w/.test(text[start - 1] ?? '')) return null;
  return replace(text, start, end, char + closer, start + 1);
}

/** A closing bracket or quote typed just before that same character steps over it. */
export function stepOver({ text, start, end }, char) {
  if (start !== end || !(CLOSERS[char] || QUOTES.has(char)) || text[start] !== char) return null;
  return { text, start: start + 1, end: start + 1 };
}

/** Backspace between an empty pair (`(|)`, `"|"`) deletes both halves. */
export function deletePair({ text, start, end }) {
  if (start !== end || start === 0) return null;
  const before = text[start - 1];
  const after = text[start];
  const pairs = OPENERS[before] === after || (QUOTES.has(before) && after === before);
  return pairs ? replace(text, start - 1, start + 1, '', start - 1) : null;
}

/** `>` ending an opening tag in HTML inserts its closing tag after the caret. */
export function closeTag({ text, start, end, language }) {
  if (language !== 'html' || start !== end) return null;
  const name = openTagBefore(text.slice(0, start));
  return name ? replace(text, start, end, `></${name}>`, start + 1) : null;
}

function countMatches(text, source) {
  return text.match(new RegExp(source, 'gi'))?.length ?? 0;
}

/**
 * `>` ending a closing tag typed by hand right before the same closing tag (the one `closeTag`
 * inserted) steps over that one instead of doubling it, when the document would otherwise hold
 * more `</name>` than `<name>`: typing `<p>one</p>` gives `<p>one</p>`, while `</div>` typed
 * before the `</div>` of an outer `<div>` still closes the inner one.
 */
export function stepOverClosingTag({ text, start, end, language }) {
  if (language !== 'html' || start !== end) return null;
  const typed = /<\/([A-Za-z][\w:.-]*)$/.exec(text.slice(0, start));
  if (!typed) return null;
  const closer = `</${typed[1]}>`;
  if (text.slice(start, start + closer.length).toLowerCase() !== closer.toLowerCase()) return null;
  const name = typed[1].replace(/[.]/g, '\\.');
  const opened = countMatches(text, `<${name}(?=[\\s/>])`);
  const closed = countMatches(text, `</${name}\\s*>`) + 1;
  if (closed <= opened) return null;
  return replace(text, typed.index, start, '', typed.index + closer.length);
}

/** A line commented out (`open body close`), with the column map that keeps the caret on its text. */
function commentLine(line, open, close) {
  const indent = leadingWhitespace(line);
  const body = line.slice(indent.length);
  const prefix = `${open} `;
  return {
    line: `${indent}${prefix}${body}${close ? ` ${close}` : ''}`,
    column: (column) => (column <= indent.length ? column : column + prefix.length),
  };
}

/** A commented line back to its body (one space inside each marker goes with it). */
function uncommentLine(line, open, close) {
  const indent = leadingWhitespace(line);
  const trimmed = line.trimEnd();
  let inner = trimmed.slice(indent.length + open.length, trimmed.length - close.length);
  let removed = open.length;
  if (inner.startsWith(' ')) {
    inner = inner.slice(1);
    removed += 1;
  }
  if (close && inner.endsWith(' ')) inner = inner.slice(0, -1);
  return {
    line: indent + inner,
    column: (column) => (column <= indent.length ? column : Math.min(indent.length + inner.length, Math.max(indent.length, column - removed))),
  };
}

function commentSyntax(language) {
  return COMMENTS[language] ?? LINE_COMMENT;
}

/**
 * Ctrl+/ (Cmd+/): comments out the caret's line or every covered line in the language's syntax
 * (`//`, `/* … *\/` for CSS, `<!-- … -->` for HTML), or uncomments them when all already are.
 * Blank lines are left alone unless only blank lines are covered.
 */
export function toggleComment({ text, start, end, language }) {
  const [open, close] = commentSyntax(language);
  const { from, to } = selectedLines(text, start, end);
  const lines = text.slice(from, to).split('\n');
  const blank = (line) => !line.trim();
  const touched = lines.some((line) => !blank(line)) ? (line) => !blank(line) : () => true;
  const isCommented = (line) => {
    const body = line.trim();
    return body.startsWith(open) && body.endsWith(close) && body.length >= open.length + close.length;
  };
  const uncomment = lines.filter(touched).every(isCommented);
  const changed = lines.map((line) => {
    if (!touched(line)) return { line, column: (column) => column };
    return uncomment ? uncommentLine(line, open, close) : commentLine(line, open, close);
  });
  if (lines.length > 1 || spansLines(text, start, end)) return replaceLines(text, from, to, changed.map((entry) => entry.line));
  // One line: the caret (or selection) stays on the same characters.
  const [{ line, column }] = changed;
  return replace(text, from, to, line, from + column(start - from), from + column(end - from));
}

/**
 * The positions of the bracket next to `caret` (the one before it first) and of its match,
 * in text order, or null when there is none or it is unmatched.
 */
export function matchingBracket(text, caret) {
  for (const at of [caret - 1, caret]) {
    const char = text[at];
    const forward = Boolean(OPENERS[char]);
    const partner = OPENERS[char] ?? CLOSERS[char];
    if (!partner) continue;
    let depth = 0;
    for (let index = at; index >= 0 && index < text.length; index += forward ? 1 : -1) {
      if (text[index] === char) depth += 1;
      else if (text[index] === partner) depth -= 1;
      if (depth === 0) return forward ? [at, index] : [index, at];
    }
  }
  return null;
}

/**
 * The edit for one keydown, or null when the browser handles the key. `key` is the event's
 * key; `command` is Ctrl (Cmd on macOS) without AltGr; `alt` and `shift` are the modifiers.
 */
export function editForKey({ key, shift = false, command = false, alt = false }, state) {
  if (command) return key === '/' ? toggleComment(state) : null;
  if (key.length > 1 && alt) return null;
  switch (key) {
    case 'Enter': return shift ? null : newlineWithIndent(state);
    case 'Tab': return shift ? outdentLines(state) : indentLines(state);
    case 'Backspace': return shift ? null : deletePair(state);
    case '>': return stepOverClosingTag(state) ?? closeTag(state);
    default: return key.length === 1 ? stepOver(state, key) ?? closePair(state, key) : null;
  }
}
