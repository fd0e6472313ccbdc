// Design Mode: a toggle in the preview chrome. While it is on, the preview's bridge outlines the
// element under the pointer and a click selects it (no page handler runs). preview.js accepts
// the selection message only from the current iframe window and revision; this module forwards
// it to the host (which validates, bounds and publishes it to every tab) and shows the host's
// answer as a removable chip in the composer. The next agent run carries it as
// metadata.selection. Esc (in the page or inside the preview) leaves Design Mode.

import { api } from './api.js';
import { $, button, el } from './dom.js';
import { actions, state } from './store.js';

/** Parent → iframe: turn Design Mode on or off for one revision. */
const SET = 'context-action.design.set';
/** Iframe → parent: an element was picked. */
export const PICK = 'context-action.preview.selection';
/** Iframe → parent: Esc inside the preview left Design Mode. */
export const EXIT = 'context-action.preview.designExit';
const CHIP_TEXT_CHARS = 60;

state.selection = null;
let active = false;

/** Tells the preview document the current mode (a new document always starts dormant). */
function tellPreview() {
  const frame = $('preview');
  if (!frame.contentWindow || state.previewRevision === null) return;
  // The selector lets a reloaded document mark the current selection again.
  frame.contentWindow.postMessage({ type: SET, active, revision: state.previewRevision, selector: state.selection?.selector ?? '' }, '*');
}

/** Turns Design Mode on or off. */
export function setDesignMode(on) {
  active = on;
  const toggle = $('design-toggle');
  toggle.setAttribute('aria-pressed', String(on));
  toggle.title = on ? 'Leave Design Mode (Esc)' : 'Design Mode: point at an element in the preview and click to select it';
  document.querySelector('.preview-pane').classList.toggle('designing', on);
  tellPreview();
}

/** Leaves Design Mode; true when it was on. */
export function exitDesignMode() {
  if (!active) return false;
  setDesignMode(false);
  actions.status('Design Mode off.');
  return true;
}

/** The preview acknowledged its revision: a reloaded document is told the mode again. */
export function onPreviewReady() {
  if (active) tellPreview();
}

/**
 * Handles a Design Mode message the preview posted (preview.js checked its window and
 * revision). Returns whether it was one.
 */
export function onDesignMessage(message) {
  if (message.type === EXIT) {
    setDesignMode(false);
    actions.status('Design Mode off.');
    return true;
  }
  if (message.type !== PICK) return false;
  forwardSelection(message);
  return true;
}

async function forwardSelection(message) {
  try {
    const answer = await api('/api/preview/selection', { method: 'POST', body: message });
    showSelection(answer.selection);
    actions.status(`Selected ${answer.selection.selector}; the next agent run gets it as context.`);
  } catch (error) {
    actions.status(`${error.code}: ${error.message}`, true);
  }
}

function shorten(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Shows `selection` as the composer chip (`null` hides it); runs carry what is shown. */
export function showSelection(selection) {
  state.selection = selection ?? null;
  const chip = $('selection-chip');
  chip.hidden = !state.selection;
  if (!state.selection) {
    chip.replaceChildren();
    return;
  }
  const { selector, tag, source } = state.selection;
  const excerpt = source?.text ? ` · “${shorten(source.text, CHIP_TEXT_CHARS)}”` : '';
  chip.replaceChildren(
    el('span', { className: 'chip-icon', textContent: '◎', attrs: { 'aria-hidden': 'true' } }),
    el('code', { className: 'chip-selector', textContent: shorten(selector, CHIP_TEXT_CHARS) }),
    el('span', { className: 'chip-detail', textContent: `${tag}${excerpt}` }),
    button('✕', removeSelection, { className: 'chip-remove', title: 'Remove the selection', attrs: { 'aria-label': 'Remove the selection' } }),
  );
  chip.title = `Selected element: ${selector} (revision ${state.selection.revision})`;
}

/** Removes the selection here and, through the host, in every other tab. */
async function removeSelection() {
  showSelection(null);
  try {
    await api('/api/preview/selection', { method: 'DELETE' });
  } catch (error) {
    actions.status(`${error.code}: ${error.message}`, true);
  }
}

/** Applies a `surface` event of the workspace surface (a selection published by any tab). */
export function onSurfaceEvent(message) {
  if (message.surface !== 'workspace' || message.data?.kind !== 'selection') return;
  showSelection(message.data.selection);
}

/** Wires the toggle. */
export function wireDesign() {
  $('design-toggle').addEventListener('click', () => setDesignMode(!active));
  showSelection(null);
}
