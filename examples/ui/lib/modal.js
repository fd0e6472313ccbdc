// Keyboard-modal dialogs: Esc closes, Tab and Shift+Tab wrap inside the dialog, the page behind
// does not scroll, focus returns to the trigger, and a click on the backdrop dismisses.
// Destructive actions confirm here, never with window.confirm.

import { api } from './api.js';
import { $ } from './dom.js';

const FOCUSABLE = 'button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), a[href], [tabindex]:not([tabindex="-1"])';

/** Whether any modal dialog is open (global shortcuts are off then). */
export function modalOpen() {
  return document.querySelector('dialog[open]') !== null;
}

function focusables(dialog) {
  return [...dialog.querySelectorAll(FOCUSABLE)].filter((node) => node.offsetParent !== null || node === document.activeElement);
}

/** Wires the keyboard rules of one `<dialog>` once. */
function wire(dialog) {
  if (dialog.dataset.modalWired) return;
  dialog.dataset.modalWired = 'true';
  dialog.addEventListener('keydown', (event) => {
    if (event.key !== 'Tab') return;
    const items = focusables(dialog);
    if (items.length === 0) return;
    const first = items[0];
    const last = items.at(-1);
    if (event.shiftKey && (document.activeElement === first || !dialog.contains(document.activeElement))) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (document.activeElement === last || !dialog.contains(document.activeElement))) {
      event.preventDefault();
      first.focus();
    }
  });
  // A click whose target is the <dialog> itself landed on the backdrop (the content is a form).
  dialog.addEventListener('mousedown', (event) => {
    if (event.target === dialog) dialog.close('dismiss');
  });
}

/** Opens `dialog` modally from `trigger`, focusing `focusTarget` (or the first control). */
export function openModal(dialog, trigger, focusTarget) {
  wire(dialog);
  const returnTo = trigger ?? document.activeElement;
  dialog.returnValue = '';
  dialog.showModal();
  document.body.classList.add('modal-open');
  (focusTarget ?? focusables(dialog)[0])?.focus();
  dialog.addEventListener('close', () => {
    if (!modalOpen()) document.body.classList.remove('modal-open');
    if (returnTo && document.contains(returnTo)) returnTo.focus();
  }, { once: true });
}

/**
 * Asks the person to confirm a destructive action in the page's own dialog.
 * Resolves to true only when the confirm button was pressed.
 */
export function confirmAction({ title, message, confirmLabel = 'Confirm', trigger }) {
  const dialog = $('confirm-dialog');
  $('confirm-title').textContent = title;
  $('confirm-message').textContent = message;
  $('confirm-accept').textContent = confirmLabel;
  return new Promise((resolve) => {
    $('confirm-accept').onclick = () => dialog.close('accept');
    $('confirm-cancel').onclick = () => dialog.close('cancel');
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'accept'), { once: true });
    openModal(dialog, trigger, $('confirm-cancel'));
  });
}

/** Tools that lose work; besides these, any tool annotated destructive asks first. */
const DESTRUCTIVE_TOOLS = new Set([
  'workspace.deleteFile', 'workspace.revertFile', 'workspace.reset', 'workspace.disconnectFolder', 'editor.resetDocument', 'editor.revertFile',
]);

/** Whether running `tool` directly needs the person's confirmation. */
export function isDestructiveTool(tool) {
  return DESTRUCTIVE_TOOLS.has(tool.name) || tool.annotations?.destructiveHint === true;
}

let effects = null;

/**
 * What `name` loses and whether undo brings it back, as the host words it for approval cards
 * (null when it has no words for the tool, or cannot be asked).
 */
async function effectOf(name) {
  effects ??= api('/api/tools/effects').catch(() => {
    effects = null; // asked again next time
    return {};
  });
  return (await effects)[name] ?? null;
}

/**
 * Confirms a direct run of a destructive tool. Resolves to the arguments to send, or null when
 * the person cancelled. Tools that refuse over unsaved edits get `discardChanges: true`, since
 * the dialog said those edits go.
 */
export async function confirmToolRun(tool, args, trigger) {
  if (!isDestructiveTool(tool)) return args;
  const discards = Boolean(tool.inputSchema?.properties?.discardChanges);
  const effect = await effectOf(tool.name);
  const confirmed = await confirmAction({
    title: `Run ${tool.name}?`,
    message: effect ?? `${tool.title ?? tool.name} changes the workspace${discards ? ' and discards unsaved edits' : ''}.`,
    confirmLabel: 'Run',
    trigger,
  });
  if (!confirmed) return null;
  return discards ? { ...args, discardChanges: true } : args;
}
