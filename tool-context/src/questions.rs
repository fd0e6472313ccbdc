//! Questions a running tool asks the person: an MCP server's elicitation during a mounted call,
//! say. A [`ToolQuestions`] answers them; a [`QuestionQueue`] holds them for a UI, the way an
//! [`ApprovalQueue`](crate::ApprovalQueue) holds approvals.
//!
//! A question carries a message and the flat form it asks for (an MCP `requestedSchema`: an
//! object whose properties are strings, numbers, integers, booleans or enums). The person
//! accepts with values, declines, or cancels; an accepted answer is checked against the form
//! before it is passed on, so a page cannot send the server what it did not ask for. A question
//! nobody answers (the call cancelled or timed out, the queue closed) is cancelled: it never
//! turns into an answer given on the person's behalf.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;
use tool_durable_operations::{Clock, SystemClock};
use tool_protocol::ToolCallId;

/// Most questions that may wait at once; a question beyond it is cancelled at once.
pub const MAX_PENDING_QUESTIONS: usize = 64;
/// Longest question message kept, in characters.
pub const MAX_QUESTION_MESSAGE_CHARS: usize = 2_000;
/// Most bytes of an accepted answer's values (as JSON).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// A question asked during a call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolQuestion {
    /// Provider correlation id of the call that asks.
    pub tool_call_id: Option<ToolCallId>,
    /// Session of that call.
    pub session_id: Option<String>,
    /// The tool being called (`git.commit`).
    pub name: String,
    /// Who asks, for a person (`MCP server "git"`).
    pub asked_by: String,
    /// The question.
    pub message: String,
    /// The form asked for: a JSON schema object with flat primitive properties.
    pub requested_schema: Value,
}

/// A person's answer to a [`ToolQuestion`].
#[derive(Debug, Clone, PartialEq)]
pub enum QuestionAnswer {
    /// Answered with these values (checked against the requested form).
    Accept(Map<String, Value>),
    /// The person said no.
    Decline,
    /// Nobody answered: dismissed, or the call, the page or the host went away.
    Cancel,
}

/// Answers questions a tool asks while it runs.
#[async_trait]
pub trait ToolQuestions: Send + Sync {
    /// Asks `question`; `cancellation` fires when the call ends before an answer.
    async fn ask(&self, question: ToolQuestion, cancellation: &CancellationToken)
    -> QuestionAnswer;
}

/// A pending question as a UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolQuestionSnapshot {
    /// Queue-assigned id.
    pub id: String,
    /// Provider correlation id of the call that asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    /// Session of that call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The tool being called.
    pub name: String,
    /// Who asks.
    pub asked_by: String,
    /// The question (at most [`MAX_QUESTION_MESSAGE_CHARS`]).
    pub message: String,
    /// The form asked for.
    pub requested_schema: Value,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
}

/// The pending questions, oldest first.
pub type QuestionSnapshot = Arc<Vec<ToolQuestionSnapshot>>;

/// Why [`QuestionQueue::answer`] refused an answer (nothing was passed on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerRefused {
    /// No such question is pending (answered, cancelled, or never asked).
    NotPending,
    /// The values do not fit the requested form: why, naming the field.
    Invalid(String),
}

impl fmt::Display for AnswerRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotPending => f.write_str("no such question is waiting for an answer"),
            Self::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for AnswerRefused {}

/// Pending questions with an observable snapshot. Cheap to clone; clones share one queue.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use serde_json::json;
/// use tokio_util::sync::CancellationToken;
/// use tool_context::questions::{QuestionAnswer, QuestionQueue, ToolQuestion, ToolQuestions};
///
/// let queue = QuestionQueue::new();
/// let question = ToolQuestion {
///     tool_call_id: None,
///     session_id: None,
///     name: "git.push".into(),
///     asked_by: "MCP server \"git\"".into(),
///     message: "Push to main?".into(),
///     requested_schema: json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}}),
/// };
/// let asking = { let queue = queue.clone(); tokio::spawn(async move {
///     queue.ask(question, &CancellationToken::new()).await
/// }) };
/// let mut updates = queue.subscribe();
/// let pending = updates.wait_for(|pending| !pending.is_empty()).await.unwrap().clone();
/// let values = json!({"confirm": true}).as_object().unwrap().clone();
/// queue.answer(&pending[0].id, QuestionAnswer::Accept(values.clone())).unwrap();
/// assert_eq!(asking.await.unwrap(), QuestionAnswer::Accept(values));
/// # });
/// ```
#[derive(Clone)]
pub struct QuestionQueue {
    inner: Arc<Inner>,
}

struct Inner {
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    updates: watch::Sender<QuestionSnapshot>,
}

#[derive(Default)]
struct State {
    next_sequence: u64,
    pending: Vec<Pending>,
    closed: bool,
}

struct Pending {
    snapshot: ToolQuestionSnapshot,
    responder: oneshot::Sender<QuestionAnswer>,
}

impl fmt::Debug for QuestionQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuestionQueue")
            .field("pending", &self.snapshot().len())
            .finish()
    }
}

impl Default for QuestionQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl QuestionQueue {
    /// An empty queue on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty queue whose `createdAt` comes from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        let (updates, _) = watch::channel(Arc::new(Vec::new()));
        Self {
            inner: Arc::new(Inner {
                clock,
                state: Mutex::new(State::default()),
                updates,
            }),
        }
    }

    /// The pending questions, oldest first.
    pub fn snapshot(&self) -> QuestionSnapshot {
        self.inner.updates.borrow().clone()
    }

    /// A receiver that sees every change of the pending list.
    pub fn subscribe(&self) -> watch::Receiver<QuestionSnapshot> {
        self.inner.updates.subscribe()
    }

    /// Answers question `id`. An accepted answer must fit the requested form (known fields
    /// only, every required one, each of its type, enum and bounds); otherwise nothing is
    /// passed on and the question stays pending.
    pub fn answer(&self, id: &str, answer: QuestionAnswer) -> Result<(), AnswerRefused> {
        let mut state = self.lock();
        let index = state
            .pending
            .iter()
            .position(|entry| entry.snapshot.id == id)
            .ok_or(AnswerRefused::NotPending)?;
        if let QuestionAnswer::Accept(values) = &answer {
            check_answer(&state.pending[index].snapshot.requested_schema, values)
                .map_err(AnswerRefused::Invalid)?;
        }
        let entry = state.pending.remove(index);
        self.publish(&state);
        drop(state);
        let _ = entry.responder.send(answer);
        Ok(())
    }

    /// Cancels every pending question; returns how many.
    pub fn cancel_all(&self) -> usize {
        let mut state = self.lock();
        let entries = std::mem::take(&mut state.pending);
        self.publish(&state);
        drop(state);
        let count = entries.len();
        for entry in entries {
            let _ = entry.responder.send(QuestionAnswer::Cancel);
        }
        count
    }

    /// Cancels every pending question and every later one (shutdown).
    pub fn close(&self) -> usize {
        self.lock().closed = true;
        self.cancel_all()
    }

    fn enqueue(
        &self,
        question: ToolQuestion,
    ) -> Option<(String, oneshot::Receiver<QuestionAnswer>)> {
        let now = self.inner.clock.now_ms();
        let mut state = self.lock();
        if state.closed || state.pending.len() >= MAX_PENDING_QUESTIONS {
            return None;
        }
        let base = question
            .tool_call_id
            .as_ref()
            .map_or_else(|| format!("question-{now}"), |id| format!("{id}-question"));
        let id = format!("{base}-{}", state.next_sequence);
        state.next_sequence += 1;
        let (responder, answer) = oneshot::channel();
        state.pending.push(Pending {
            snapshot: ToolQuestionSnapshot {
                id: id.clone(),
                tool_call_id: question.tool_call_id,
                session_id: question.session_id,
                name: question.name,
                asked_by: question.asked_by,
                message: question
                    .message
                    .chars()
                    .take(MAX_QUESTION_MESSAGE_CHARS)
                    .collect(),
                requested_schema: question.requested_schema,
                created_at: now,
            },
            responder,
        });
        self.publish(&state);
        Some((id, answer))
    }

    fn remove(&self, id: &str) {
        let mut state = self.lock();
        if let Some(index) = state
            .pending
            .iter()
            .position(|entry| entry.snapshot.id == id)
        {
            state.pending.remove(index);
            self.publish(&state);
        }
    }

    fn publish(&self, state: &State) {
        let pending = state.pending.iter().map(|entry| entry.snapshot.clone());
        self.inner.updates.send_replace(Arc::new(pending.collect()));
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every edit is one Vec operation, so a poisoned lock holds a whole list.
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Removes a still-pending question when its asker stops waiting.
struct Removal<'a> {
    queue: &'a QuestionQueue,
    id: String,
}

impl Drop for Removal<'_> {
    fn drop(&mut self) {
        self.queue.remove(&self.id);
    }
}

#[async_trait]
impl ToolQuestions for QuestionQueue {
    async fn ask(
        &self,
        question: ToolQuestion,
        cancellation: &CancellationToken,
    ) -> QuestionAnswer {
        if cancellation.is_cancelled() {
            return QuestionAnswer::Cancel;
        }
        let Some((id, answer)) = self.enqueue(question) else {
            return QuestionAnswer::Cancel;
        };
        let _removal = Removal { queue: self, id };
        tokio::select! {
            biased;
            () = cancellation.cancelled() => QuestionAnswer::Cancel,
            answer = answer => answer.unwrap_or(QuestionAnswer::Cancel),
        }
    }
}

/// Checks accepted `values` against a flat elicitation form; `Err` says what is wrong.
pub fn check_answer(schema: &Value, values: &Map<String, Value>) -> Result<(), String> {
    let size = serde_json::to_string(values).map_or(usize::MAX, |text| text.len());
    if size > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answer is {size} bytes; at most {MAX_ANSWER_BYTES} are sent"
        ));
    }
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if let Some(unknown) = values.keys().find(|name| !properties.contains_key(*name)) {
        return Err(format!("\"{unknown}\" is not a field of this question"));
    }
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !values.contains_key(name) {
            return Err(format!("\"{name}\" is required"));
        }
    }
    for (name, value) in values {
        check_field(&properties[name], value).map_err(|why| format!("\"{name}\" {why}"))?;
    }
    Ok(())
}

/// One field against its primitive schema (string, number, integer, boolean, enum, or an
/// array of enum strings for a multi-select).
fn check_field(schema: &Value, value: &Value) -> Result<(), String> {
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let has_choices = schema.get("enum").is_some() || schema.get("oneOf").is_some();
    match kind {
        "boolean" if value.is_boolean() => Ok(()),
        "boolean" => Err("must be true or false".into()),
        "integer" if value.is_i64() || value.is_u64() => within(schema, value),
        "integer" => Err("must be a whole number".into()),
        "number" if value.is_number() => within(schema, value),
        "number" => Err("must be a number".into()),
        "array" => {
            let items = value.as_array().ok_or("must be a list of choices")?;
            let allowed = schema.get("items").map_or(&Value::Null, |items| items);
            items.iter().try_for_each(|item| one_of(allowed, item))
        }
        _ => {
            let text = value.as_str().ok_or("must be text")?;
            if has_choices {
                return one_of(schema, value);
            }
            let length = text.chars().count() as u64;
            let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
            match (bound("minLength"), bound("maxLength")) {
                (Some(min), _) if length < min => Err(format!("must be at least {min} characters")),
                (_, Some(max)) if length > max => Err(format!("must be at most {max} characters")),
                _ => Ok(()),
            }
        }
    }
}

/// `value` is one of the schema's `enum` values or `oneOf` constants.
fn one_of(schema: &Value, value: &Value) -> Result<(), String> {
    let listed = schema.get("enum").and_then(Value::as_array);
    let constants = schema.get("oneOf").and_then(Value::as_array);
    let allowed = listed.into_iter().flatten().any(|choice| choice == value)
        || constants
            .into_iter()
            .flatten()
            .any(|option| option.get("const") == Some(value));
    if allowed {
        Ok(())
    } else {
        Err(format!("{value} is not one of the choices"))
    }
}

/// A number within the schema's `minimum`/`maximum`.
fn within(schema: &Value, value: &Value) -> Result<(), String> {
    let number = value.as_f64().unwrap_or(f64::NAN);
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    match (bound("minimum"), bound("maximum")) {
        (Some(min), _) if number < min => Err(format!("must be at least {min}")),
        (_, Some(max)) if number > max => Err(format!("must be at most {max}")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn question() -> ToolQuestion {
        ToolQuestion {
            tool_call_id: Some("call-1".into()),
            session_id: None,
            name: "git.push".into(),
            asked_by: "MCP server \"git\"".into(),
            message: "x".repeat(MAX_QUESTION_MESSAGE_CHARS + 5),
            requested_schema: json!({
                "type": "object",
                "properties": {
                    "confirm": {"type": "boolean"},
                    "branch": {"type": "string", "minLength": 1, "maxLength": 5},
                    "count": {"type": "integer", "minimum": 1, "maximum": 3},
                    "color": {"type": "string", "enum": ["red", "blue"]},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
                },
                "required": ["confirm"]
            }),
        }
    }

    fn values(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn an_answer_must_fit_the_form_it_answers() {
        let schema = question().requested_schema;
        let ok = values(
            json!({"confirm": false, "branch": "main", "count": 3, "color": "red", "tags": ["a"]}),
        );
        assert_eq!(check_answer(&schema, &ok), Ok(()));
        for (bad, why) in [
            (json!({}), "\"confirm\" is required"),
            (
                json!({"confirm": "yes"}),
                "\"confirm\" must be true or false",
            ),
            (
                json!({"confirm": true, "extra": 1}),
                "\"extra\" is not a field of this question",
            ),
            (
                json!({"confirm": true, "branch": ""}),
                "\"branch\" must be at least 1 characters",
            ),
            (
                json!({"confirm": true, "branch": "feature"}),
                "\"branch\" must be at most 5 characters",
            ),
            (
                json!({"confirm": true, "count": 4}),
                "\"count\" must be at most 3",
            ),
            (
                json!({"confirm": true, "count": 1.5}),
                "\"count\" must be a whole number",
            ),
            (
                json!({"confirm": true, "color": "green"}),
                "\"color\" \"green\" is not one of the choices",
            ),
            (
                json!({"confirm": true, "tags": ["c"]}),
                "\"tags\" \"c\" is not one of the choices",
            ),
        ] {
            assert_eq!(
                check_answer(&schema, &values(bad.clone())),
                Err(why.to_owned()),
                "{bad}"
            );
        }
        let huge = values(json!({"confirm": true, "branch": "y".repeat(MAX_ANSWER_BYTES)}));
        assert!(check_answer(&schema, &huge).unwrap_err().contains("bytes"));
    }

    #[tokio::test]
    async fn a_question_waits_for_a_fitting_answer_and_is_cancelled_when_nobody_answers() {
        let queue = QuestionQueue::new();
        let token = CancellationToken::new();
        let mut asking = Box::pin(queue.ask(question(), &token));
        assert!(futures::poll!(&mut asking).is_pending());
        let pending = queue.snapshot();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].id, "call-1-question-0");
        assert_eq!(
            pending[0].message.chars().count(),
            MAX_QUESTION_MESSAGE_CHARS
        );
        let wrong = QuestionAnswer::Accept(values(json!({"confirm": 1})));
        assert!(matches!(
            queue.answer(&pending[0].id, wrong),
            Err(AnswerRefused::Invalid(_))
        ));
        assert_eq!(
            queue.snapshot().len(),
            1,
            "a refused answer leaves it pending"
        );
        queue
            .answer(&pending[0].id, QuestionAnswer::Decline)
            .unwrap();
        assert_eq!(asking.await, QuestionAnswer::Decline);
        assert_eq!(
            queue.answer(&pending[0].id, QuestionAnswer::Decline),
            Err(AnswerRefused::NotPending),
            "answered once"
        );
        // The call ends before anyone answers: cancelled, and the card goes.
        let mut asking = Box::pin(queue.ask(question(), &token));
        assert!(futures::poll!(&mut asking).is_pending());
        token.cancel();
        assert_eq!(asking.await, QuestionAnswer::Cancel);
        assert!(queue.snapshot().is_empty());
        // A closed queue cancels what waits and everything asked later.
        let token = CancellationToken::new();
        let mut asking = Box::pin(queue.ask(question(), &token));
        assert!(futures::poll!(&mut asking).is_pending());
        assert_eq!(queue.close(), 1);
        assert_eq!(asking.await, QuestionAnswer::Cancel);
        assert_eq!(queue.ask(question(), &token).await, QuestionAnswer::Cancel);
    }
}
