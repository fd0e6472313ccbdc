// The prompt recipe catalog: each recipe is a prompt for the local agent (or a model) plus the
// tools it is expected to call and whether those need approval or a preview acknowledgement.
// The chat renders this data; it does not keep a second list of strings. The workspace page's
// composer takes a prompt from this list or from a `?prompt=` link.

import { el } from './dom.js';
import { MAX_PROMPT_CHARS } from './surface.js';

/**
 * @typedef {object} PromptRecipe
 * @property {string} id
 * @property {string} label
 * @property {string} prompt
 * @property {string[]} tools       Tools the local agent calls, in order (status preflight included).
 * @property {boolean} approval     Whether a mutation in the chain asks for approval.
 * @property {boolean} preview      Whether the chain waits for a preview acknowledgement.
 */

/** @type {PromptRecipe[]} */
export const PROMPT_RECIPES = [
  { id: 'theme', label: 'Rose theme', prompt: 'make it rose', tools: ['workspace.getStatus', 'preview.setTheme'], approval: true, preview: true },
  { id: 'hero', label: 'Hero title', prompt: 'set the hero title to "Build faster"', tools: ['workspace.getStatus', 'preview.updateHero'], approval: true, preview: true },
  { id: 'feature', label: 'Add a feature card', prompt: 'add a feature card "Offline" "Works without a network."', tools: ['workspace.getStatus', 'preview.addFeature'], approval: true, preview: true },
  { id: 'replace', label: 'Replace text', prompt: 'replace "Ship" with "Build"', tools: ['workspace.getStatus', 'workspace.listFiles', 'workspace.readFile', 'workspace.applyPatch'], approval: true, preview: true },
  { id: 'status', label: 'Workspace status', prompt: 'what is the workspace status?', tools: ['workspace.getStatus'], approval: false, preview: false },
  { id: 'refresh', label: 'Refresh preview', prompt: 'refresh the preview', tools: ['workspace.getStatus', 'preview.refresh'], approval: true, preview: true },
  { id: 'undo', label: 'Undo', prompt: 'undo the last change', tools: ['workspace.getStatus', 'workspace.undo'], approval: true, preview: true },
  { id: 'create', label: 'Create a file', prompt: 'create file notes.md "# Notes"', tools: ['workspace.getStatus', 'workspace.listFiles', 'workspace.createFile'], approval: true, preview: true },
  { id: 'save', label: 'Save', prompt: 'save the workspace', tools: ['workspace.getStatus', 'workspace.saveAll (linked folder) or workspace.saveCheckpoint'], approval: true, preview: false },
  { id: 'reload', label: 'Reload folder', prompt: 'reload the folder from disk', tools: ['workspace.getStatus', 'workspace.reloadFolder'], approval: true, preview: true },
  { id: 'disconnect', label: 'Disconnect folder', prompt: 'disconnect the folder', tools: ['workspace.getStatus', 'workspace.disconnectFolder'], approval: true, preview: false },
];

/** A one-line description of what a recipe will do. */
export function describeRecipe(recipe) {
  const chain = recipe.tools.join(' → ');
  const gates = [recipe.approval && 'asks for approval', recipe.preview && 'waits for the preview'].filter(Boolean).join(', ');
  return gates ? `${chain} (${gates})` : chain;
}

/** Fills the composer's `prompt` from the `select` of recipes, describing the pick in `hint`. */
export function wireRecipes({ select, hint, prompt }) {
  for (const recipe of PROMPT_RECIPES) {
    select.append(el('option', { value: recipe.id, textContent: recipe.label, title: describeRecipe(recipe) }));
  }
  select.addEventListener('change', () => {
    const recipe = PROMPT_RECIPES.find((candidate) => candidate.id === select.value);
    select.value = '';
    if (!recipe) return;
    prompt.value = recipe.prompt;
    hint.textContent = describeRecipe(recipe);
    hint.title = describeRecipe(recipe);
    prompt.focus();
  });
}

/**
 * Applies a `?prompt=` deep link: fills `prompt` only (never runs it), removes the parameter
 * from the address and history, and has `say` tell the person.
 */
export function applyDeepLink(prompt, say) {
  const url = new URL(window.location.href);
  const linked = url.searchParams.get('prompt');
  if (linked === null) return;
  prompt.value = linked.slice(0, MAX_PROMPT_CHARS);
  url.searchParams.delete('prompt');
  window.history.replaceState(window.history.state, '', url);
  say('A linked prompt was placed in the composer. Review it and press Run when ready.', 'info');
}
