//! Agent runs: each prompt (and each MCP `tools/call`) becomes one run with its own session id,
//! lifecycle events on the event hub, an `agent.request` trace row around its tool calls, and a
//! cancellation token.
//!
//! The lifecycle is `started`, then any number of `waiting` (for the provider, or for the
//! preview to acknowledge a revision a call of the run published) and `approval` (a call waits
//! on a person), each followed by `started` again when the run goes on, and one final state:
//! `completed`, `not-understood` (the local agent did not act), `denied`, `failed` or
//! `cancelled`. The hooks that move a run are synchronous with its calls, so the order of the
//! events is the order things happened:
//!
//! - [`RunApprovals`] wraps the approval queue: a call of the run asks a person (`approval`),
//!   and an approved call goes on (`started`);
//! - [`RunPreviewBridge`] wraps the preview bridge: a revision published while a call of the
//!   run is in flight makes the run wait for its acknowledgement (`waiting`);
//! - [`AgentRuns`] observes the registry: a finished call ends that wait (`started`).
//!
//! The two wrappers live in `hooks`, the reported types in `view`, what a run streamed (its
//! text and assembling tool calls, see [`AgentRuns::stream`]) in `stream`.

mod hooks;
mod stream;
mod view;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock};

use openrouter_tool_loop::RunEvent;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::ToolCallObserver;
use tool_protocol::{ToolCallEvent, ToolCallEventType, ToolCallId, ToolDefinition};

use super::trace::{TraceKind, TraceRow, TraceStore, prompt_session_label};
use crate::agent::outcome::RunOutcome;
use crate::kit::events::{EventHub, StudioEvent};
use crate::surfaces::{Surface, is_studio_tool};

pub use hooks::{RunApprovals, RunPreviewBridge};
pub use stream::{FLUSH_BYTES, FLUSH_INTERVAL, MAX_STREAMED_BYTES, RunStream, StreamedCall};
pub use view::{ExternalRun, Relay, RunRetry, RunState, RunView};

/// Finished runs kept for `GET /api/agent/runs/{id}`; the oldest are forgotten first.
pub const MAX_FINISHED_RUNS: usize = 64;

struct RunEntry {
    view: RunView,
    cancellation: CancellationToken,
    started_at: u64,
    /// Registry calls of the run (other than read-only ones) that started and have not finished.
    in_flight: usize,
    /// The `toolCallId` of an external run's one call.
    call_id: Option<String>,
    /// Where an external run's transitions go; dropped when the run finishes.
    relay: Option<Relay>,
    /// The surface whose page started the run (its approvals expire when no such page is
    /// attached any more: see `host::orphans`).
    page: Option<Surface>,
    /// What the run streamed so far (shown by [`AgentRuns::get`], never announced whole).
    stream: RunStream,
    /// Deltas waiting to be forwarded.
    outbox: stream::Outbox,
}

impl RunEntry {
    /// Whether a registry call with this session and id belongs to the run.
    fn owns_call(&self, session_id: &str, tool_call_id: Option<&str>) -> bool {
        !self.view.state.is_final()
            && self.view.session_id == session_id
            && self
                .call_id
                .as_deref()
                .is_none_or(|own| Some(own) == tool_call_id)
    }
}

/// A `toolCallId` as text (MCP request ids may be numbers).
pub fn call_id_text(id: &ToolCallId) -> String {
    match serde_json::to_value(id) {
        Ok(Value::String(text)) => text,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// Registry of active and recently finished runs.
#[derive(Clone)]
pub struct AgentRuns {
    runs: Arc<Mutex<HashMap<String, RunEntry>>>,
    finished: Arc<Mutex<VecDeque<String>>>,
    hub: EventHub,
    trace: TraceStore,
    /// Tools whose calls never publish a revision (read-only ones, and those mounted from MCP
    /// servers), so they never make a run wait.
    read_only: Arc<RwLock<HashSet<String>>>,
}

impl std::fmt::Debug for AgentRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuns").finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl AgentRuns {
    /// An empty registry publishing on `hub` and recording in `trace`.
    pub fn new(hub: EventHub, trace: TraceStore) -> Self {
        Self {
            runs: Arc::default(),
            finished: Arc::default(),
            hub,
            trace,
            read_only: Arc::default(),
        }
    }

    /// Learns which tools never publish a revision: the read-only ones, and every tool mounted
    /// from an MCP server (it acts outside the workspace). Called after the registry is built
    /// and again whenever its catalog changes; until then every call counts as one that may
    /// publish a revision.
    pub fn know_tools(&self, tools: &[ToolDefinition]) {
        let names = tools
            .iter()
            .filter(|tool| tool.is_read_only() || !is_studio_tool(&tool.name))
            .map(|tool| tool.name.clone())
            .collect();
        *self
            .read_only
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = names;
    }

    /// Registers a new run of `agent` for `prompt` and returns its view and cancellation token.
    /// The run's session is named after the prompt in the trace.
    pub fn begin(&self, agent: &str, prompt: &str) -> (RunView, CancellationToken) {
        let run_id = new_run_id();
        let session_id = format!("session-{}", &run_id[4..16]);
        self.trace
            .name_session(&session_id, prompt_session_label(agent, prompt));
        let cancellation = CancellationToken::new();
        let view = self.register(
            RunView {
                run_id,
                session_id,
                agent: agent.to_owned(),
                state: RunState::Started,
                detail: None,
                retry: None,
                report: None,
                stream: None,
            },
            cancellation.clone(),
            None,
        );
        (view, cancellation)
    }

    /// Registers an external run (an MCP call) in the caller's session, naming the session
    /// `run.session_label` in the trace.
    pub fn begin_external(&self, run: ExternalRun) -> RunView {
        self.trace.name_session(&run.session_id, run.session_label);
        let view = RunView {
            run_id: new_run_id(),
            session_id: run.session_id,
            agent: run.agent.to_owned(),
            state: RunState::Started,
            detail: Some(run.detail),
            retry: None,
            report: None,
            stream: None,
        };
        self.register(view, run.cancellation, Some((run.call_id, run.relay)))
    }

    fn register(
        &self,
        view: RunView,
        cancellation: CancellationToken,
        external: Option<(String, Relay)>,
    ) -> RunView {
        let (call_id, relay) = external.unzip();
        let entry = RunEntry {
            view: view.clone(),
            cancellation,
            started_at: now_ms(),
            in_flight: 0,
            call_id,
            relay,
            page: None,
            stream: RunStream::default(),
            outbox: stream::Outbox::default(),
        };
        self.runs
            .lock()
            .expect("runs lock")
            .insert(view.run_id.clone(), entry);
        self.trace.upsert(self.trace_row(&view, now_ms(), None));
        self.announce(&view);
        view
    }

    /// Records that a page of `surface` started `run_id` (and answers its approvals).
    pub fn asked_from_page(&self, run_id: &str, surface: Surface) {
        if let Some(entry) = self.runs.lock().expect("runs lock").get_mut(run_id) {
            entry.page = Some(surface);
        }
    }

    /// The surface of the page that started `session_id`'s unfinished run, if a page did.
    pub fn page_of_session(&self, session_id: &str) -> Option<Surface> {
        self.runs
            .lock()
            .expect("runs lock")
            .values()
            .find(|entry| entry.owns_call(session_id, None))
            .and_then(|entry| entry.page)
    }

    /// The unfinished external run of `session_id`'s call `call_id`.
    pub fn find_external(&self, session_id: &str, call_id: &str) -> Option<String> {
        self.runs
            .lock()
            .expect("runs lock")
            .values()
            .find(|entry| {
                entry.call_id.as_deref() == Some(call_id)
                    && entry.owns_call(session_id, Some(call_id))
            })
            .map(|entry| entry.view.run_id.clone())
    }

    /// Moves a running run to `state` (ignored once the run has finished).
    pub fn set_state(&self, run_id: &str, state: RunState) {
        self.transition(run_id, state, None);
    }

    /// Moves a running run to the non-final `state` with a `detail`; ignored when the run has
    /// finished or is already in `state`. Returns whether it moved.
    pub fn transition(&self, run_id: &str, state: RunState, detail: Option<String>) -> bool {
        if state.is_final() {
            return false;
        }
        let (view, relay) = {
            let mut runs = self.runs.lock().expect("runs lock");
            let Some(entry) = runs.get_mut(run_id) else {
                return false;
            };
            if entry.view.state.is_final() || entry.view.state == state {
                return false;
            }
            entry.view.state = state;
            entry.view.detail = detail;
            entry.view.retry = None;
            (entry.view.clone(), entry.relay.clone())
        };
        self.announce(&view);
        // Outside the lock: the relay may report back (an MCP call ignores its own state).
        if let Some(relay) = relay {
            relay(state, view.detail.as_deref().unwrap_or_default());
        }
        true
    }

    /// The run waits for the provider: `retry` while it backs off before a retry, `None` once
    /// a request is on its way. Announced whenever the wait changes, also within `waiting`.
    pub fn provider_wait(&self, run_id: &str, detail: String, retry: Option<RunRetry>) {
        let view = {
            let mut runs = self.runs.lock().expect("runs lock");
            let Some(entry) = runs.get_mut(run_id) else {
                return;
            };
            let unchanged = entry.view.state == RunState::Waiting
                && entry.view.detail.as_deref() == Some(detail.as_str())
                && entry.view.retry == retry;
            if entry.view.state.is_final() || unchanged {
                return;
            }
            entry.view.state = RunState::Waiting;
            entry.view.detail = Some(detail);
            entry.view.retry = retry;
            entry.view.clone()
        };
        self.announce(&view);
    }

    /// Moves every run `pick` selects to `state`, with `detail`.
    fn transition_where(&self, pick: impl Fn(&RunEntry) -> bool, state: RunState, detail: &str) {
        let picked: Vec<String> = self
            .runs
            .lock()
            .expect("runs lock")
            .values()
            .filter(|entry| pick(entry))
            .map(|entry| entry.view.run_id.clone())
            .collect();
        for run_id in picked {
            self.transition(&run_id, state, Some(detail.to_owned()));
        }
    }

    /// A call of `session_id` asks a person: the session's own agent run waits in `approval`
    /// (an MCP call reports its approval itself).
    pub fn awaiting_approval(&self, session_id: &str, tool: &str) {
        self.transition_where(
            |entry| entry.call_id.is_none() && entry.owns_call(session_id, None),
            RunState::Approval,
            &format!("waiting on a person for {tool}"),
        );
    }

    /// The approved call of `session_id` goes on.
    pub fn approved(&self, session_id: &str, tool: &str) {
        self.transition_where(
            |entry| {
                entry.call_id.is_none()
                    && entry.owns_call(session_id, None)
                    && entry.view.state == RunState::Approval
            },
            RunState::Started,
            &format!("approved; running {tool}"),
        );
    }

    /// A revision was published: runs with a (not read-only) call in flight wait for its
    /// acknowledgement.
    pub fn preview_published(&self, revision: u64) {
        self.transition_where(
            |entry| {
                entry.in_flight > 0
                    && entry.view.state == RunState::Started
                    && !entry.view.state.is_final()
            },
            RunState::Waiting,
            &format!("preview acknowledgement of revision {revision}"),
        );
    }

    /// Counts a registry call in or out of the runs it belongs to; a finished call ends the
    /// run's wait for the preview.
    fn observe_call(&self, event: &ToolCallEvent) {
        let Some(session_id) = event.context.as_ref().and_then(|c| c.session_id.as_deref()) else {
            return;
        };
        if self
            .read_only
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .contains(&event.name)
        {
            return;
        }
        let call_id = event.tool_call_id.as_ref().map(call_id_text);
        let started = event.event_type == ToolCallEventType::Started;
        let resumed: Vec<String> = {
            let mut runs = self.runs.lock().expect("runs lock");
            runs.values_mut()
                .filter(|entry| entry.owns_call(session_id, call_id.as_deref()))
                .filter_map(|entry| {
                    if started {
                        entry.in_flight += 1;
                        return None;
                    }
                    entry.in_flight = entry.in_flight.saturating_sub(1);
                    (entry.view.state == RunState::Waiting).then(|| entry.view.run_id.clone())
                })
                .collect()
        };
        for run_id in resumed {
            self.transition(
                &run_id,
                RunState::Started,
                Some(format!("{} finished", event.name)),
            );
        }
    }

    /// Records the final outcome and report of a run.
    pub fn finish(&self, run_id: &str, outcome: &RunOutcome, report: Value) {
        let (view, started_at) = {
            let mut runs = self.runs.lock().expect("runs lock");
            let Some(entry) = runs.get_mut(run_id) else {
                return;
            };
            if entry.view.state.is_final() {
                return;
            }
            entry.view.state = RunState::of(outcome);
            entry.view.detail = None;
            entry.view.retry = None;
            entry.view.report = Some(report);
            entry.relay = None;
            (entry.view.clone(), entry.started_at)
        };
        self.trace.upsert(self.trace_row(
            &view,
            started_at,
            Some(now_ms().saturating_sub(started_at)),
        ));
        self.announce(&view);
        self.forget_old(run_id);
    }

    fn forget_old(&self, run_id: &str) {
        let mut finished = self.finished.lock().expect("finished lock");
        finished.push_back(run_id.to_owned());
        while finished.len() > MAX_FINISHED_RUNS {
            if let Some(old) = finished.pop_front() {
                self.runs.lock().expect("runs lock").remove(&old);
            }
        }
    }

    /// Cancels a run; `false` when it is unknown or already finished.
    pub fn cancel(&self, run_id: &str) -> bool {
        let runs = self.runs.lock().expect("runs lock");
        match runs.get(run_id) {
            Some(entry) if !entry.view.state.is_final() => {
                entry.cancellation.cancel();
                true
            }
            _ => false,
        }
    }

    /// Cancels every unfinished run (shutdown, or leaving a route).
    pub fn cancel_all(&self) {
        for entry in self.runs.lock().expect("runs lock").values() {
            entry.cancellation.cancel();
        }
    }

    /// A run's view, with what it streamed so far.
    pub fn get(&self, run_id: &str) -> Option<RunView> {
        self.runs
            .lock()
            .expect("runs lock")
            .get(run_id)
            .map(|entry| RunView {
                stream: Some(entry.stream.clone()),
                ..entry.view.clone()
            })
    }

    /// Applies a streamed event (text, a tool call assembling or running, a retry voiding its
    /// turn) of an unfinished run to its view, and forwards it as an `agentStream` event,
    /// deltas coalesced (see `stream`). Other events are ignored.
    pub fn stream(&self, run_id: &str, event: &RunEvent) {
        let push = {
            let mut runs = self.runs.lock().expect("runs lock");
            let Some(entry) = runs.get_mut(run_id).filter(|e| !e.view.state.is_final()) else {
                return;
            };
            let Some(forward) = entry.stream.apply(event) else {
                return;
            };
            entry.outbox.push(forward)
        };
        self.send_stream(run_id, push.send);
        if let Some(delay) = push.flush_in {
            self.flush_later(run_id, delay);
        }
    }

    fn flush_later(&self, run_id: &str, delay: std::time::Duration) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.flush_stream(run_id);
            return;
        };
        let runs = self.clone();
        let run_id = run_id.to_owned();
        runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            runs.flush_stream(&run_id);
        });
    }

    /// Forwards the run's waiting delta now.
    fn flush_stream(&self, run_id: &str) {
        let waiting = self
            .runs
            .lock()
            .expect("runs lock")
            .get_mut(run_id)
            .and_then(|entry| entry.outbox.flush());
        self.send_stream(run_id, waiting);
    }

    /// Tells the pages that `run_id` starts a fix turn (its change broke the preview), after
    /// everything it streamed so far: the chat shows `notice` as its own entry, and the fix
    /// turn's reply streams into a bubble of its own.
    pub fn fix_turn(&self, run_id: &str, notice: String) {
        self.flush_stream(run_id);
        self.hub.publish(StudioEvent::AgentStream {
            run_id: run_id.to_owned(),
            event: json!({"type": "fixTurn", "message": notice}),
        });
    }

    fn send_stream(&self, run_id: &str, events: impl IntoIterator<Item = RunEvent>) {
        for event in events {
            self.hub.publish(StudioEvent::AgentStream {
                run_id: run_id.to_owned(),
                event: serde_json::to_value(&event).unwrap_or(Value::Null),
            });
        }
    }

    /// Whether any run is unfinished (the trace cannot be cleared then).
    pub fn any_active(&self) -> bool {
        self.runs
            .lock()
            .expect("runs lock")
            .values()
            .any(|entry| !entry.view.state.is_final())
    }

    fn announce(&self, view: &RunView) {
        // A page gets every delta before the state that follows them (the final one included).
        self.flush_stream(&view.run_id);
        self.hub.publish(StudioEvent::Agent {
            run: serde_json::to_value(view).unwrap_or(Value::Null),
        });
    }

    fn trace_row(&self, view: &RunView, started_at: u64, duration_ms: Option<u64>) -> TraceRow {
        let (error_code, retryable) = match view.report.as_ref().and_then(|r| r.get("outcome")) {
            Some(outcome) => (
                outcome
                    .get("code")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                outcome.get("retryable").and_then(Value::as_bool),
            ),
            None => (None, None),
        };
        // A denial's outcome names the tool, not the code: the row still carries it.
        let (error_code, retryable) = match view.state {
            RunState::Denied => (
                error_code.or_else(|| Some(tool_protocol::codes::TOOL_POLICY_DENIED.to_owned())),
                retryable.or(Some(false)),
            ),
            _ => (error_code, retryable),
        };
        TraceRow {
            trace_id: view.run_id.clone(),
            kind: TraceKind::AgentRequest,
            name: format!("{} agent", view.agent),
            session_id: Some(view.session_id.clone()),
            source: Some(if view.agent == "mcp" { "mcp" } else { "model" }.into()),
            mode: Some("agent".into()),
            status: match view.state {
                RunState::Started | RunState::Waiting | RunState::Approval => "running".into(),
                RunState::Completed => "completed".into(),
                RunState::NotUnderstood => "not-understood".into(),
                RunState::Cancelled => "cancelled".into(),
                RunState::Denied | RunState::Failed => "failed".into(),
            },
            tool_call_id: None,
            started_at,
            duration_ms,
            error_code,
            retryable,
            argument_keys: Vec::new(),
            provenance: None,
            approval: None,
        }
    }

    /// Records a `tools/list` discovery of a run.
    pub fn record_listing(&self, view: &RunView, tool_count: usize) {
        let now = now_ms();
        self.trace.upsert(TraceRow {
            trace_id: format!("{}-tools-list", view.run_id),
            kind: TraceKind::ToolsList,
            name: format!("tools/list ({tool_count} tools)"),
            session_id: Some(view.session_id.clone()),
            source: Some("model".into()),
            mode: Some("agent".into()),
            status: "completed".into(),
            tool_call_id: None,
            started_at: now,
            duration_ms: Some(0),
            error_code: None,
            retryable: None,
            argument_keys: Vec::new(),
            provenance: None,
            approval: None,
        });
    }
}

fn new_run_id() -> String {
    format!("run-{}", uuid::Uuid::new_v4().simple())
}

impl ToolCallObserver for AgentRuns {
    fn on_event(&self, event: &ToolCallEvent) {
        self.observe_call(event);
    }
}

/// Metadata for the calls of a run (a Design Mode selection, for example), bounded to an object.
pub fn run_metadata(value: Option<&Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    }
    .into_iter()
    .chain([("agentRun".to_owned(), json!(true))])
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, name: &str, session: &str) -> ToolCallEvent {
        serde_json::from_value(json!({
            "type": kind,
            "traceId": format!("{session}-{name}"),
            "name": name,
            "request": {"method": "tools/call", "params": {"name": name, "arguments": {}}},
            "context": {"source": "model", "mode": "agent", "sessionId": session},
            "timestamp": 0,
            "provenance": {
                "schemaVersion": "context-action-tool-execution-provenance.v1",
                "phase": "tool-call",
                "ownerId": "test",
                "state": "pending",
                "usedOutputBytes": 0,
                "elapsedMs": 0
            }
        }))
        .unwrap()
    }

    fn read_only(name: &str) -> ToolDefinition {
        serde_json::from_value(json!({
            "name": name,
            "description": "Reads.",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn only_runs_with_a_writing_call_in_flight_wait_for_the_preview() {
        let hub = EventHub::new();
        let runs = AgentRuns::new(hub.clone(), TraceStore::new(hub));
        runs.know_tools(&[read_only("workspace.readFile")]);
        let (reader, _) = runs.begin("local", "a prompt");
        let (writer, _) = runs.begin("local", "a prompt");
        runs.on_event(&event("started", "workspace.readFile", &reader.session_id));
        runs.on_event(&event("started", "workspace.writeFile", &writer.session_id));
        runs.preview_published(7);
        assert_eq!(runs.get(&reader.run_id).unwrap().state, RunState::Started);
        let waiting = runs.get(&writer.run_id).unwrap();
        assert_eq!(waiting.state, RunState::Waiting);
        assert_eq!(
            waiting.detail.as_deref(),
            Some("preview acknowledgement of revision 7")
        );
        runs.on_event(&event(
            "completed",
            "workspace.writeFile",
            &writer.session_id,
        ));
        let resumed = runs.get(&writer.run_id).unwrap();
        assert_eq!(resumed.state, RunState::Started);
        assert_eq!(
            resumed.detail.as_deref(),
            Some("workspace.writeFile finished")
        );
        runs.preview_published(8);
        assert_eq!(
            runs.get(&writer.run_id).unwrap().state,
            RunState::Started,
            "no call in flight, nothing to wait for"
        );
    }

    #[tokio::test]
    async fn calls_of_tools_mounted_later_never_make_a_run_wait_for_the_preview() {
        let hub = EventHub::new();
        let runs = AgentRuns::new(hub.clone(), TraceStore::new(hub));
        let mut writer = read_only("docs.write");
        writer.annotations = None;
        runs.know_tools(&[read_only("workspace.readFile")]);
        // The catalog changed: an MCP server's tools were mounted.
        runs.know_tools(&[read_only("workspace.readFile"), writer]);
        let (run, _) = runs.begin("openrouter", "a prompt");
        runs.on_event(&event("started", "docs.write", &run.session_id));
        runs.preview_published(3);
        assert_eq!(runs.get(&run.run_id).unwrap().state, RunState::Started);
        runs.on_event(&event("started", "workspace.writeFile", &run.session_id));
        runs.preview_published(4);
        assert_eq!(runs.get(&run.run_id).unwrap().state, RunState::Waiting);
    }

    #[tokio::test]
    async fn every_provider_retry_is_announced_while_the_run_already_waits() {
        let hub = EventHub::new();
        let mut events = hub.subscribe();
        let runs = AgentRuns::new(hub.clone(), TraceStore::new(hub));
        let (run, _) = runs.begin("openrouter", "hello");
        let retry = |attempt| RunRetry {
            attempt,
            max_attempts: 2,
            delay_ms: 3_500,
            code: "OPENROUTER_RATE_LIMITED".into(),
        };
        runs.provider_wait(&run.run_id, "waiting for the provider".into(), None);
        runs.provider_wait(&run.run_id, retry(1).describe(), Some(retry(1)));
        runs.provider_wait(&run.run_id, retry(1).describe(), Some(retry(1)));
        runs.provider_wait(&run.run_id, retry(2).describe(), Some(retry(2)));
        let mut announced = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let StudioEvent::Agent { run } = event {
                announced.push((run["state"].clone(), run["retry"]["attempt"].clone()));
            }
        }
        assert_eq!(
            announced,
            [
                (json!("started"), Value::Null),
                (json!("waiting"), Value::Null),
                (json!("waiting"), json!(1)),
                (json!("waiting"), json!(2)),
            ],
            "each retry once, though the state stays waiting"
        );
        let view = runs.get(&run.run_id).unwrap();
        assert_eq!(
            view.detail.as_deref(),
            Some("OPENROUTER_RATE_LIMITED: retry 2 of 2 in 4s")
        );
        runs.set_state(&run.run_id, RunState::Started);
        assert_eq!(
            runs.get(&run.run_id).unwrap().retry,
            None,
            "the retry is over"
        );
    }

    #[tokio::test]
    async fn finished_runs_ignore_late_transitions_and_relays_are_dropped() {
        let hub = EventHub::new();
        let runs = AgentRuns::new(hub.clone(), TraceStore::new(hub));
        let relayed = Arc::new(Mutex::new(Vec::new()));
        let sink = relayed.clone();
        let view = runs.begin_external(ExternalRun {
            agent: "mcp",
            session_id: "mcp-1".into(),
            session_label: "MCP · test client".into(),
            call_id: "7".into(),
            detail: "workspace.writeFile".into(),
            cancellation: CancellationToken::new(),
            relay: Arc::new(move |state, detail: &str| {
                sink.lock().unwrap().push(format!("{state:?} {detail}"));
            }),
        });
        assert_eq!(runs.find_external("mcp-1", "7"), Some(view.run_id.clone()));
        assert_eq!(runs.find_external("mcp-1", "8"), None);
        runs.awaiting_approval("mcp-1", "workspace.writeFile");
        assert_eq!(
            runs.get(&view.run_id).unwrap().state,
            RunState::Started,
            "an MCP call reports its own approval"
        );
        assert!(runs.transition(&view.run_id, RunState::Waiting, Some("x".into())));
        assert!(!runs.transition(&view.run_id, RunState::Waiting, Some("y".into())));
        let outcome = RunOutcome::completed("done");
        runs.finish(&view.run_id, &outcome, json!({"outcome": outcome}));
        assert!(!runs.transition(&view.run_id, RunState::Started, None));
        assert_eq!(runs.find_external("mcp-1", "7"), None);
        assert_eq!(*relayed.lock().unwrap(), ["Waiting x"]);
        assert!(!runs.any_active());
    }
}
