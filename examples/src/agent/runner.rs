//! Runs a local-agent plan through the registry's model-call path, exactly as a provider's
//! tool calls would run: same policy, same approvals, same trace.

use openrouter_tool_loop::{EventCallback, RunEvent, ToolCallStatus};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{ToolCallOptions, ToolRegistry};
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallMode, ToolCallResult, ToolCallSource,
    ToolContent, codes,
};

use super::outcome::RunOutcome;
use super::plan::{Plan, PlannedCall, Stop};
use super::reply;
use crate::kit::approval_note;

/// Marker put in the call context metadata of local-agent calls.
pub const LOCAL_FALLBACK_PROVIDER: &str = "local-fallback";

/// One executed call of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStep {
    /// Provider-style correlation id (`<run>-<n>`).
    pub tool_call_id: String,
    /// Tool name.
    pub tool: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Its error code when it failed (or was applied without a confirmed preview).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The call's change is applied although its result is an error (`details.committed`):
    /// `ok` is true and the call is never repeated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub committed: bool,
}

/// The report of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// Executed calls in order.
    pub steps: Vec<RunStep>,
    /// How the run ended.
    pub outcome: RunOutcome,
    /// The last workspace revision a result reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
}

/// Everything a run needs besides the plan.
#[derive(Clone)]
pub struct RunRequest<'a> {
    /// The registry all calls go through.
    pub registry: &'a ToolRegistry,
    /// Run id, used as the prefix of call ids.
    pub run_id: &'a str,
    /// Session of the run (forwarded in every call context).
    pub session_id: &'a str,
    /// Cancels the run and its in-flight call.
    pub cancellation: CancellationToken,
    /// Extra context metadata (for example a Design Mode selection).
    pub metadata: Map<String, Value>,
    /// Budget of each call (approval wait included), in milliseconds; `None` waits until
    /// cancelled.
    pub call_timeout_ms: Option<i64>,
    /// Receives the run's events as a provider run streams them (each call assembling, ready,
    /// started and finished, then the reply text), so pages render both agents one way.
    pub events: Option<EventCallback>,
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("run_id", &self.run_id)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// The local agent's calls and reply are all one provider-like turn.
const LOCAL_TURN: u32 = 1;

impl RunRequest<'_> {
    fn emit(&self, event: RunEvent) {
        if let Some(events) = &self.events {
            events(&event);
        }
    }

    /// Streams a call the way a provider's arrives: id and name, its arguments, ready.
    fn announce_call(
        &self,
        index: usize,
        tool_call_id: &str,
        name: &str,
        arguments: &Map<String, Value>,
    ) {
        let (turn, tool_call_id, name) = (LOCAL_TURN, tool_call_id.to_owned(), name.to_owned());
        self.emit(RunEvent::ToolCallStreamStarted {
            turn,
            index,
            tool_call_id: tool_call_id.clone(),
            name: name.clone(),
        });
        self.emit(RunEvent::ToolCallArgumentsDelta {
            turn,
            index,
            tool_call_id: tool_call_id.clone(),
            delta: Value::Object(arguments.clone()).to_string(),
            partial: Some(arguments.clone()),
        });
        let digest = tool_protocol::idempotency::tool_call_fingerprint(
            &name,
            &Value::Object(arguments.clone()),
        );
        self.emit(RunEvent::ToolCallReady {
            turn,
            index,
            tool_call_id: tool_call_id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
            digest,
            issues: Vec::new(),
        });
        self.emit(RunEvent::ToolCallStarted {
            turn,
            tool_call_id,
            provider_name: name.clone(),
            name,
        });
    }

    fn finished_call(
        &self,
        tool_call_id: &str,
        name: &str,
        error: Option<&ToolCallError>,
        committed: bool,
        took: std::time::Duration,
    ) {
        let status = match error {
            None => ToolCallStatus::Completed,
            Some(_) if committed => ToolCallStatus::Completed,
            Some(error) if error.code == codes::TOOL_CANCELLED => ToolCallStatus::Cancelled,
            Some(_) => ToolCallStatus::Failed,
        };
        self.emit(RunEvent::ToolCallFinished {
            turn: LOCAL_TURN,
            tool_call_id: tool_call_id.to_owned(),
            name: name.to_owned(),
            status,
            code: error.map(|error| error.code.clone()),
            retryable: error.and_then(|error| error.retryable),
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        });
    }
}

/// Executes `plan` call by call, feeding the latest observed revision into revision-guarded
/// calls, and stops at the first failure. A stopped plan calls nothing and answers its stop. A
/// committed error is no failure: its change is applied, so the run goes on (never repeating
/// it) and completes with a preview refresh to offer.
pub async fn run_plan(plan: &Plan, request: RunRequest<'_>) -> RunReport {
    if let Some(stop) = &plan.stop {
        return RunReport {
            steps: Vec::new(),
            outcome: stopped(plan, stop),
            revision: None,
        };
    }
    let mut steps = Vec::new();
    let mut observed = ObservedRevisions::default();
    let mut revision = None;
    let mut last = None;
    let mut unconfirmed = None;
    // What a person narrowed on the way (per-hunk approvals), repeated in the reply.
    let mut notes: Vec<String> = Vec::new();
    for (index, planned) in plan.calls.iter().enumerate() {
        let tool_call_id = format!("{}-{}", request.run_id, index + 1);
        let started = std::time::Instant::now();
        let result = execute(planned, index, &tool_call_id, &observed, &request).await;
        let error = result.error.clone();
        let committed = error.as_ref().is_some_and(ToolCallError::is_committed);
        let took = started.elapsed();
        request.finished_call(&tool_call_id, planned.name, error.as_ref(), committed, took);
        steps.push(RunStep {
            tool_call_id,
            tool: planned.name.to_owned(),
            ok: error.is_none() || committed,
            code: error.as_ref().map(|e| e.code.clone()),
            committed,
        });
        match error {
            Some(error) if committed => {
                let field = planned
                    .revision_guard()
                    .map_or("revision", |g| g.result_field);
                let applied = committed_revision(&error);
                observed.record_committed(field, applied);
                if field == "revision" {
                    revision = applied.or(revision);
                }
                unconfirmed = Some((planned.name, error));
            }
            Some(error) => {
                return RunReport {
                    steps,
                    outcome: RunOutcome::from_error(planned.name, &error, false),
                    revision,
                };
            }
            None => {
                notes.extend(changes_notes(&result));
                observed.record(&result);
                revision = reported_revision(&result).or(revision);
                last = Some((planned.name, result.structured_content));
            }
        }
    }
    let outcome = match (unconfirmed, &last) {
        (Some((tool, error)), _) => {
            RunOutcome::applied_unconfirmed(&format!("Applied: {tool}."), &error)
        }
        (None, Some((tool, result))) => reply::completed(tool, result.as_ref(), revision),
        (None, None) => RunOutcome::completed("Nothing to do."),
    }
    .with_notes(&notes);
    if let RunOutcome::Completed { message, .. } = &outcome {
        request.emit(RunEvent::TextDelta {
            turn: LOCAL_TURN,
            text: message.clone(),
        });
    }
    RunReport {
        outcome,
        steps,
        revision,
    }
}

/// The narrowed-approval notes of a result's text blocks.
fn changes_notes(result: &ToolCallResult) -> impl Iterator<Item = String> + '_ {
    result.content.iter().filter_map(|block| match block {
        ToolContent::Text { text } if approval_note::is_changes_note(text) => Some(text.clone()),
        _ => None,
    })
}

/// The outcome of a plan that does not act.
fn stopped(plan: &Plan, stop: &Stop) -> RunOutcome {
    match stop {
        Stop::NotUnderstood(message) => RunOutcome::NotUnderstood {
            message: message.clone(),
        },
        Stop::Unavailable(error) => {
            let tool = plan.calls.last().map_or("local agent", |call| call.name);
            RunOutcome::from_error(tool, error, false)
        }
    }
}

/// The revision a committed error says its change was applied as.
fn committed_revision(error: &ToolCallError) -> Option<u64> {
    error.details.as_ref()?.get("revision")?.as_u64()
}

/// Result fields that carry a revision clock.
const REVISION_FIELDS: &[&str] = &["revision", "documentRevision", "workspaceRevision"];

/// The latest value of every revision field results reported (`revision`, `documentRevision`,
/// `workspaceRevision`), so each guarded call gets the clock it is guarded by.
#[derive(Debug, Default)]
struct ObservedRevisions(Map<String, Value>);

impl ObservedRevisions {
    fn record(&mut self, result: &ToolCallResult) {
        let Some(Value::Object(content)) = &result.structured_content else {
            return;
        };
        for field in REVISION_FIELDS {
            if let Some(value) = content.get(*field).filter(|value| value.is_u64()) {
                self.0.insert((*field).to_owned(), value.clone());
            }
        }
    }

    /// A committed error's revision, under the clock its call is guarded by.
    fn record_committed(&mut self, field: &str, revision: Option<u64>) {
        if let Some(revision) = revision {
            self.0.insert(field.to_owned(), json!(revision));
        }
    }

    fn get(&self, field: &str) -> Option<u64> {
        self.0.get(field).and_then(Value::as_u64)
    }
}

async fn execute(
    planned: &PlannedCall,
    index: usize,
    tool_call_id: &str,
    observed: &ObservedRevisions,
    request: &RunRequest<'_>,
) -> ToolCallResult {
    if request.cancellation.is_cancelled() {
        return ToolCallResult::failure(
            ToolCallError::new(codes::TOOL_CANCELLED, "The agent run was cancelled.")
                .with_retryable(true),
        );
    }
    let mut arguments = planned.arguments.clone();
    let guard = planned.revision_guard();
    let revision = guard.and_then(|guard| observed.get(guard.result_field));
    if let (Some(guard), Some(revision)) = (guard, revision) {
        arguments.insert(guard.argument.into(), json!(revision));
    }
    request.announce_call(index, tool_call_id, planned.name, &arguments);
    let call = ModelToolCall {
        id: Some(tool_call_id.into()),
        name: planned.name.to_owned(),
        arguments: Some(arguments),
    };
    let mut metadata = request.metadata.clone();
    metadata.insert("provider".into(), json!(LOCAL_FALLBACK_PROVIDER));
    let context = ToolCallContext {
        source: Some(ToolCallSource::Model),
        mode: Some(ToolCallMode::Agent),
        session_id: Some(request.session_id.to_owned()),
        revision: revision.or(observed.get("revision")).map(Into::into),
        metadata: Some(metadata),
    };
    let mut options = ToolCallOptions::default()
        .with_context(context)
        .with_cancellation(request.cancellation.clone());
    if let Some(timeout_ms) = request.call_timeout_ms {
        options = options.with_timeout_ms(timeout_ms);
    }
    request
        .registry
        .execute_model_tool_call(call, options)
        .await
}

/// The `revision` a workspace result reports, if any.
pub fn reported_revision(result: &ToolCallResult) -> Option<u64> {
    result
        .structured_content
        .as_ref()?
        .get("revision")?
        .as_u64()
}
