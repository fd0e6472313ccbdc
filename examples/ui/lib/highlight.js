// Syntax highlighting for the overlay editor: HTML, CSS, JavaScript, TypeScript, JSON and
// Markdown. Each line is tokenized with the state the previous line ended in (block comments,
// template strings, open tags and fenced code carry across lines), and lines are cached by
// (language, state, text) so typing re-tokenizes only what changed.

import { escapeHtml } from './dom.js';

const JS_KEYWORDS = 'const|let|var|function|return|if|else|for|while|do|switch|case|break|continue|new|class|extends|import|export|from|default|async|await|try|catch|finally|throw|typeof|instanceof|in|of|this|super|null|undefined|true|false|yield|delete|void|static|get|set';
const TS_KEYWORDS = `${JS_KEYWORDS}|interface|type|enum|implements|private|public|protected|readonly|declare|namespace|abstract|as|satisfies|keyof|infer|string|number|boolean|unknown|never|any`;

// A rule: [sticky regex, token class or null for plain text, next state or undefined to stay].
const r = (source, flags = '') => new RegExp(source, `y${flags}`);

function scriptRules(keywords) {
  const code = [
    [r('//.*'), 'comment'],
    [r('/\\*'), 'comment', 'comment'],
    [r('`'), 'string', 'template'],
    [r('"(?:[^"\\\\]|\\\\.)*"?'), 'string'],
    [r("'(?:[^'\\\\]|\\\\.)*'?"), 'string'],
    [r('(?:0x[\\da-f]+|\\d[\\d_]*(?:\\.\\d+)?(?:e[+-]?\\d+)?)\\b', 'i'), 'number'],
    [r(`(?:${keywords})\\b(?![$])`), 'keyword'],
    [r('[A-Za-z_$][\\w$]*(?=\\s*\\()'), 'function'],
    [r('[A-Za-z_$][\\w$]*'), null],
    [r('\\s+'), null],
  ];
  return {
    code,
    comment: [[r('[\\s\\S]*?\\*/'), 'comment', 'code'], [r('.+'), 'comment']],
    template: [[r('(?:[^`\\\\]|\\\\.)*`'), 'string', 'code'], [r('.+'), 'string']],
  };
}

const CSS_COMMON = [
  [r('/\\*'), 'comment', null],
  [r('"(?:[^"\\\\]|\\\\.)*"?'), 'string'],
  [r("'(?:[^'\\\\]|\\\\.)*'?"), 'string'],
  [r('#[\\da-f]{3,8}\\b', 'i'), 'number'],
  [r('@[\\w-]+'), 'keyword'],
];

const LANGUAGES = {
  javascript: scriptRules(JS_KEYWORDS),
  typescript: scriptRules(TS_KEYWORDS),
  json: {
    code: [
      [r('"(?:[^"\\\\]|\\\\.)*"(?=\\s*:)'), 'property'],
      [r('"(?:[^"\\\\]|\\\\.)*"?'), 'string'],
      [r('-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?', 'i'), 'number'],
      [r('(?:true|false|null)\\b'), 'keyword'],
      [r('\\s+'), null],
    ],
  },
  css: {
    // Selectors outside braces, declarations inside (one level: rules nested in @media read as declarations).
    code: [
      [r('/\\*'), 'comment', null],
      [r('@[\\w-]+'), 'keyword'],
      [r('\\{'), null, 'block'],
      [r('[^{/"\'@\\s][^{/"\']*?(?=\\s*\\{|$)'), 'tag'],
      ...CSS_COMMON,
      [r('\\s+'), null],
    ],
    block: [
      ...CSS_COMMON,
      [r('\\}'), null, 'code'],
      [r('--[\\w-]+|[a-z-]+(?=\\s*:)'), 'property'],
      [r('-?\\d*\\.?\\d+(?:px|rem|em|%|vh|vw|vmin|vmax|s|ms|deg|fr|ch)?'), 'number'],
      [r('!important'), 'keyword'],
      [r('[\\w-]+(?=\\()'), 'function'],
      [r('[\\w-]+'), null],
      [r('\\s+'), null],
    ],
    comment: [[r('[\\s\\S]*?\\*/'), 'comment', '$return'], [r('.+'), 'comment']],
  },
  html: {
    code: [
      [r('<!--'), 'comment', 'comment'],
      [r('<!doctype[^>]*>', 'i'), 'keyword'],
      [r('</?[\\w-]+'), 'tag', 'tag'],
      [r('&[\\w#]+;'), 'number'],
      [r('[^<&]+'), null],
    ],
    tag: [
      [r('\\s+'), null],
      [r('/?>'), 'tag', 'code'],
      [r('[\\w:@.-]+(?=\\s*=)'), 'property'],
      [r('='), null],
      [r('"[^"]*"?'), 'string'],
      [r("'[^']*'?"), 'string'],
      [r('[\\w:@.-]+'), 'property'],
    ],
    comment: [[r('[\\s\\S]*?-->'), 'comment', 'code'], [r('.+'), 'comment']],
  },
  markdown: {
    code: [
      [r('#{1,6}\\s.*'), 'keyword'],
      [r('\\s*(?:[-*+]|\\d+\\.)\\s'), 'number'],
      [r('`[^`]*`'), 'string'],
      [r('\\*\\*[^*]+\\*\\*'), 'strong'],
      [r('\\[[^\\]]*\\]\\([^)]*\\)'), 'function'],
      [r('[^`*\\[]+'), null],
    ],
  },
};

const cache = new Map();
const MAX_CACHED_LINES = 20000;

function span(kind, text) {
  const escaped = escapeHtml(text);
  return kind ? `<span class="tok-${kind}">${escaped}</span>` : escaped;
}

/** Tokenizes one line starting in `state`; returns its HTML and the state it ends in. */
function tokenizeLine(language, line, state) {
  if (language === 'markdown') return markdownLine(line, state);
  const grammar = LANGUAGES[language];
  // CSS comments return to whichever state they opened in: "comment<block" etc.
  let [mode, returnTo] = state.split('<');
  let html = '';
  let index = 0;
  while (index < line.length) {
    const rules = grammar[mode] ?? grammar.code;
    let matched = false;
    for (const [regex, kind, next] of rules) {
      regex.lastIndex = index;
      const match = regex.exec(line);
      if (!match || match[0].length === 0) continue;
      html += span(kind, match[0]);
      index += match[0].length;
      if (next === null) {
        returnTo = mode;
        mode = 'comment';
      } else if (next === '$return') {
        mode = returnTo ?? 'code';
        returnTo = undefined;
      } else if (next !== undefined) {
        mode = next;
      }
      matched = true;
      break;
    }
    if (!matched) {
      html += escapeHtml(line[index]);
      index += 1;
    }
  }
  return { html, state: returnTo && mode === 'comment' ? `comment<${returnTo}` : mode };
}

function markdownLine(line, state) {
  if (line.trimStart().startsWith('```')) {
    return { html: span('comment', line), state: state === 'fence' ? 'code' : 'fence' };
  }
  if (state === 'fence') return { html: span('string', line), state };
  return { html: tokenizeInline(line), state };
}

function tokenizeInline(line) {
  let html = '';
  let index = 0;
  while (index < line.length) {
    let matched = false;
    for (const [regex, kind] of LANGUAGES.markdown.code) {
      if (index > 0 && (kind === 'keyword' || kind === 'number')) continue;
      regex.lastIndex = index;
      const match = regex.exec(line);
      if (!match || match[0].length === 0) continue;
      html += span(kind, match[0]);
      index += match[0].length;
      matched = true;
      break;
    }
    if (!matched) {
      html += escapeHtml(line[index]);
      index += 1;
    }
  }
  return html;
}

/** Whether `language` has a highlighter. */
export function isHighlighted(language) {
  return language in LANGUAGES;
}

/** Highlighted HTML of a whole source (one `\n`-joined string, safe for innerHTML). */
export function highlight(source, language) {
  const lines = source.split('\n');
  return highlightLines(lines, language, 0, lines.length);
}

/**
 * Highlighted HTML of `lines[from..to]` (`\n`-joined), each line tokenized in the state the
 * lines before it left (those come from the cache once seen, so a window of a long file costs
 * what the window costs).
 */
export function highlightLines(lines, language, from, to) {
  if (!isHighlighted(language)) return escapeHtml(lines.slice(from, to).join('\n'));
  if (cache.size > MAX_CACHED_LINES) cache.clear();
  let state = 'code';
  const out = [];
  for (let index = 0; index < to; index += 1) {
    const line = lines[index];
    const key = `${language}\u0000${state}\u0000${line}`;
    let result = cache.get(key);
    if (!result) {
      result = tokenizeLine(language, line, state);
      cache.set(key, result);
    }
    if (index >= from) out.push(result.html);
    state = result.state;
  }
  return out.join('\n');
}
