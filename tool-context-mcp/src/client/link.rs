//! The live connection to one server as its mounted tools see it: the current peer, or none
//! while the server is down, so a call fails fast instead of waiting for a reconnect; and the
//! calls in flight, so what the server asks of us during a call can be put to the person (or
//! reported on the call when nobody answers questions here).

use std::sync::{Arc, Mutex, RwLock};

use rmcp::Peer;
use rmcp::service::RoleClient;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tool_context::questions::{QuestionAnswer, ToolQuestion, ToolQuestions};
use tool_protocol::ToolCallId;

/// How a connection reaches its server; decides what a failed send means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// A child process: a failed write never reached it.
    Stdio,
    /// Streamable HTTP: a failed POST may or may not have reached it.
    Http,
}

/// One server's current peer, shared by its mounted tools and its supervisor.
pub(crate) struct ServerLink {
    pub(crate) server: Arc<str>,
    pub(crate) kind: LinkKind,
    pub(crate) in_flight: Arc<InFlight>,
    peer: RwLock<Option<Peer<RoleClient>>>,
}

impl ServerLink {
    pub(crate) fn new(server: &str, kind: LinkKind, in_flight: Arc<InFlight>) -> Arc<Self> {
        Arc::new(Self {
            server: Arc::from(server),
            kind,
            in_flight,
            peer: RwLock::new(None),
        })
    }

    /// The connected peer, `None` while the server is down.
    pub(crate) fn peer(&self) -> Option<Peer<RoleClient>> {
        self.peer
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    pub(crate) fn set_peer(&self, peer: Option<Peer<RoleClient>>) {
        *self
            .peer
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = peer;
    }
}

/// Who answers the questions servers ask during calls: set once on the mounts, read by every
/// connection (none: every question is declined and noted on its call).
#[derive(Clone, Default)]
pub(crate) struct QuestionSlot(Arc<RwLock<Option<Arc<dyn ToolQuestions>>>>);

impl QuestionSlot {
    pub(crate) fn set(&self, questions: Arc<dyn ToolQuestions>) {
        *self.0.write().unwrap_or_else(|poison| poison.into_inner()) = Some(questions);
    }

    pub(crate) fn get(&self) -> Option<Arc<dyn ToolQuestions>> {
        self.0
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }
}

/// The calls running on one server. A 2025-11-25 server's `elicitation/create` names no call,
/// so it is put to the person as the question of the only call in flight; with several in
/// flight (or nobody to ask) it is declined and noted on every one of them.
pub(crate) struct InFlight {
    calls: Mutex<Vec<Arc<CallNotes>>>,
    questions: QuestionSlot,
}

/// The call a question is asked for: what the person is shown and when to stop waiting.
#[derive(Clone)]
pub(crate) struct CallAsker {
    /// The server, as the person knows it.
    pub(crate) server: Arc<str>,
    /// The registry's name of the tool (`git.commit`).
    pub(crate) tool_name: String,
    pub(crate) tool_call_id: Option<ToolCallId>,
    pub(crate) session_id: Option<String>,
    /// Fires when the call ends: an unanswered question is then cancelled.
    pub(crate) cancellation: CancellationToken,
}

/// What happened during one call besides its answer.
pub(crate) struct CallNotes {
    asker: CallAsker,
    declined: Mutex<Vec<String>>,
}

impl InFlight {
    pub(crate) fn new(questions: QuestionSlot) -> Self {
        Self {
            calls: Mutex::default(),
            questions,
        }
    }

    /// Registers a call until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, asker: CallAsker) -> InFlightCall {
        let notes = Arc::new(CallNotes {
            asker,
            declined: Mutex::default(),
        });
        self.lock().push(Arc::clone(&notes));
        InFlightCall {
            in_flight: Arc::clone(self),
            notes,
        }
    }

    /// Whether questions reach a person here (so the capability is offered).
    pub(crate) fn answers_questions(&self) -> bool {
        self.questions.get().is_some()
    }

    /// Puts a question that names no call to the person as the question of the only call in
    /// flight; `None` when nobody answers questions or the call it belongs to is not known.
    pub(crate) async fn ask_for_the_only_call(
        &self,
        message: &str,
        schema: Value,
    ) -> Option<QuestionAnswer> {
        let questions = self.questions.get()?;
        let only = match self.lock().as_slice() {
            [only] => Arc::clone(only),
            _ => return None,
        };
        Some(ask(questions.as_ref(), &only.asker, message, schema).await)
    }

    /// Notes on every running call that the server asked for input and was declined.
    pub(crate) fn note_declined(&self, message: &str) {
        let message: String = message.chars().take(300).collect();
        for call in self.lock().iter() {
            call.declined
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .push(message.clone());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<CallNotes>>> {
        self.calls
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

async fn ask(
    questions: &dyn ToolQuestions,
    asker: &CallAsker,
    message: &str,
    schema: Value,
) -> QuestionAnswer {
    let question = ToolQuestion {
        tool_call_id: asker.tool_call_id.clone(),
        session_id: asker.session_id.clone(),
        name: asker.tool_name.clone(),
        asked_by: format!("MCP server \"{}\"", asker.server),
        message: message.to_owned(),
        requested_schema: schema,
    };
    questions.ask(question, &asker.cancellation).await
}

/// A registered call; leaves the in-flight set when dropped.
pub(crate) struct InFlightCall {
    in_flight: Arc<InFlight>,
    notes: Arc<CallNotes>,
}

impl InFlightCall {
    /// Puts this call's question to the person; `None` when nobody answers questions here.
    pub(crate) async fn ask(&self, message: &str, schema: Value) -> Option<QuestionAnswer> {
        let questions = self.in_flight.questions.get()?;
        Some(ask(questions.as_ref(), &self.notes.asker, message, schema).await)
    }

    /// The questions the server asked during this call that were declined.
    pub(crate) fn declined(&self) -> Vec<String> {
        self.notes
            .declined
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.in_flight
            .lock()
            .retain(|call| !Arc::ptr_eq(call, &self.notes));
    }
}
