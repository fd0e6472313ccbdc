// The agent picker and the running-run status of every page's composer: one rule for which
// agent a saved API key selects, and one text for a run that waits, including the provider
// retry it is backing off for.

const RUN_STATE_TEXT = {
  started: 'Running…',
  waiting: 'Waiting…',
  approval: 'Needs your approval',
};

/**
 * Applies the host's provider state to an agent `<select>`: the provider option names the
 * provider and model (or says what is missing: a key, or a model for a local server), and a
 * provider that just became ready (a key saved, or a keyless local profile chosen) selects it.
 * Only a change of readiness moves the choice, so picking the local agent with a provider ready
 * sticks across the host's repeated state reads; a provider that stops being ready leaves the
 * choice, and the badge says what is missing.
 */
export function applyAgentChoice(select, settings) {
  // `ready`: a key where the profile needs one, and a model (a local server needs no key).
  const ready = Boolean(settings?.ready ?? settings?.hasApiKey);
  const label = settings?.providerLabel ?? 'OpenRouter';
  const remote = select.querySelector('option[value="openrouter"]');
  const missing = settings?.needsKey === false ? 'no model' : 'no key';
  remote.textContent = ready ? `${label} · ${settings.model}` : `${label} (${missing})`;
  const before = select.dataset.ready;
  select.dataset.ready = String(ready);
  if (ready && before !== 'true') select.value = 'openrouter';
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
