//! The execution trace: a bounded, metadata-only record of agent requests, tool listings and
//! tool calls. Rows never hold argument values, file sources, results or credentials, so the
//! trace can be shown, copied and downloaded as it is.
//!
//! Beside the rows the store keeps what started each session (a prompt excerpt, the palette,
//! an MCP client's name) for the page's session selector. A prompt can hold the very values the
//! rows leave out, so these names are never part of a row or of `GET /api/trace`; the pages
//! read them from `GET /api/sessions`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use tool_context::ToolCallObserver;
use tool_protocol::codes::is_audit_safe_error_code;
use tool_protocol::{ToolCallEvent, ToolCallEventType};

use crate::kit::events::{EventHub, StudioEvent};

/// Rows kept; the oldest are dropped first.
pub const MAX_TRACE_ROWS: usize = 500;
/// Argument names kept per row.
pub const MAX_TRACE_ARGUMENT_KEYS: usize = 32;
/// Characters of a prompt kept in the label of the session it started.
pub const MAX_SESSION_LABEL_PROMPT_CHARS: usize = 48;

/// What a row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TraceKind {
    /// One agent run (local or OpenRouter) around its tool calls.
    #[serde(rename = "agent.request")]
    AgentRequest,
    /// A tools/list discovery.
    #[serde(rename = "tools/list")]
    ToolsList,
    /// A tools/call.
    #[serde(rename = "tools/call")]
    ToolsCall,
}

/// One row of the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceRow {
    /// Registry trace id (tool calls) or run id (agent rows); unique per row.
    pub trace_id: String,
    /// Row kind.
    pub kind: TraceKind,
    /// Tool name or a short label.
    pub name: String,
    /// Agent run / MCP session this row belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Call source (`model`, `mcp`, `local`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Call mode (`agent`, `direct`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// `running`, `completed`, `failed` or `cancelled`; an `agent.request` row may also end
    /// `not-understood` (the local agent did not act).
    pub status: String,
    /// Provider correlation id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Start, milliseconds since the Unix epoch.
    pub started_at: u64,
    /// Duration once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Audit-safe error code of a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Whether a failure is retryable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// Argument names (never values).
    pub argument_keys: Vec<String>,
    /// Execution provenance of tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Value>,
    /// Set when a person approved the call with changes (counts only, never text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<TraceApproval>,
}

/// A person approved part of a call: how many hunks were applied and rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceApproval {
    /// Always `approved with changes`.
    pub outcome: &'static str,
    /// Hunks applied.
    pub applied_hunks: usize,
    /// Hunks rejected.
    pub rejected_hunks: usize,
}

/// One session of the trace as the session selector lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceSession {
    /// Session id (the rows' `sessionId`).
    pub id: String,
    /// What started it: a prompt excerpt, the palette, an MCP client's name; the id when unnamed.
    pub label: String,
    /// Start of its first row still kept, milliseconds since the Unix epoch.
    pub started_at: u64,
}

/// The label of a session an agent run started: the agent and an excerpt of its prompt.
pub fn prompt_session_label(agent: &str, prompt: &str) -> String {
    let line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut excerpt: String = line.chars().take(MAX_SESSION_LABEL_PROMPT_CHARS).collect();
    if line.chars().count() > MAX_SESSION_LABEL_PROMPT_CHARS {
        excerpt.push('…');
    }
    format!("{agent} · “{excerpt}”")
}

/// The label of an MCP client's session: the name it gave in `initialize`.
pub fn mcp_session_label(client_name: Option<&str>) -> String {
    let name: String = client_name
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .unwrap_or("unnamed client")
        .chars()
        .take(MAX_SESSION_LABEL_PROMPT_CHARS)
        .collect();
    format!("MCP · {name}")
}

/// The bounded trace, publishing every change on the event hub.
#[derive(Debug, Clone)]
pub struct TraceStore {
    rows: Arc<Mutex<VecDeque<TraceRow>>>,
    /// Session id → what started it. Pruned to the sessions of kept rows.
    labels: Arc<Mutex<HashMap<String, String>>>,
    hub: EventHub,
}

impl TraceStore {
    /// An empty trace publishing to `hub`.
    pub fn new(hub: EventHub) -> Self {
        Self {
            rows: Arc::default(),
            labels: Arc::default(),
            hub,
        }
    }

    /// Names session `id` by what started it; the first name given stays.
    pub fn name_session(&self, id: &str, label: String) {
        let mut labels = self.labels.lock().expect("trace labels lock");
        labels.entry(id.to_owned()).or_insert(label);
        // Bounded like the rows: a session without kept rows no longer needs its name (the
        // sessions naming themselves right now are kept, their first row is on its way).
        if labels.len() > MAX_TRACE_ROWS {
            let rows = self.rows.lock().expect("trace lock");
            labels.retain(|session, _| {
                session == id
                    || rows
                        .iter()
                        .any(|row| row.session_id.as_ref() == Some(session))
            });
        }
    }

    /// All rows, oldest first, optionally only one session's.
    pub fn rows(&self, session_id: Option<&str>) -> Vec<TraceRow> {
        let rows = self.rows.lock().expect("trace lock");
        rows.iter()
            .filter(|row| session_id.is_none_or(|id| row.session_id.as_deref() == Some(id)))
            .cloned()
            .collect()
    }

    /// Distinct session ids, oldest first.
    pub fn sessions(&self) -> Vec<String> {
        let mut sessions: Vec<String> = Vec::new();
        for row in self.rows.lock().expect("trace lock").iter() {
            if let Some(id) = &row.session_id
                && !sessions.contains(id)
            {
                sessions.push(id.clone());
            }
        }
        sessions
    }

    /// Distinct sessions of the kept rows with what started them, oldest first.
    pub fn named_sessions(&self) -> Vec<TraceSession> {
        let mut sessions: Vec<TraceSession> = Vec::new();
        let labels = self.labels.lock().expect("trace labels lock");
        for row in self.rows.lock().expect("trace lock").iter() {
            let Some(id) = &row.session_id else {
                continue;
            };
            match sessions.iter_mut().find(|session| &session.id == id) {
                Some(session) => session.started_at = session.started_at.min(row.started_at),
                None => sessions.push(TraceSession {
                    id: id.clone(),
                    label: labels.get(id).cloned().unwrap_or_else(|| id.clone()),
                    started_at: row.started_at,
                }),
            }
        }
        sessions
    }

    /// Removes every row.
    pub fn clear(&self) {
        self.rows.lock().expect("trace lock").clear();
    }

    /// Records on the running call `asked` names (by its call id when it has one, else the
    /// newest running call of that tool in its session) that a person approved it with changes;
    /// the row keeps it through the call's later events.
    pub fn approved_with_changes(
        &self,
        asked: &tool_protocol::ToolApprovalSnapshot,
        applied: usize,
        rejected: usize,
    ) {
        let call_id = asked.tool_call_id.as_ref().map(ToString::to_string);
        let row = {
            let mut rows = self.rows.lock().expect("trace lock");
            let Some(row) = rows.iter_mut().rev().find(|row| {
                row.kind == TraceKind::ToolsCall
                    && row.status == "running"
                    && row.name == asked.name
                    && row.session_id == asked.session_id
                    && (call_id.is_none() || row.tool_call_id == call_id)
            }) else {
                return;
            };
            row.approval = Some(TraceApproval {
                outcome: "approved with changes",
                applied_hunks: applied,
                rejected_hunks: rejected,
            });
            row.clone()
        };
        self.hub.publish(StudioEvent::Trace {
            row: serde_json::to_value(&row).unwrap_or(Value::Null),
        });
    }

    /// Adds a row, or replaces the row with the same trace id, and publishes it.
    pub fn upsert(&self, mut row: TraceRow) {
        {
            let mut rows = self.rows.lock().expect("trace lock");
            match rows
                .iter_mut()
                .find(|existing| existing.trace_id == row.trace_id)
            {
                Some(existing) => {
                    row.approval = row.approval.or(existing.approval);
                    *existing = row.clone();
                }
                None => {
                    rows.push_back(row.clone());
                    while rows.len() > MAX_TRACE_ROWS {
                        rows.pop_front();
                    }
                }
            }
        }
        self.hub.publish(StudioEvent::Trace {
            row: serde_json::to_value(&row).unwrap_or(Value::Null),
        });
    }

    /// The row of a tool-call lifecycle event (metadata only).
    pub fn row_for_event(event: &ToolCallEvent) -> TraceRow {
        let context = event.context.as_ref();
        let error = event
            .result
            .as_ref()
            .and_then(|result| result.error.as_ref());
        let mut argument_keys: Vec<String> = event
            .request
            .arguments
            .iter()
            .flat_map(|map| map.keys().cloned())
            .collect();
        argument_keys.sort();
        argument_keys.truncate(MAX_TRACE_ARGUMENT_KEYS);
        TraceRow {
            trace_id: event.trace_id.clone(),
            kind: TraceKind::ToolsCall,
            name: event.name.clone(),
            session_id: context.and_then(|c| c.session_id.clone()),
            source: context
                .and_then(|c| c.source)
                .map(|s| s.as_str().to_owned()),
            mode: context.and_then(|c| c.mode).map(|m| m.as_str().to_owned()),
            status: status_of(event).to_owned(),
            tool_call_id: event.tool_call_id.as_ref().map(ToString::to_string),
            started_at: event
                .timestamp
                .saturating_sub(event.duration_ms.unwrap_or(0)),
            duration_ms: event.duration_ms,
            error_code: error
                .map(|e| e.code.clone())
                .filter(|code| is_audit_safe_error_code(code)),
            retryable: error.and_then(|e| e.retryable),
            argument_keys,
            provenance: serde_json::to_value(&event.provenance).ok(),
            approval: None,
        }
    }
}

fn status_of(event: &ToolCallEvent) -> &'static str {
    match (
        event.event_type,
        event.result.as_ref().and_then(|r| r.error_code()),
    ) {
        (ToolCallEventType::Started, _) => "running",
        (ToolCallEventType::Completed, _) => "completed",
        (ToolCallEventType::Failed, Some(tool_protocol::codes::TOOL_CANCELLED)) => "cancelled",
        (ToolCallEventType::Failed, _) => "failed",
    }
}

impl ToolCallObserver for TraceStore {
    fn on_event(&self, event: &ToolCallEvent) {
        self.upsert(Self::row_for_event(event));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, session: &str, started_at: u64) -> TraceRow {
        TraceRow {
            trace_id: id.into(),
            kind: TraceKind::ToolsCall,
            name: "workspace.readFile".into(),
            session_id: Some(session.into()),
            source: None,
            mode: None,
            status: "completed".into(),
            tool_call_id: None,
            started_at,
            duration_ms: Some(1),
            error_code: None,
            retryable: None,
            argument_keys: Vec::new(),
            provenance: None,
            approval: None,
        }
    }

    #[test]
    fn sessions_are_listed_by_what_started_them_with_their_first_time() {
        let trace = TraceStore::new(EventHub::new());
        trace.name_session(
            "session-1",
            prompt_session_label("local", "make   it\nrose"),
        );
        trace.name_session("session-1", "a later name is ignored".into());
        trace.name_session("mcp-1", mcp_session_label(Some("  ")));
        trace.upsert(row("a", "session-1", 20));
        trace.upsert(row("b", "session-1", 10));
        trace.upsert(row("c", "mcp-1", 30));
        trace.upsert(row("d", "unnamed", 40));
        assert_eq!(
            trace.named_sessions(),
            [
                TraceSession {
                    id: "session-1".into(),
                    label: "local · “make it rose”".into(),
                    started_at: 10
                },
                TraceSession {
                    id: "mcp-1".into(),
                    label: "MCP · unnamed client".into(),
                    started_at: 30
                },
                TraceSession {
                    id: "unnamed".into(),
                    label: "unnamed".into(),
                    started_at: 40
                },
            ]
        );
        let rows = serde_json::to_string(&trace.rows(None)).unwrap();
        assert!(
            !rows.contains("rose"),
            "the prompt never reaches a row: {rows}"
        );
        assert_eq!(trace.sessions(), ["session-1", "mcp-1", "unnamed"]);
    }

    #[test]
    fn a_prompt_label_keeps_at_most_its_excerpt() {
        let long = "x".repeat(MAX_SESSION_LABEL_PROMPT_CHARS + 1);
        let label = prompt_session_label("openrouter", &long);
        assert_eq!(
            label,
            format!(
                "openrouter · “{}…”",
                "x".repeat(MAX_SESSION_LABEL_PROMPT_CHARS)
            )
        );
        let exact = "y".repeat(MAX_SESSION_LABEL_PROMPT_CHARS);
        assert_eq!(
            prompt_session_label("local", &exact),
            format!("local · “{exact}”")
        );
    }
}
