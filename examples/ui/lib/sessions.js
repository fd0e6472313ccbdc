// The trace's sessions as its selector names them: what started each one (a prompt excerpt,
// the palette, an MCP client's name, from the host's label) and when. One helper for the trace
// panels of every page.

/**
 * The sessions to offer, oldest first: the host's list (`{id, label, startedAt}`) merged with
 * the sessions of rows that arrived since (each row carries its `sessionLabel`).
 */
export function collectSessions(sessions, rows) {
  const byId = new Map();
  for (const session of sessions ?? []) byId.set(session.id, { ...session });
  for (const row of rows) {
    if (!row.sessionId) continue;
    const known = byId.get(row.sessionId);
    if (!known) byId.set(row.sessionId, { id: row.sessionId, label: row.sessionLabel ?? row.sessionId, startedAt: row.startedAt });
    else if (row.startedAt < known.startedAt) known.startedAt = row.startedAt;
  }
  return [...byId.values()].sort((a, b) => a.startedAt - b.startedAt);
}

/** `local · “make it rose” · 14:02:31`: the label and the local time the session started. */
export function sessionText(session) {
  const time = Number.isFinite(session.startedAt)
    ? new Date(session.startedAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false })
    : null;
  return time ? `${session.label} · ${time}` : session.label;
}
