// The agent picker and the running-run status of every page's composer: one rule for which
// agent a saved API key selects, and one text for a run that waits, including the provider
// retry it is backing off for.

const RUN_STATE_TEXT = {
  started: 'Running…',
  waiting: 'Waiting…',
  approval: 'Needs your approval',
};

/**
 * Applies the host's key state to an agent `<select>`: the OpenRouter option names the model
 * (or says the key is missing), and a key that was just saved selects OpenRouter. Only a change
 * of key presence moves the choice, so picking the local agent with a key set sticks across the
 * host's repeated state reads; a removed key leaves the choice, and the badge says "no key".
 */
export function applyAgentChoice(select, settings) {
  const hasKey = Boolean(settings?.hasApiKey);
  const remote = select.querySelector('option[value="openrouter"]');
  remote.textContent = hasKey ? `OpenRouter · ${settings.model}` : 'OpenRouter (no key)';
  const before = select.dataset.hasKey;
  select.dataset.hasKey = String(hasKey);
  if (hasKey && before !== 'true') select.value = 'openrouter';
}

/** `retry 1 of 2 in 4s` while the run backs off before a provider retry, else null. */
export function retryText(run) {
  const retry = run?.state === 'waiting' ? run.retry : null;
  if (!retry) return null;
  return `retry ${retry.attempt} of ${retry.maxAttempts} in ${Math.ceil(retry.delayMs / 1000)}s`;
}

/** The composer's status line for an unfinished run. */
export function runStatusText(run) {
  const text = RUN_STATE_TEXT[run.state] ?? 'Running…';
  const retry = retryText(run);
  return retry ? `${text} (${retry})` : text;
}

/** The chat line announcing a retry the first time a run reports it, else null. */
export function retryAnnouncement(run, announced) {
  const retry = retryText(run);
  if (!retry) return null;
  const key = `${run.runId}:${run.retry.attempt}`;
  if (announced.has(key)) return null;
  announced.add(key);
  if (announced.size > 64) announced.delete(announced.values().next().value);
  return `The provider answered ${run.retry.code}; ${retry}.`;
}
