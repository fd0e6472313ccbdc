// The trace's sessions as its selector names them: what started each one (a prompt excerpt,
// the palette, an MCP client's name) and when. The names come from GET /api/sessions, apart
// from the trace (its rows never hold a prompt). One directory for the trace panels of every
// page.

import { api } from './api.js';

/** `local · “read app.js” · 14:02:31`: the label and the local time the session started. */
export function sessionText(session) {
  const time = Number.isFinite(session.startedAt)
    ? new Date(session.startedAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false })
    : null;
  return time ? `${session.label} · ${time}` : session.label;
}

/**
 * The session names of the host; `onChange()` runs when new names arrived. A row of a session
 * the page has no name for asks the host once (a session the host never named keeps its id).
 */
export function createSessionDirectory(onChange) {
  let names = new Map();
  const asked = new Set();
  let loading = null;

  function refresh() {
    loading ??= api('/api/sessions')
      .then((data) => {
        names = new Map(data.sessions.map((session) => [session.id, session.label]));
        onChange();
      })
      .catch(() => {})
      .finally(() => { loading = null; });
    return loading;
  }

  return {
    refresh,
    /** The sessions of `rows`, oldest first, each `{ id, label, startedAt }`. */
    of(rows) {
      const sessions = new Map();
      for (const row of rows) {
        if (!row.sessionId) continue;
        const known = sessions.get(row.sessionId);
        if (known) {
          known.startedAt = Math.min(known.startedAt, row.startedAt);
          continue;
        }
        if (!names.has(row.sessionId) && !asked.has(row.sessionId)) {
          asked.add(row.sessionId);
          refresh();
        }
        sessions.set(row.sessionId, { id: row.sessionId, label: names.get(row.sessionId) ?? row.sessionId, startedAt: row.startedAt });
      }
      return [...sessions.values()].sort((a, b) => a.startedAt - b.startedAt);
    },
  };
}
