// The approval card, one component for every page: tool, description, caller (source · mode),
// session, argument names and the host's safe preview (never file source), the change under
// review (lib/review.js) with the exact arguments that will run, and Deny / Approve. Approve
// and Deny POST /api/approvals/{id}; Approve carries the digest of the arguments shown.
// A question an MCP server asks during a call (`kind: "question"`) is a card of the same kind:
// its message, the form it asks for (lib/question-form.js), Decline / Send, POSTed to
// /api/questions/{id}.

import { api } from './api.js';
import { button, el } from './dom.js';
import { consumeRelaunched, keepApprovals, keptApprovals } from './launch.js';
import { modalOpen } from './modal.js';
import { questionFields, questionValues } from './question-form.js';
import { allowBody, forgetSettled, reloadReviews, reviewSlot } from './review.js';

/** What an answer that never reached the host reports (fetch failed: the studio is down). */
const UNREACHABLE = {
  code: 'STUDIO_UNREACHABLE',
  message: 'The studio is not answering (it may be restarting): your answer was not sent, and nothing was applied.',
};

/** Who asked for a call, for a person: the wire's source names (`model`, `mcp`…) say little. */
const CALLERS = {
  model: 'The agent',
  mcp: 'An MCP client',
  iframe: 'The preview page',
  local: 'This studio (a button, the Tools tab)',
};

function callerText(source) {
  return CALLERS[source] ?? source;
}

/** What the chat says of approvals a studio restart ended (`[{id, name}]`). */
export function restartEndedApprovals(lost) {
  const names = [...new Set(lost.map((approval) => approval.name))].join(', ');
  return `The studio restarted while ${names} waited for your approval: that run ended and nothing was applied. Ask again to redo it.`;
}

/**
 * Approval cards in `container`. `onError(error)` reports a refused answer; `onArrived()` runs
 * after a new card is shown (a page may scroll to it). With `escDenies`, Esc outside an open
 * dialog denies the oldest card (a page with its own shortcut handler calls `denyFirst()`).
 * With `surface`, the cards shown are remembered in the tab, and after the reload of a studio
 * restart `onLost(approvals)` hears the ones the restart ended (their runs ended unapplied).
 */
export function createApprovals({ container, surface = null, onError = () => {}, onArrived = () => {}, onLost = () => {}, escDenies = true }) {
  let pending = [];
  const reviews = new Map();
  let lostBefore = surface && consumeRelaunched() ? keptApprovals(surface) : [];

  /** Answers approval `id` with `body` (or what `body()` resolves to); `kind` `question` for a
   * server's question. */
  async function resolve(id, body, kind = 'approval') {
    const controls = () => container.querySelectorAll(`[data-approval-id="${CSS.escape(id)}"] button`);
    for (const control of controls()) control.disabled = true;
    try {
      const decision = typeof body === 'function' ? await body() : body;
      const route = kind === 'question' ? 'questions' : 'approvals';
      await api(`/api/${route}/${encodeURIComponent(id)}`, { method: 'POST', body: decision });
    } catch (error) {
      for (const control of controls()) control.disabled = false;
      const coded = error?.code ? error : UNREACHABLE;
      const card = container.querySelector(`[data-approval-id="${CSS.escape(id)}"]`);
      card?.querySelector('.approval-note')?.remove();
      card?.append(el('p', { className: 'approval-note error', attrs: { role: 'status' }, textContent: `${coded.code}: ${coded.message}` }));
      onError(coded);
    }
  }

  /** Remembers the cards shown; the first time after a restart, reports the ones it ended. */
  function remember() {
    if (!surface) return;
    const lost = lostBefore.filter((shown) => !pending.some((approval) => approval.id === shown.id));
    lostBefore = [];
    if (lost.length) onLost(lost);
    keepApprovals(surface, pending.map(({ id, name }) => ({ id, name })));
  }

  /** A server's question during a call: its message and form, Decline / Send. */
  function questionCard(question) {
    const form = el('form', { className: 'question-form', attrs: { novalidate: '' } }, questionFields(question.requestedSchema));
    const send = () => {
      if (!form.reportValidity()) return;
      resolve(question.id, { action: 'accept', content: questionValues(form) }, 'question');
    };
    form.addEventListener('submit', (event) => { event.preventDefault(); send(); });
    return el('section', {
      className: 'approval question',
      dataset: { approvalId: question.id, tool: question.name, kind: 'question' },
      attrs: { role: 'alertdialog', 'aria-label': `${question.askedBy} asks`, 'aria-describedby': `question-message-${question.id}` },
    },
    el('div', { className: 'approval-head' },
      el('span', { className: 'approval-label', textContent: 'Question' }),
      el('code', { className: 'approval-tool', textContent: question.name })),
    el('p', { className: 'question-message', id: `question-message-${question.id}`, textContent: question.message }),
    el('dl', {},
      el('dt', { textContent: 'Asked by' }), el('dd', { className: 'approval-caller', textContent: `${question.askedBy}, during this call` }),
      question.sessionId ? [el('dt', { textContent: 'Session' }), el('dd', { textContent: question.sessionId })] : null),
    form,
    el('div', { className: 'buttons' },
      button('Decline', () => resolve(question.id, { action: 'decline' }, 'question'), { className: 'deny', title: 'Decline (Esc): the server hears no' }),
      button('Send answer', send, { className: 'approve answer primary' })));
  }

  function card(approval) {
    if (approval.kind === 'question') return questionCard(approval);
    const caller = callerText(approval.source);
    return el('section', {
      className: 'approval',
      dataset: { approvalId: approval.id, tool: approval.name },
      attrs: { role: 'alertdialog', 'aria-label': `Approve ${approval.name}?`, 'aria-describedby': `approval-desc-${approval.id}` },
    },
    el('div', { className: 'approval-head' },
      el('span', { className: 'approval-label', textContent: 'Approval needed' }),
      el('code', { className: 'approval-tool', textContent: approval.name })),
    el('p', { className: 'approval-desc', id: `approval-desc-${approval.id}`, textContent: approval.description ?? '' }),
    el('dl', {},
      el('dt', { textContent: 'Asked by' }), el('dd', { className: 'approval-caller', textContent: caller, title: `source: ${approval.source}${approval.mode ? `, mode: ${approval.mode}` : ''}` }),
      approval.sessionId ? [el('dt', { textContent: 'Session' }), el('dd', { textContent: approval.sessionId })] : null,
      el('dt', { textContent: 'Arguments' }), el('dd', { className: 'argument-names', textContent: approval.argumentKeys?.join(', ') || 'none' }),
      approval.safeArgumentPreview ? [el('dt', { textContent: 'Values' }), el('dd', { className: 'safe-preview', textContent: approval.safeArgumentPreview })] : null),
    reviewSlot(approval.id, reviews, 'Approve'),
    el('div', { className: 'buttons' },
      button('Deny', () => resolve(approval.id, { decision: 'deny' }), { className: 'deny', title: 'Deny (Esc)' }),
      button('Approve', () => resolve(approval.id, async () => allowBody(await reviews.get(approval.id))), { className: 'approve primary' })));
  }

  function render(next) {
    const before = new Set(pending.map((approval) => approval.id));
    pending = next ?? [];
    remember();
    forgetSettled(reviews, pending);
    const arrived = pending.some((approval) => !before.has(approval.id));
    if (!arrived && pending.length === before.size) return;
    // Cards already shown are kept as they are (a half-filled question form, an open diff).
    const shown = new Map([...container.children].map((node) => [node.dataset.approvalId, node]));
    container.replaceChildren(...pending.map((item) => shown.get(item.id) ?? card(item)));
    container.hidden = pending.length === 0;
    // Focus moves only for a new card, so typing elsewhere is not interrupted on every refresh.
    if (arrived) {
      container.querySelector('.approve')?.focus({ preventScroll: true });
      onArrived();
    }
  }

  function denyFirst() {
    const first = pending[0];
    if (!first) return false;
    if (first.kind === 'question') resolve(first.id, { action: 'decline' }, 'question');
    else resolve(first.id, { decision: 'deny' });
    return true;
  }

  if (escDenies) {
    document.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.defaultPrevented || modalOpen()) return;
      if (denyFirst()) event.preventDefault();
    });
  }
  container.hidden = true;
  /** The workspace moved: pending edits' diffs are shown against what the files hold now. */
  function workspaceMoved() {
    reloadReviews(container, reviews);
  }

  return { render, denyFirst, workspaceMoved };
}
