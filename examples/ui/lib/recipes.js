// The prompt recipe catalog: each recipe is a prompt for the local agent (or a model) plus the
// tools it is expected to call and whether those need approval or a preview acknowledgement.
// The chat renders this data; it does not keep a second list of strings.

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
