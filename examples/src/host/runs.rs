//! Agent runs: each prompt becomes one run with its own session id, lifecycle events on the
//! event hub, an `agent.request` trace row around its tool calls, and a cancellation token.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::events::{EventHub, StudioEvent};
use super::trace::{TraceKind, TraceRow, TraceStore};
use crate::agent::outcome::RunOutcome;

/// Finished runs kept for `GET /api/agent/runs/{id}`; the oldest are forgotten first.
pub const MAX_FINISHED_RUNS: usize = 64;

/// Lifecycle state of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Accepted, planning or calling tools.
    Started,
    /// Waiting for the provider or a preview acknowledgement.
    Waiting,
    /// Waiting on a person to approve or deny a call.
    Approval,
    /// Finished successfully.
    Completed,
    /// A person or policy denied a call.
    Denied,
    /// Finished with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl RunState {
    fn is_final(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Denied | Self::Failed | Self::Cancelled
        )
    }

    fn of(outcome: &RunOutcome) -> Self {
        match outcome {
            RunOutcome::Completed { .. } => Self::Completed,
            RunOutcome::Denied { .. } => Self::Denied,
            RunOutcome::Cancelled { .. } => Self::Cancelled,
            RunOutcome::Failed { .. } => Self::Failed,
        }
    }
}

/// A run as the API reports it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    /// Run id.
    pub run_id: String,
    /// Session id forwarded in every call context of the run.
    pub session_id: String,
    /// `local` or `openrouter`.
    pub agent: String,
    /// Lifecycle state.
    pub state: RunState,
    /// Final report once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Value>,
}

struct RunEntry {
    view: RunView,
    cancellation: CancellationToken,
    started_at: u64,
}

/// Registry of active and recently finished runs.
#[derive(Clone)]
pub struct AgentRuns {
    runs: Arc<Mutex<HashMap<String, RunEntry>>>,
    finished: Arc<Mutex<VecDeque<String>>>,
    hub: EventHub,
    trace: TraceStore,
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
        }
    }

    /// Registers a new run and returns its view and cancellation token.
    pub fn begin(&self, agent: &str) -> (RunView, CancellationToken) {
        let run_id = format!("run-{}", uuid::Uuid::new_v4().simple());
        let view = RunView {
            session_id: format!("session-{}", &run_id[4..16]),
            run_id,
            agent: agent.to_owned(),
            state: RunState::Started,
            report: None,
        };
        let cancellation = CancellationToken::new();
        let entry = RunEntry {
            view: view.clone(),
            cancellation: cancellation.clone(),
            started_at: now_ms(),
        };
        self.runs
            .lock()
            .expect("runs lock")
            .insert(view.run_id.clone(), entry);
        self.trace.upsert(self.trace_row(&view, now_ms(), None));
        self.announce(&view);
        (view, cancellation)
    }

    /// Moves a running run to `state` (ignored once the run has finished).
    pub fn set_state(&self, run_id: &str, state: RunState) {
        let view = {
            let mut runs = self.runs.lock().expect("runs lock");
            let Some(entry) = runs.get_mut(run_id) else {
                return;
            };
            if entry.view.state.is_final() || entry.view.state == state {
                return;
            }
            entry.view.state = state;
            entry.view.clone()
        };
        self.announce(&view);
    }

    /// Records the final outcome and report of a run.
    pub fn finish(&self, run_id: &str, outcome: &RunOutcome, report: Value) {
        let (view, started_at) = {
            let mut runs = self.runs.lock().expect("runs lock");
            let Some(entry) = runs.get_mut(run_id) else {
                return;
            };
            entry.view.state = RunState::of(outcome);
            entry.view.report = Some(report);
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

    /// A run's view.
    pub fn get(&self, run_id: &str) -> Option<RunView> {
        self.runs
            .lock()
            .expect("runs lock")
            .get(run_id)
            .map(|entry| entry.view.clone())
    }

    /// Whether any run is unfinished (the trace cannot be cleared then).
    pub fn any_active(&self) -> bool {
        self.runs
            .lock()
            .expect("runs lock")
            .values()
            .any(|entry| !entry.view.state.is_final())
    }

    /// Unfinished runs whose session has a pending approval move to `approval`; the others
    /// that were waiting on one go back to `started`.
    pub fn sync_approvals(&self, pending_sessions: &[String]) {
        let updates: Vec<(String, RunState)> = {
            let runs = self.runs.lock().expect("runs lock");
            runs.values()
                .filter(|entry| !entry.view.state.is_final())
                .filter_map(|entry| {
                    let waiting = pending_sessions.contains(&entry.view.session_id);
                    match (waiting, entry.view.state) {
                        (true, state) if state != RunState::Approval => {
                            Some((entry.view.run_id.clone(), RunState::Approval))
                        }
                        (false, RunState::Approval) => {
                            Some((entry.view.run_id.clone(), RunState::Started))
                        }
                        _ => None,
                    }
                })
                .collect()
        };
        for (run_id, state) in updates {
            self.set_state(&run_id, state);
        }
    }

    fn announce(&self, view: &RunView) {
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
        TraceRow {
            trace_id: view.run_id.clone(),
            kind: TraceKind::AgentRequest,
            name: format!("{} agent", view.agent),
            session_id: Some(view.session_id.clone()),
            source: Some("model".into()),
            mode: Some("agent".into()),
            status: match view.state {
                RunState::Started | RunState::Waiting | RunState::Approval => "running".into(),
                RunState::Completed => "completed".into(),
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
        });
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
