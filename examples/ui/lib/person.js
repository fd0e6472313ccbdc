// What a person reads for a coded failure. A tool's message speaks to the model that called it
// ("Re-read the file before retrying the patch"); a person gets a sentence about what happened
// to their work, with the code kept for reference.

const PERSON_LINES = {
  WORKSPACE_PATCH_NOT_FOUND: () => 'Nothing changed: the text to replace is not in the file (it may have been edited since it was read).',
  WORKSPACE_REVISION_CONFLICT: () => 'Nothing changed: the workspace changed since the request was planned. Ask again to work on the current version.',
  WORKSPACE_FILE_NOT_FOUND: (failure) => `Nothing changed: ${failure.details?.path ?? 'that file'} is not in the workspace.`,
};

/** A person-facing line for `failure` (`{code, message, details?}`), ending with its code. */
export function personLine(failure) {
  const line = PERSON_LINES[failure?.code];
  const text = line ? line(failure) : (failure?.message ?? 'The call failed.');
  return failure?.code ? `${text} (${failure.code})` : text;
}

const DECIDERS = { person: 'you', policy: 'the policy', host: 'the studio' };

/** A person-facing line for a denied run outcome (`{tool, message, decidedBy?}`): who refused. */
export function deniedLine(outcome) {
  const tool = outcome?.tool ?? 'the call';
  const decider = DECIDERS[outcome?.decidedBy];
  return decider ? `Denied ${tool} (by ${decider}): ${outcome.message}` : `Denied ${tool}: ${outcome?.message}`;
}
