// Folder upload for a browser that cannot name a host path: the files of a directory-upload input
// (<input type=file webkitdirectory multiple>) replace the workspace through POST /api/folder/upload.
// The host applies the folder-import limits (file count, per-file and total size, invalid paths,
// unsupported files); this module only lists the files, attaches their bytes within the budget the
// host reports, and shows what was skipped. The result has no linked folder, so Save keeps a
// browser-only checkpoint.

import { api } from './api.js';
import { $ } from './dom.js';
import { confirmAction } from './modal.js';
import { skippedReport } from './skipped.js';
import { actions, busy, state } from './store.js';

/** Bytes converted to base64 per step, so large files do not build one huge argument list. */
const BASE64_CHUNK = 0x8000;

/** The path inside the uploaded folder: webkitRelativePath without its first segment. */
export function relativePath(file) {
  const full = file.webkitRelativePath || file.name;
  const slash = full.indexOf('/');
  return slash === -1 ? full : full.slice(slash + 1);
}

/** The uploaded folder's name: the first segment of webkitRelativePath. */
export function rootName(files) {
  const full = files[0]?.webkitRelativePath ?? '';
  const slash = full.indexOf('/');
  return slash === -1 ? 'upload' : full.slice(0, slash);
}

async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let start = 0; start < bytes.length; start += BASE64_CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(start, start + BASE64_CHUNK));
  }
  return btoa(binary);
}

/**
 * The upload list: every file (up to the host's entry limit) with its size; bytes are attached
 * while the file fits the largest per-file limit and the attached total fits the import budget.
 * The host judges every entry, listed-only ones on their size.
 */
export async function uploadEntries(files, limits) {
  const entries = [];
  let attached = 0;
  for (const file of files.slice(0, limits.maxEntries)) {
    const entry = { path: relativePath(file), size: file.size };
    if (file.size <= limits.maxFileBytes && attached + file.size <= limits.maxTotalBytes) {
      entry.data = await base64Of(file);
      attached += file.size;
    }
    entries.push(entry);
  }
  return entries;
}

function reportSkipped(root, outcome) {
  const report = skippedReport(`Upload of ${root}`, outcome);
  if (report) actions.say(report, 'info');
}

/** Replaces the workspace with `files` after the same confirmation as opening a folder. */
async function uploadFolder(files, trigger) {
  if (!files.length) {
    actions.status('The chosen folder has no files.', true);
    return;
  }
  if (busy()) {
    actions.status('Wait for the agent run to finish before uploading a folder.', true);
    return;
  }
  const root = rootName(files);
  await actions.flushDraft();
  const linked = state.status?.folder?.connected;
  if (state.status?.isDirty || linked) {
    const discards = state.status.isDirty ? ` and discards ${state.status.dirtyPaths.length} unsaved file(s)` : '';
    const unlinks = linked ? ' The linked folder is disconnected; Save then keeps a browser checkpoint.' : '';
    const ok = await confirmAction({
      title: 'Replace the workspace?',
      message: `Uploading ${root} replaces the workspace${discards}.${unlinks}`,
      confirmLabel: 'Upload folder',
      trigger,
    });
    if (!ok) return;
  }
  try {
    actions.status(`Uploading ${root} (${files.length} file(s))…`);
    const limits = await api('/api/folder/upload');
    const entries = await uploadEntries(files, limits);
    // The person confirmed above when edits were unsaved; only then may the host discard them.
    const discardChanges = Boolean(state.status?.isDirty);
    const body = { rootName: root, expectedRevision: state.status?.revision, discardChanges, files: entries };
    const outcome = await api('/api/folder/upload', { method: 'POST', body });
    actions.status(`Uploaded ${root}: ${outcome.fileCount} file(s); Save keeps a browser checkpoint.`);
    reportSkipped(root, outcome);
    await actions.refreshState({ reloadEditor: true });
  } catch (error) {
    actions.status(`${error.code}: ${error.message}`, true);
    if (error.details?.skippedCount) actions.say(`${error.code}: ${error.message}`, 'failed');
  }
}

/** Wires the "Upload folder" button to the hidden directory-upload input. */
export function wireUpload() {
  const input = $('folder-upload');
  const button = $('upload-folder-button');
  button.addEventListener('click', () => input.click());
  input.addEventListener('change', async () => {
    const files = [...input.files];
    try {
      await uploadFolder(files, button);
    } finally {
      input.value = '';
    }
  });
}
