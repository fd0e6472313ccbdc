// What a folder import left out, as the host reports it (`skippedCount`, `skippedByReason` and
// at most 64 `skipped` lines): one summary for the status line and one report for the chat.

const REASON_LABELS = {
  unsupported: 'unsupported',
  binary: 'binary',
  tooLarge: 'too large',
  fileLimit: 'over the file limit',
  workspaceLimit: 'over the size limit',
  scanLimit: 'over the scan limit',
  symlink: 'symlink',
  duplicate: 'duplicate path',
  folderClash: 'file/folder name clash',
  invalidPath: 'invalid path',
  unreadable: 'unreadable',
};

/** `3 unsupported, 1 binary` (empty when nothing was skipped). */
export function skippedSummary(outcome) {
  return Object.entries(outcome?.skippedByReason ?? {})
    .map(([reason, count]) => `${count} ${REASON_LABELS[reason] ?? reason}`)
    .join(', ');
}

/** The chat report of an import named `root`, or null when nothing was skipped. */
export function skippedReport(root, outcome) {
  const lines = outcome?.skipped ?? [];
  const count = outcome?.skippedCount ?? lines.length;
  if (!count) return null;
  const summary = skippedSummary(outcome);
  const more = count > lines.length ? `\n… and ${count - lines.length} more` : '';
  return `${root} skipped ${count} entr${count === 1 ? 'y' : 'ies'}${summary ? ` (${summary})` : ''}:\n${lines.join('\n')}${more}`;
}
