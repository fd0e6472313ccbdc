// Chat: prompt recipes, agent runs with their running state, streamed text and tool calls
// (lib/stream.js) and Cancel, typed outcome entries (completed, not understood, failed,
// cancelled, denied) with recovery actions, and approval cards.

import { deniedLine, personLine } from './person.js';
import { retryAnnouncement, runStatusText } from './agent.js';
import { api, downloadWorkspaceFile } from './api.js';
import { $, el } from './dom.js';
import { createApprovals } from './approvals.js';
import { appendEntry, chatEntry, createRunStream } from './stream.js';
import { refreshPreview } from './preview.js';
import { PROMPT_RECIPES, describeRecipe } from './recipes.js';
import { actions, state } from './store.js';

/** Longest prompt the host accepts. */
export const MAX_PROMPT_CHARS = 4000;
const FINAL_STATES = ['completed', 'not-understood', 'failed', 'denied', 'cancelled'];
/** Retries already announced in the chat (`runId:attempt`). */
const announcedRetries = new Set();

// Latest event per run: the socket can report a run before its POST response arrives.
const seenRuns = new Map();
const MAX_SEEN_RUNS = 32;

/** Appends a chat entry of `kind` with optional recovery buttons; keeps the log bounded. */
export function chat(text, kind, recoveries = []) {
  appendEntry($('chat-log'), chatEntry(text, kind, recoveries));
}

const runStream = createRunStream($('chat-log'));

/** Handles an `agentStream` event (text and tool calls of a run as they arrive). */
export function onStreamEvent(message) {
  runStream.onEvent(message);
}

/** Starts an agent run for `prompt` (the local agent unless another is chosen). */
export async function runPrompt(prompt, agent = $('agent-select').value) {
  if (state.activeRun) return;
  if (!(await actions.flushDraft())) return;
  state.lastPrompt = prompt;
  chat(prompt, 'user');
  try {
    // A Design Mode selection shown in the composer goes with the run as context.
    const body = state.selection ? { prompt, agent, metadata: { selection: state.selection } } : { prompt, agent };
    const run = await api('/api/agent/runs', { method: 'POST', body });
    state.agentMode = run.agent;
    state.activeRun = run;
    runStream.attach(run.runId);
    applyRun(seenRuns.get(run.runId) ?? run);
  } catch (error) {
    chat(`${error.code}: ${error.message}`, 'failed', [['Use local agent & retry', () => runPrompt(prompt, 'local')]]);
  }
}

/** Applies a run's lifecycle state to the composer, badge, editor lock and trace controls (app.js's lockEditor). */
export function setActiveRun(run) {
  state.activeRun = run && !FINAL_STATES.includes(run.state) ? run : null;
  const running = Boolean(state.activeRun);
  $('cancel-run').disabled = !running;
  $('send-prompt').disabled = running;
  $('run-status').textContent = running ? runStatusText(run) : '';
  const badge = $('agent-badge');
  badge.dataset.state = running ? run.state : 'idle';
  const mode = run?.agent ?? $('agent-select').value;
  // Picking the provider agent before it is ready (no key where the profile needs one, or no
  // model, as the host's live settings report it) says so up front.
  const keyMissing = !running && mode !== 'local' && state.settings && !(state.settings.ready ?? state.settings.hasApiKey);
  badge.textContent = `${mode === 'local' ? 'local agent' : state.settings?.providerLabel ?? 'OpenRouter'} · ${running ? run.state : keyMissing ? 'no key' : 'idle'}`;
  actions.lockEditor();
}

const RECOVERY_LABELS = {
  retry: 'Retry',
  'reread-and-retry': 'Re-read & retry',
  'refresh-preview': 'Refresh preview',
  'reconnect-folder': 'Reconnect folder',
  'grant-permission': 'Grant access',
  'use-local-agent': 'Use local agent & retry',
};

function recoveryHandler(action, prompt) {
  switch (action) {
    case 'refresh-preview': return refreshPreview;
    case 'reconnect-folder':
    case 'grant-permission': return () => $('folder-path').focus();
    case 'use-local-agent': return () => runPrompt(prompt, 'local');
    case 'reread-and-retry': return () => actions.refreshState({ reloadEditor: true }).then(() => runPrompt(prompt));
    default: return () => runPrompt(prompt);
  }
}

/** Handles an `agent` event: the page's own run drives the composer; an MCP client's run shows on the badge. */
export function onAgentEvent(run) {
  seenRuns.set(run.runId, run);
  if (seenRuns.size > MAX_SEEN_RUNS) seenRuns.delete(seenRuns.keys().next().value);
  if (state.activeRun?.runId === run.runId) applyRun(run);
  else if (!state.activeRun && run.agent === 'mcp') showClientRun(run);
}

/** An MCP client's call in progress (started, waiting, approval) on the badge; idle again once it ends. */
function showClientRun(run) {
  if (FINAL_STATES.includes(run.state)) {
    setActiveRun(null);
    return;
  }
  const badge = $('agent-badge');
  badge.dataset.state = run.state;
  badge.textContent = `MCP client · ${run.state}`;
}

/** Applies a run's state and, once it finished, adds the typed outcome entry. */
function applyRun(run) {
  setActiveRun(run);
  const retry = retryAnnouncement(run, announcedRetries);
  if (retry) chat(retry, 'info');
  if (!run.report) return;
  const outcome = run.report.outcome;
  const prompt = state.lastPrompt;
  const recoveries = (outcome.actions ?? []).map((action) => [RECOVERY_LABELS[action] ?? action, recoveryHandler(action, prompt)]);
  const shown = runStream.finish(run, recoveries);
  switch (outcome.status) {
    case 'completed':
      // An applied change whose preview was not confirmed offers a refresh, never a retry.
      if (!shown) chat(outcome.message, 'completed', recoveries);
      // A download request's run hands the file over: the page delivers it.
      if (outcome.download) downloadWorkspaceFile(outcome.download);
      break;
    case 'not-understood':
      chat(outcome.message, 'not-understood');
      break;
    case 'denied':
      chat(deniedLine(outcome), 'denied', [['Retry', () => runPrompt(prompt)]]);
      break;
    case 'cancelled':
      chat(`Cancelled: ${outcome.message}`, 'cancelled', [['Retry', () => runPrompt(prompt)]]);
      break;
    default:
      chat(personLine(outcome), 'failed', recoveries);
  }
  actions.refreshState();
}

// ---------------------------------------------------------------- approvals

const approvals = createApprovals({
  container: $('approvals'),
  onError: (error) => chat(`${error.code}: ${error.message}`, 'failed'),
  onArrived: () => { $('chat-log').scrollTop = $('chat-log').scrollHeight; },
  escDenies: false, // the page's shortcut handler calls denyFirstApproval
});

/** Renders the pending approval cards (lib/approvals.js, shared by every page). */
export function renderApprovals(pending) {
  approvals.render(pending);
}

/** Denies the first pending approval (Esc while no dialog is open); true when one was pending. */
export function denyFirstApproval() {
  return approvals.denyFirst();
}

// ---------------------------------------------------------------- composer

function renderRecipes() {
  const select = $('recipe-select');
  for (const recipe of PROMPT_RECIPES) {
    select.append(el('option', { value: recipe.id, textContent: recipe.label, title: describeRecipe(recipe) }));
  }
  select.addEventListener('change', () => {
    const recipe = PROMPT_RECIPES.find((candidate) => candidate.id === select.value);
    select.value = '';
    if (!recipe) return;
    $('prompt').value = recipe.prompt;
    $('recipe-hint').textContent = describeRecipe(recipe);
    $('recipe-hint').title = describeRecipe(recipe);
    $('prompt').focus();
  });
}

/**
 * Applies a `?prompt=` deep link: fills the composer only (never runs it) and removes the
 * parameter from the address and history.
 */
export function applyDeepLink() {
  const url = new URL(window.location.href);
  const prompt = url.searchParams.get('prompt');
  if (prompt === null) return;
  $('prompt').value = prompt.slice(0, MAX_PROMPT_CHARS);
  url.searchParams.delete('prompt');
  window.history.replaceState(window.history.state, '', url);
  chat('A linked prompt was placed in the composer. Review it and press Run when ready.', 'info');
}

/** Wires the composer. */
export function wireChat() {
  renderRecipes();
  $('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const prompt = $('prompt').value.trim();
    if (!prompt || state.activeRun) return;
    $('prompt').value = '';
    runPrompt(prompt);
  });
  $('prompt').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $('chat-form').requestSubmit();
    }
  });
  $('cancel-run').addEventListener('click', () => {
    if (state.activeRun) api(`/api/agent/runs/${state.activeRun.runId}/cancel`, { method: 'POST' }).catch(() => {});
  });
  $('agent-select').addEventListener('change', () => setActiveRun(state.activeRun));
}
