// A run as it streams, in a chat log: every page renders its run's `agentStream` events here
// (the assistant text as it arrives, each tool call assembling, then running and its result),
// for the local agent and a provider alike. Also the chat entry every log shares.
//
// Events of a run the page does not own yet are kept (bounded): the socket can report a run
// before the POST that started it answered. A `retryScheduled` voids what its turn streamed; a
// `fixTurn` (the host's, not the loop's) says a fix turn starts.

import { button, el } from './dom.js';
import { renderMarkdown } from './markdown.js';

/** Entries a chat log keeps. */
export const MAX_CHAT_ENTRIES = 200;
const MAX_BUFFERED_RUNS = 8;
const MAX_BUFFERED_EVENTS = 2000;
const MAX_SHOWN_ARGUMENT_CHARS = 4000;
const CALL_STATUS_TEXT = { assembling: 'assembling…', ready: 'ready', running: 'running…', completed: 'done', failed: 'failed', cancelled: 'cancelled' };

/** A chat entry of `kind` (`user`, `info`, `completed`, ...) with optional recovery buttons. */
export function chatEntry(text, kind, recoveries = []) {
  const entry = el('li', { className: `entry ${kind}`, dataset: { kind } },
    kind === 'user' ? null : el('span', { className: 'entry-kind', textContent: kind === 'info' ? 'studio' : kind.replace('-', ' ') }),
    el('div', { className: 'entry-text', textContent: text }));
  addRecoveries(entry, recoveries);
  return entry;
}

function addRecoveries(entry, recoveries) {
  if (recoveries.length) entry.append(el('div', { className: 'recovery' }, recoveries.map(([label, handler]) => button(label, handler))));
}

/** Appends `entry` to `log`, keeping the log bounded and scrolled to the end. */
export function appendEntry(log, entry) {
  log.append(entry);
  while (log.children.length > MAX_CHAT_ENTRIES) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

/** The streamed entries of the page's run in `log`. */
export function createRunStream(log) {
  const buffered = new Map();
  let run = null;

  const stick = () => { log.scrollTop = log.scrollHeight; };

  function textEntry(turn) {
    let text = run.texts.get(turn);
    if (!text) {
      const body = el('div', { className: 'entry-text markdown' });
      const entry = el('li', { className: 'entry assistant streaming', dataset: { kind: 'assistant', turn: String(turn) } },
        el('span', { className: 'entry-kind', textContent: 'assistant' }), body);
      text = { entry, body, value: '', frame: 0 };
      run.texts.set(turn, text);
      appendEntry(log, entry);
    }
    return text;
  }

  function render(text) {
    text.frame = 0;
    text.body.replaceChildren(...renderMarkdown(text.value));
    stick();
  }

  function appendText(turn, piece) {
    const text = textEntry(turn);
    text.value += piece;
    // One render per frame however many deltas arrive in it.
    if (!text.frame) text.frame = requestAnimationFrame(() => render(text));
  }

  function startCall({ toolCallId, name, turn }) {
    const args = el('pre', { className: 'tool-args' });
    const status = el('span', { className: 'tool-status' });
    const entry = el('li', { className: 'entry tool-call', dataset: { kind: 'tool-call', toolCallId, turn: String(turn) } },
      el('span', { className: 'entry-kind', textContent: 'tool call' }),
      el('div', { className: 'tool-call-head' }, el('code', { className: 'tool-name', textContent: name }), ' ', status),
      args);
    const call = { entry, args, status, text: '' };
    run.calls.set(toolCallId, call);
    setStatus(toolCallId, 'assembling');
    appendEntry(log, entry);
  }

  function showArguments(call, text) {
    call.args.textContent = text.length > MAX_SHOWN_ARGUMENT_CHARS ? `${text.slice(0, MAX_SHOWN_ARGUMENT_CHARS)}\n… (${text.length} characters)` : text;
    stick();
  }

  function growCall({ toolCallId, delta }) {
    const call = run.calls.get(toolCallId);
    if (!call) return;
    call.text += delta;
    showArguments(call, call.text);
  }

  function readyCall({ toolCallId, arguments: args, digest, issues }) {
    const call = run.calls.get(toolCallId);
    if (!call) return;
    showArguments(call, JSON.stringify(args, null, 2));
    call.entry.dataset.digest = digest;
    if (issues?.length) call.entry.append(el('p', { className: 'tool-issues', textContent: `Will not run: ${issues.join('; ')}` }));
    setStatus(toolCallId, 'ready');
  }

  function setStatus(toolCallId, status, code) {
    const call = run.calls.get(toolCallId);
    if (!call) return;
    call.entry.dataset.status = status;
    call.status.textContent = code ? `${CALL_STATUS_TEXT[status] ?? status} · ${code}` : CALL_STATUS_TEXT[status] ?? status;
  }

  function voidTurn(turn) {
    const text = run.texts.get(turn);
    if (text) {
      cancelAnimationFrame(text.frame);
      text.entry.remove();
      run.texts.delete(turn);
    }
    for (const [id, call] of run.calls) {
      if (call.entry.dataset.turn === String(turn)) {
        call.entry.remove();
        run.calls.delete(id);
      }
    }
  }

  function apply(event) {
    switch (event.type) {
      case 'textDelta': appendText(event.turn, event.text); break;
      case 'toolCallStreamStarted': startCall(event); break;
      case 'toolCallArgumentsDelta': growCall(event); break;
      case 'toolCallReady': readyCall(event); break;
      case 'toolCallStarted': setStatus(event.toolCallId, 'running'); break;
      case 'toolCallFinished': setStatus(event.toolCallId, event.status, event.code); break;
      case 'retryScheduled': voidTurn(event.turn); break;
      // The run's change broke the preview and the model is asked to fix it: said in its own
      // entry, and the fix's turns (numbered after the earlier ones) get their own bubbles.
      case 'fixTurn': appendEntry(log, chatEntry(event.message, 'info')); break;
      default: break;
    }
  }

  /** Marks what the run left streaming once it ended: a cancelled run's text stays, marked. */
  function settle(state) {
    for (const text of run.texts.values()) {
      cancelAnimationFrame(text.frame);
      render(text);
      text.entry.classList.remove('streaming');
      if (state !== 'completed') {
        text.entry.dataset.state = state;
        text.entry.querySelector('.entry-kind').textContent = `assistant · ${state.replace('-', ' ')}`;
      }
    }
    for (const [id, call] of run.calls) {
      if (['assembling', 'ready', 'running'].includes(call.entry.dataset.status)) setStatus(id, state === 'completed' ? 'completed' : 'cancelled');
    }
  }

  return {
    /** Takes an `agentStream` message. */
    onEvent({ runId, event }) {
      if (run?.id === runId) {
        apply(event);
        return;
      }
      if (!buffered.has(runId)) {
        buffered.set(runId, []);
        if (buffered.size > MAX_BUFFERED_RUNS) buffered.delete(buffered.keys().next().value);
      }
      const events = buffered.get(runId);
      if (events.length < MAX_BUFFERED_EVENTS) events.push(event);
    },
    /** Renders `runId`'s stream from now on (and what arrived before). */
    attach(runId) {
      if (run?.id === runId) return;
      run = { id: runId, texts: new Map(), calls: new Map() };
      for (const event of buffered.get(runId) ?? []) apply(event);
      buffered.delete(runId);
    },
    /**
     * Ends the page's run `finished`: a completed run whose last streamed text is its reply
     * becomes the outcome entry (with `recoveries`) and true is returned; otherwise the outcome
     * gets its own entry (false).
     */
    finish(finished, recoveries = []) {
      if (run?.id !== finished.runId) return false;
      const outcome = finished.report?.outcome;
      settle(finished.state);
      const last = [...run.texts.values()].at(-1);
      run = null;
      // A run with fix turns answers every round's text, joined by blank lines; the earlier
      // rounds already have their bubbles.
      const message = outcome?.message?.trim() ?? '';
      const reply = last?.value.trim();
      if (outcome?.status !== 'completed' || !reply || !(message === reply || message.endsWith(`\n\n${reply}`))) return false;
      last.entry.className = 'entry completed';
      last.entry.dataset.kind = 'completed';
      last.entry.querySelector('.entry-kind').textContent = 'completed';
      addRecoveries(last.entry, recoveries);
      return true;
    },
  };
}
