// Safe markdown for assistant text: paragraphs, `inline code` and ``` fenced code blocks,
// built as DOM nodes from text (never innerHTML), so model text cannot inject markup. An
// unclosed fence (text still streaming) shows as a code block so far.

import { el } from './dom.js';

const FENCE = /^\s*```/;

/** The nodes of `text` rendered as the supported markdown subset. */
export function renderMarkdown(text) {
  const nodes = [];
  let paragraph = [];
  let code = null;
  const endParagraph = () => {
    if (paragraph.length) nodes.push(el('p', {}, inline(paragraph.join('\n'))));
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    if (code) {
      if (FENCE.test(line)) {
        nodes.push(codeBlock(code));
        code = null;
      } else code.lines.push(line);
    } else if (FENCE.test(line)) {
      endParagraph();
      code = { language: line.trim().slice(3).trim(), lines: [] };
    } else if (line.trim() === '') endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  if (code) nodes.push(codeBlock(code));
  return nodes;
}

function codeBlock({ language, lines }) {
  return el('pre', { className: 'md-code', dataset: language ? { language } : {} }, el('code', { textContent: lines.join('\n') }));
}

/** Text with `code` spans; an unpaired backtick stays text. */
function inline(text) {
  return text.split(/(`[^`\n]+`)/).map((part) => (part.length > 2 && part.startsWith('`') && part.endsWith('`')
    ? el('code', { textContent: part.slice(1, -1) })
    : part)).filter((part) => part !== '');
}
