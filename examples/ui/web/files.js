// The web page's file tabs and its editor (the shared code editor of lib/code-editor.js over
// the page's textarea). Each file keeps its own draft together with the
// revision and the text it was started from, and the host keeps a copy (web/drafts.js), so a
// reload finds it again; Save sends that revision as expectedRevision to web.writeFile, so an
// edit based on an older revision is never written over newer work. When the workspace moves on
// (another tab, an agent, an MCP client), each draft is merged onto the newer file (lib/merge.js):
// changes that do not overlap both stay; overlapping ones keep the draft and say so.

import { callTool, isCommitted, unconfirmedText } from '../lib/surface.js';
import { createCodeEditor, languageOf } from '../lib/code-editor.js';
import { el } from '../lib/dom.js';
import { keepDraft, keptDraft } from '../lib/launch.js';
import { merge3 } from '../lib/merge.js';
import { createDraftStore } from './drafts.js';

/** This page's drafts in the tab's session storage (lib/launch.js), under this surface name. */
const SURFACE = 'web';

/** Longest file the host accepts (`web.writeFile` enforces the same bound). */
export const MAX_WEB_FILE_CHARS = 80000;
const STALE_CODE = 'WORKSPACE_REVISION_CONFLICT';
/** Saves refused as stale that are merged and sent again before the page gives up. */
const MAX_SAVE_ROUNDS = 5;

/**
 * Creates the editor over its elements; `onSaved(result)` runs after a successful write and
 * `readWorkspace()` reads the host's workspace view again (after a save refused as stale).
 */
export function createFileEditor({ tabs, panel, textarea, find, save, revert, status, onSaved = () => {}, readWorkspace }) {
  let workspace = null;
  let activePath = null;
  let shownPath = null;
  const code = createCodeEditor({ textarea, idPrefix: 'web-', language: () => languageOf(activePath), maxChars: MAX_WEB_FILE_CHARS });
  find.addEventListener('click', () => code.openFind());
  // path -> { text, base, baseSource }: unsaved text, the revision it was based on and the file's
  // text then (absent for a draft the host kept across a reload: it cannot be merged).
  let drafts = new Map();
  // path -> the newer revision a draft could not be merged onto (its changes overlap).
  const overlapping = new Map();
  const hostDrafts = createDraftStore({ onError: (error) => setStatus(`Draft not kept by the host: ${error.code}: ${error.message}`, true) });

  const stored = (path) => workspace?.files.find((file) => file.path === path)?.source ?? '';

  // Every draft is also kept in this tab's session storage, written on each keystroke: the host
  // copy lags a moment and cannot be written while the studio is down, and a restart reloads
  // the page (lib/launch.js), so text typed meanwhile would otherwise be gone.
  function keepInTab() {
    keepDraft(SURFACE, drafts.size ? { drafts: Object.fromEntries(drafts) } : null);
  }

  function setStatus(text, isError = false) {
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  function renderTabs() {
    const files = workspace?.files ?? [];
    tabs.replaceChildren(...files.map((file) => {
      const selected = file.path === activePath;
      return el('button', {
        type: 'button',
        id: `web-tab-file-${file.path.replace(/[^a-z0-9]/gi, '-')}`,
        className: `file-tab${drafts.has(file.path) ? ' dirty' : ''}`,
        textContent: drafts.has(file.path) ? `${file.path} •` : file.path,
        tabIndex: selected ? 0 : -1,
        dataset: { path: file.path },
        attrs: { role: 'tab', 'aria-selected': String(selected), 'aria-controls': panel.id },
        on: { click: () => select(file.path), keydown: onTabKey },
      });
    }));
    const current = tabs.querySelector('[aria-selected="true"]');
    if (current) panel.setAttribute('aria-labelledby', current.id);
  }

  function onTabKey(event) {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const paths = workspace.files.map((file) => file.path);
    const step = event.key === 'ArrowRight' ? 1 : paths.length - 1;
    select(paths[(paths.indexOf(activePath) + step) % paths.length]);
    tabs.querySelector('[aria-selected="true"]')?.focus();
  }

  function renderEditor() {
    const draft = drafts.get(activePath);
    const text = draft ? draft.text : stored(activePath);
    code.setText(text);
    // A file shown anew starts at its top, not where assigning its text left the caret.
    if (shownPath !== activePath) {
      shownPath = activePath;
      code.selectRange(0, 0);
    }
    textarea.disabled = !activePath;
    save.disabled = !draft;
    revert.disabled = !draft;
    if (draft && workspace && draft.base !== workspace.revision) {
      const where = overlapping.has(activePath) ? `${activePath} changed elsewhere where you were typing` : `the workspace is at ${workspace.revision}`;
      setStatus(`${STALE_CODE}: your draft is based on revision ${draft.base} and ${where}. Nothing was overwritten: discard the draft to load the stored file.`, true);
    }
  }

  /**
   * Moves every draft onto `next`: a draft whose file did not change takes the new revision, one
   * whose file changed is merged with it. Returns the paths merged with a change from elsewhere.
   */
  function rebaseDrafts(next) {
    const merged = [];
    for (const [path, draft] of drafts) {
      if (draft.base === next.revision || draft.baseSource === undefined) continue;
      const current = next.files.find((file) => file.path === path)?.source;
      if (current === undefined) continue;
      const result = current === draft.baseSource ? { text: draft.text } : merge3(draft.baseSource, draft.text, current);
      if (result.conflict) {
        overlapping.set(path, next.revision);
        continue;
      }
      overlapping.delete(path);
      // A draft the file now holds whole (this tab's own save arriving) is simply done.
      if (result.text === current) drafts.delete(path);
      else drafts.set(path, { text: result.text, base: next.revision, baseSource: current });
      if (current !== draft.baseSource && result.text !== current) merged.push(path);
      hostDrafts.stage(path, drafts.get(path) ?? null);
    }
    if (merged.length) keepInTab();
    return merged;
  }

  function select(path) {
    activePath = path;
    setStatus('');
    renderTabs();
    renderEditor();
  }

  /** Writes the draft of `path`; a save refused as stale is merged onto the newer file and sent again. */
  async function saveActive() {
    const path = activePath;
    if (!drafts.has(path)) return;
    save.disabled = true;
    setStatus(`Saving ${path}…`);
    for (let round = 0; round < MAX_SAVE_ROUNDS; round += 1) {
      const draft = drafts.get(path);
      if (!draft) return;
      const result = await callTool('web.writeFile', { path, source: draft.text, expectedRevision: draft.base }).catch((error) => ({ isError: true, error }));
      if (result.error?.code !== STALE_CODE || draft.baseSource === undefined) return settleSave(path, draft, result);
      const next = await readWorkspace().catch(() => null);
      if (!next) return settleSave(path, draft, result);
      render(next);
      if (drafts.get(path)?.base !== next.revision) return settleSave(path, draft, result);
    }
    setStatus(`${STALE_CODE}: ${path} kept changing while this tab saved it. Your draft is kept.`, true);
    save.disabled = false;
  }

  /** Records a save's outcome: a refused save keeps the draft and says why. */
  function settleSave(path, draft, result) {
    // A committed result is saved: only the preview did not confirm it, so no draft remains.
    const applied = isCommitted(result);
    if (result.isError && !applied) {
      if (result.error.code === STALE_CODE) renderEditor();
      else setStatus(`${result.error.code}: ${result.error.message}`, true);
      save.disabled = false;
      return;
    }
    const revision = applied ? result.error.details.revision : result.structuredContent.revision;
    const typed = drafts.get(path);
    overlapping.delete(path);
    if (typed && typed.text !== draft.text) {
      // Typed while the save was in flight: that rest stays a draft on top of what was saved.
      drafts.set(path, { text: typed.text, base: revision, baseSource: draft.text });
      hostDrafts.stage(path, drafts.get(path));
    } else {
      drafts.delete(path);
      hostDrafts.drop(path);
    }
    keepInTab();
    // Other drafts based on the revision this save replaced move with it: the save was ours.
    for (const other of drafts.values()) if (other.base === draft.base) other.base = revision;
    setStatus(applied ? `Saved ${path} · ${unconfirmedText(result)}` : `Saved ${path} · revision ${revision} (${result.structuredContent.preview.status})`);
    onSaved(result);
  }

  textarea.addEventListener('input', () => {
    if (!activePath) return;
    // The textarea's maxlength mirrors the host's 80,000-character bound; the host enforces it.
    const text = textarea.value;
    const draft = drafts.get(activePath);
    if (text === stored(activePath) && (!draft || draft.base === workspace.revision)) drafts.delete(activePath);
    else drafts.set(activePath, draft ? { ...draft, text } : { text, base: workspace.revision, baseSource: stored(activePath) });
    hostDrafts.stage(activePath, drafts.get(activePath) ?? null);
    keepInTab();
    renderTabs();
    renderEditor();
  });
  textarea.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
      event.preventDefault();
      saveActive();
    }
  });
  save.addEventListener('click', saveActive);
  revert.addEventListener('click', () => {
    drafts.delete(activePath);
    overlapping.delete(activePath);
    hostDrafts.drop(activePath);
    keepInTab();
    setStatus(`Showing the stored ${activePath}.`);
    renderTabs();
    renderEditor();
  });

  /** Shows `next` (a web.getWorkspace view); drafts are merged onto it and stay until saved or discarded. */
  function render(next) {
    const merged = rebaseDrafts(next);
    workspace = next;
    if (!activePath || !next.files.some((file) => file.path === activePath)) activePath = next.activePath ?? next.files[0]?.path ?? null;
    renderTabs();
    renderEditor();
    if (merged.length) setStatus(`Merged a change made elsewhere (revision ${next.revision}) with your draft of ${merged.join(', ')}.`);
  }

  return {
    render,
    /**
     * Takes over the drafts kept from before a reload; call before the first render. The host's
     * copy, overlaid by this tab's own (newer: written on every keystroke, even while the studio
     * was down), which is then sent to the host too.
     */
    async restore() {
      drafts = await hostDrafts.restore();
      for (const [path, draft] of Object.entries(keptDraft(SURFACE)?.drafts ?? {})) {
        if (drafts.get(path)?.text === draft.text) continue;
        drafts.set(path, draft);
        hostDrafts.stage(path, draft);
      }
      keepInTab();
      if (drafts.size) setStatus(`Restored ${drafts.size} unsaved draft${drafts.size === 1 ? '' : 's'}: ${[...drafts.keys()].join(', ')}.`);
    },
    select,
    save: saveActive,
    activePath: () => activePath,
    /** Whether typed text has not reached the host yet (the pause before it is sent). */
    hasUnstoredDrafts: () => hostDrafts.pending(),
  };
}
