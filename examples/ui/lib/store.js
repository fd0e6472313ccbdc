// Page state shared by the views, and the few cross-view actions app.js provides.

/** Per-file source budget (characters), as the workspace enforces it. */
export const MAX_SOURCE_CHARS = 80000;
/**
 * Idle time before a typed draft is flushed through workspace.writeFile: short, so a keystroke
 * reaches the preview at once (the host coalesces a typing burst into one undo step). Mutable so
 * a test or the typing bench can widen it (the bench's baseline is the former 600 ms).
 */
export const typing = { draftIdleMs: 50 };

export const state = {
  status: null,
  files: [],
  activePath: null,
  openTabs: [],
  source: '',
  sourceRevision: null,
  draft: null,
  activeRun: null,
  previewRevision: null,
  diagnostics: [],
};

/** Cross-view actions; app.js fills these in at start. */
export const actions = {
  refreshState: async () => {},
  flushDraft: async () => {},
  openFile: async () => {},
  /** Workspace undo (`'undo'`) or redo (`'redo'`): what the Undo and Redo buttons do. */
  history: async () => {},
  status: () => {},
  say: () => {},
  settingsChanged: () => {},
};

/** Whether an agent run is in flight (the editor and tool controls are disabled then). */
export function busy() {
  return state.activeRun !== null;
}

/** The file summary at `path`. */
export function fileAt(path) {
  return state.files.find((file) => file.path === path);
}
