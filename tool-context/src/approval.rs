//! An approval queue: calls that a policy answered with `ask` wait here until a person
//! approves or denies them.
//!
//! The queue publishes only [`ToolApprovalSnapshot`]s (argument names and a bounded preview of
//! explicitly safe arguments), never raw argument values. A queue configured with
//! [`ApprovalQueueConfig::review_arguments`] also keeps each pending call's arguments in memory,
//! outside every snapshot, so a host can compute what the call would change for the person
//! deciding ([`ApprovalQueue::pending_call`]); they go when the approval settles. Cancellation of the call, dropping
//! the waiting future, [`ApprovalQueue::deny_all`] and [`ApprovalQueue::close`] all resolve to
//! deny and remove the entry: a pending approval can never turn into a silent allow.
//!
//! A host answers approvals by watching [`ApprovalQueue::subscribe`] (the whole list, for a
//! UI) or by taking them one at a time with [`ApprovalQueue::next_pending`] (a CLI loop).

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;
use tool_durable_operations::{Clock, SystemClock};
use tool_protocol::ToolApprovalSnapshot;
use tool_protocol::approval::ApprovalCall;

use serde_json::{Map, Value};

use crate::interaction::{
    ApprovedChanges, Denial, InteractionOutcome, InteractionRequest, ToolInteraction,
};
use crate::policy::BoxError;

/// Id prefix used when a call has no correlation id.
pub const DEFAULT_APPROVAL_ID_PREFIX: &str = "approval";
/// Most approvals that may wait at once; a request beyond it is denied immediately.
pub const MAX_PENDING_APPROVALS: usize = 256;

/// A person's answer to one pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Allow,
    /// Refuse the call.
    Deny,
}

/// The pending approvals, newest first.
pub type ApprovalSnapshot = Arc<Vec<ToolApprovalSnapshot>>;

/// Configuration of an [`ApprovalQueue`].
#[derive(Debug, Clone)]
pub struct ApprovalQueueConfig {
    /// Prefix of ids for calls without a correlation id (`<prefix>-<ms>-<seq>`).
    pub id_prefix: String,
    /// Arguments whose scalar values may be previewed to the person deciding.
    pub safe_argument_names: Vec<String>,
    /// Source of `createdAt`.
    pub clock: Arc<dyn Clock>,
    /// Keep each pending call's name and arguments in memory (never in a snapshot, event or
    /// record) for [`ApprovalQueue::pending_call`], until the approval settles.
    pub review_arguments: bool,
}

impl Default for ApprovalQueueConfig {
    fn default() -> Self {
        Self {
            id_prefix: DEFAULT_APPROVAL_ID_PREFIX.to_owned(),
            safe_argument_names: Vec::new(),
            clock: Arc::new(SystemClock),
            review_arguments: false,
        }
    }
}

/// A queue of pending approvals with an observable snapshot. Cheap to clone; clones share one
/// queue. It implements [`ToolInteraction`], so it can be a registry's interaction handler.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use serde_json::json;
/// use tokio_util::sync::CancellationToken;
/// use tool_context::{ApprovalDecision, ApprovalQueue};
/// use tool_protocol::approval::ApprovalCall;
///
/// let queue = ApprovalQueue::new();
/// let waiter = {
///     let queue = queue.clone();
///     tokio::spawn(async move {
///         let args = json!({"path": "index.html"});
///         let call = ApprovalCall { name: "workspace.deleteFile", arguments: args.as_object(), ..ApprovalCall::default() };
///         queue.request(call, &CancellationToken::new()).await
///     })
/// };
/// let mut updates = queue.subscribe();
/// let pending = updates.wait_for(|pending| !pending.is_empty()).await.unwrap().clone();
/// assert!(queue.resolve(&pending[0].id, ApprovalDecision::Allow));
/// assert_eq!(waiter.await.unwrap(), ApprovalDecision::Allow);
/// assert!(queue.snapshot().is_empty());
/// # });
/// ```
#[derive(Clone)]
pub struct ApprovalQueue {
    inner: Arc<QueueInner>,
}

struct QueueInner {
    config: ApprovalQueueConfig,
    state: Mutex<QueueState>,
    updates: watch::Sender<ApprovalSnapshot>,
}

#[derive(Default)]
struct QueueState {
    next_sequence: u64,
    /// Oldest first; the published snapshot is reversed.
    pending: Vec<PendingApproval>,
    closed: bool,
}

struct PendingApproval {
    snapshot: ToolApprovalSnapshot,
    responder: oneshot::Sender<Answer>,
    /// The call under review (only with `review_arguments`).
    call: Option<Arc<PendingCall>>,
    /// Whether the waiter can run a narrowed call ([`ApprovalQueue::resolve_with_changes`]).
    accepts_changes: bool,
    /// Whether [`ApprovalQueue::next_pending`] has returned it (it does so once).
    handed_out: bool,
}

/// A person's answer as the waiter receives it.
enum Answer {
    Decision(ApprovalDecision),
    Changes(Box<ApprovedChanges>),
    /// Refused by the host, saying why ([`ApprovalQueue::deny_with`]).
    Refused(Box<Denial>),
}

/// A pending call as a host reviews it: never part of a snapshot. Made by the queue only.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PendingCall {
    /// Tool name.
    pub name: String,
    /// The validated arguments (`{}` when none were sent).
    pub arguments: Map<String, Value>,
    /// Whether the waiter can run a narrowed call ([`ApprovalQueue::resolve_with_changes`]):
    /// `false` for calls asked with [`ApprovalQueue::request`], whose runner may be another
    /// process (a host should not present them as changes to its own state).
    pub accepts_changes: bool,
}

impl fmt::Debug for ApprovalQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalQueue")
            .field("pending", &self.snapshot().len())
            .finish()
    }
}

impl Default for ApprovalQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl ApprovalQueue {
    /// A queue with the default id prefix and no safe argument names.
    pub fn new() -> Self {
        Self::with_config(ApprovalQueueConfig::default())
    }

    /// A queue with `config`.
    pub fn with_config(config: ApprovalQueueConfig) -> Self {
        let (updates, _) = watch::channel(Arc::new(Vec::new()));
        Self {
            inner: Arc::new(QueueInner {
                config,
                state: Mutex::new(QueueState::default()),
                updates,
            }),
        }
    }

    /// The pending approvals, newest first.
    pub fn snapshot(&self) -> ApprovalSnapshot {
        self.inner.updates.borrow().clone()
    }

    /// A receiver that sees every change of the pending list (enqueue and each resolution).
    pub fn subscribe(&self) -> watch::Receiver<ApprovalSnapshot> {
        self.inner.updates.subscribe()
    }

    /// Queues `call` now, when called (so the approval is visible in [`Self::snapshot`] before
    /// the returned future is first polled), and returns a future that waits for the decision.
    /// The decision is [`ApprovalDecision::Deny`] at once when `cancellation` has already
    /// fired, the queue is closed or full (nothing is queued then), and deny when
    /// `cancellation` fires while pending. The future borrows neither `call` nor
    /// `cancellation`; dropping it, polled or not, removes the entry.
    pub fn request<'q>(
        &'q self,
        call: ApprovalCall<'_>,
        cancellation: &CancellationToken,
    ) -> impl Future<Output = ApprovalDecision> + Send + 'q {
        let answer = self.wait_for_answer(call, cancellation, false);
        async move {
            match answer.await {
                Answer::Decision(decision) => decision,
                // Not queued as accepting changes, so never answered with them.
                Answer::Changes(_) | Answer::Refused(_) => ApprovalDecision::Deny,
            }
        }
    }

    fn wait_for_answer<'q>(
        &'q self,
        call: ApprovalCall<'_>,
        cancellation: &CancellationToken,
        accepts_changes: bool,
    ) -> impl Future<Output = Answer> + Send + 'q {
        let queued = if cancellation.is_cancelled() {
            None
        } else {
            self.enqueue(call, accepts_changes)
        };
        let waiting = queued.map(|(id, answer)| (PendingRemoval { queue: self, id }, answer));
        let cancellation = cancellation.clone();
        async move {
            let denied = Answer::Decision(ApprovalDecision::Deny);
            let Some((_removal, answer)) = waiting else {
                return denied;
            };
            tokio::select! {
                biased;
                () = cancellation.cancelled() => denied,
                answer = answer => answer.unwrap_or(denied),
            }
        }
    }

    /// Waits for the next pending approval and hands it out: the oldest pending approval that
    /// no earlier `next_pending` returned, or the first one queued after this call. `None` once
    /// the queue is closed ([`Self::close`]), so a loop that answers approvals ends with it.
    ///
    /// - **Arrival order, each approval once.** Every queued approval is returned by exactly
    ///   one `next_pending` call, across all clones of the queue: two consumers share the work,
    ///   they never both get the same approval. An approval settled (cancelled, dropped,
    ///   resolved elsewhere) before anyone took it is skipped.
    /// - **Nothing is missed.** The wait starts watching the queue before it looks, so an
    ///   approval that arrives between looking and waiting wakes it.
    /// - **Cancel-safe.** An approval is taken in the same step that returns it, so dropping
    ///   the future (in a `select!`, a timeout) never loses one.
    /// - **Taking is not answering.** The approval stays pending, in [`Self::snapshot`] and
    ///   for [`Self::resolve`], until someone answers it or its call goes away; an approval
    ///   taken and never answered is not handed out again (its call's cancellation or timeout
    ///   still ends it). Use [`Self::pending_call`] with its `id` to see the arguments.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tokio_util::sync::CancellationToken;
    /// use tool_context::{ApprovalDecision, ApprovalQueue};
    /// use tool_protocol::approval::ApprovalCall;
    ///
    /// let queue = ApprovalQueue::new();
    /// // A person (here: a rule) answering approvals in a loop until the queue closes.
    /// let answering = {
    ///     let queue = queue.clone();
    ///     tokio::spawn(async move {
    ///         let mut answered = Vec::new();
    ///         while let Some(approval) = queue.next_pending().await {
    ///             let decision = if approval.name == "fs.read" { ApprovalDecision::Allow } else { ApprovalDecision::Deny };
    ///             queue.resolve(&approval.id, decision);
    ///             answered.push(approval.name);
    ///         }
    ///         answered
    ///     })
    /// };
    /// let token = CancellationToken::new();
    /// let read = queue.request(ApprovalCall { name: "fs.read", ..ApprovalCall::default() }, &token);
    /// assert_eq!(read.await, ApprovalDecision::Allow);
    /// let delete = queue.request(ApprovalCall { name: "fs.delete", ..ApprovalCall::default() }, &token);
    /// assert_eq!(delete.await, ApprovalDecision::Deny);
    /// queue.close();
    /// assert_eq!(answering.await.unwrap(), ["fs.read", "fs.delete"]);
    /// # });
    /// ```
    pub async fn next_pending(&self) -> Option<ToolApprovalSnapshot> {
        // Subscribing marks the current list as seen; every later enqueue (or close) publishes
        // after it, so `changed` cannot sleep through an approval that `take_next` missed.
        let mut updates = self.subscribe();
        loop {
            match self.take_next() {
                Taken::Approval(snapshot) => return Some(*snapshot),
                Taken::Closed => return None,
                Taken::Nothing => {}
            }
            if updates.changed().await.is_err() {
                return None;
            }
        }
    }

    /// Answers every approval with `decide`, on a task of its own, until the queue closes; the
    /// task's output is how many it answered. One line for a fixed policy, a bot or a test.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tokio_util::sync::CancellationToken;
    /// use tool_context::{ApprovalDecision, ApprovalQueue};
    /// use tool_protocol::approval::ApprovalCall;
    ///
    /// let queue = ApprovalQueue::new();
    /// let answering = queue.answer_with(|approval| {
    ///     if approval.name.ends_with(".read") { ApprovalDecision::Allow } else { ApprovalDecision::Deny }
    /// });
    /// let token = CancellationToken::new();
    /// let read = queue.request(ApprovalCall { name: "fs.read", ..ApprovalCall::default() }, &token);
    /// assert_eq!(read.await, ApprovalDecision::Allow);
    /// let delete = queue.request(ApprovalCall { name: "fs.delete", ..ApprovalCall::default() }, &token);
    /// assert_eq!(delete.await, ApprovalDecision::Deny);
    /// queue.close();
    /// assert_eq!(answering.await.unwrap(), 2);
    /// # });
    /// ```
    pub fn answer_with<F>(&self, mut decide: F) -> tokio::task::JoinHandle<usize>
    where
        F: FnMut(&ToolApprovalSnapshot) -> ApprovalDecision + Send + 'static,
    {
        let queue = self.clone();
        tokio::spawn(async move {
            let mut answered = 0;
            while let Some(approval) = queue.next_pending().await {
                if queue.resolve(&approval.id, decide(&approval)) {
                    answered += 1;
                }
            }
            answered
        })
    }

    /// Marks the oldest approval not yet handed out as handed out and returns it.
    fn take_next(&self) -> Taken {
        let mut state = self.lock();
        if state.closed {
            return Taken::Closed;
        }
        match state.pending.iter_mut().find(|entry| !entry.handed_out) {
            Some(entry) => {
                entry.handed_out = true;
                Taken::Approval(Box::new(entry.snapshot.clone()))
            }
            None => Taken::Nothing,
        }
    }

    /// The pending call `id` as sent, for review; `None` when it is unknown, settled, or the
    /// queue does not keep arguments ([`ApprovalQueueConfig::review_arguments`]).
    pub fn pending_call(&self, id: &str) -> Option<Arc<PendingCall>> {
        let state = self.lock();
        let entry = state.pending.iter().find(|entry| entry.snapshot.id == id)?;
        entry.call.clone()
    }

    /// Approves the pending call `id` with `changes` (a narrowed call). `false` (and no
    /// effect) when it is unknown, settled, or its waiter cannot run a changed call (only
    /// calls asked through the queue's [`ToolInteraction`] can; [`Self::request`] cannot).
    pub fn resolve_with_changes(&self, id: &str, changes: ApprovedChanges) -> bool {
        self.settle(
            id,
            |entry| entry.accepts_changes,
            Answer::Changes(Box::new(changes)),
        )
    }

    /// Resolves the pending approval `id`; `false` (and no effect) when it is unknown or
    /// already settled.
    pub fn resolve(&self, id: &str, decision: ApprovalDecision) -> bool {
        self.settle(id, |_| true, Answer::Decision(decision))
    }

    fn settle(&self, id: &str, accepts: impl Fn(&PendingApproval) -> bool, answer: Answer) -> bool {
        let mut state = self.lock();
        let Some(index) = state
            .pending
            .iter()
            .position(|entry| entry.snapshot.id == id && accepts(entry))
        else {
            return false;
        };
        let entry = state.pending.remove(index);
        self.publish(&state);
        drop(state);
        // The waiter may have gone away at this instant; the entry is removed either way.
        let _ = entry.responder.send(answer);
        true
    }

    /// Denies pending approval `id` on the host's behalf, saying why (`denial` becomes the
    /// call's `TOOL_POLICY_DENIED` message and details; [`Self::request`] waiters see a plain
    /// deny). Returns whether it was pending.
    pub fn deny_with(&self, id: &str, denial: Denial) -> bool {
        self.settle(id, |_| true, Answer::Refused(Box::new(denial)))
    }

    /// Denies every pending approval; returns how many were denied.
    pub fn deny_all(&self) -> usize {
        let mut state = self.lock();
        let entries = std::mem::take(&mut state.pending);
        self.publish(&state);
        drop(state);
        let count = entries.len();
        for entry in entries {
            let _ = entry
                .responder
                .send(Answer::Decision(ApprovalDecision::Deny));
        }
        count
    }

    /// Denies every pending approval and every later request (shutdown).
    pub fn close(&self) -> usize {
        self.lock().closed = true;
        self.deny_all()
    }

    fn enqueue(
        &self,
        call: ApprovalCall<'_>,
        accepts_changes: bool,
    ) -> Option<(String, oneshot::Receiver<Answer>)> {
        let now = self.inner.config.clock.now_ms();
        let mut state = self.lock();
        if state.closed || state.pending.len() >= MAX_PENDING_APPROVALS {
            return None;
        }
        let base = call.tool_call_id.as_ref().map_or_else(
            || format!("{}-{now}", self.inner.config.id_prefix),
            ToString::to_string,
        );
        let id = format!("{base}-{}", state.next_sequence);
        state.next_sequence += 1;
        let review = self.inner.config.review_arguments.then(|| {
            Arc::new(PendingCall {
                name: call.name.to_owned(),
                arguments: call.arguments.cloned().unwrap_or_default(),
                accepts_changes,
            })
        });
        let snapshot = ToolApprovalSnapshot::new(
            id.clone(),
            call,
            &self.inner.config.safe_argument_names,
            now,
        );
        let (responder, answer) = oneshot::channel();
        state.pending.push(PendingApproval {
            snapshot,
            responder,
            call: review,
            accepts_changes,
            handed_out: false,
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

    fn publish(&self, state: &QueueState) {
        let newest_first = state
            .pending
            .iter()
            .rev()
            .map(|entry| entry.snapshot.clone())
            .collect();
        self.inner.updates.send_replace(Arc::new(newest_first));
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A panic while holding the lock cannot leave the list half-edited (every edit is one
        // Vec operation), so the state stays usable.
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// What [`ApprovalQueue::take_next`] found.
enum Taken {
    Approval(Box<ToolApprovalSnapshot>),
    Nothing,
    Closed,
}

/// Removes a still-pending entry when its waiter finishes or is dropped.
struct PendingRemoval<'a> {
    queue: &'a ApprovalQueue,
    id: String,
}

impl Drop for PendingRemoval<'_> {
    fn drop(&mut self) {
        self.queue.remove(&self.id);
    }
}

#[async_trait]
impl ToolInteraction for ApprovalQueue {
    async fn interact(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        Ok(
            match self
                .wait_for_answer(request.approval_call(), cancellation, true)
                .await
            {
                Answer::Decision(ApprovalDecision::Allow) => InteractionOutcome::Approved,
                Answer::Decision(ApprovalDecision::Deny) => InteractionOutcome::Denied,
                Answer::Changes(changes) => InteractionOutcome::ApprovedWithChanges(changes),
                Answer::Refused(denial) => InteractionOutcome::DeniedWith(denial),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_durable_operations::ManualClock;
    use tool_protocol::ToolCallId;

    #[tokio::test]
    async fn a_request_is_queued_when_called_not_when_first_polled() {
        let queue = ApprovalQueue::new();
        let call = || ApprovalCall {
            name: "fs.delete",
            ..ApprovalCall::default()
        };
        let waiting = {
            // The token and call may be temporaries: the future borrows neither.
            let token = CancellationToken::new();
            queue.request(call(), &token)
        };
        let pending = queue.snapshot();
        assert_eq!(pending.len(), 1, "queued before any poll");
        assert!(queue.resolve(&pending[0].id, ApprovalDecision::Allow));
        assert_eq!(waiting.await, ApprovalDecision::Allow);
        let never_polled = queue.request(call(), &CancellationToken::new());
        assert_eq!(queue.snapshot().len(), 1);
        drop(never_polled);
        assert!(
            queue.snapshot().is_empty(),
            "dropping an unpolled request removes it"
        );
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        let refused = queue.request(call(), &cancelled);
        assert!(queue.snapshot().is_empty(), "nothing queued when cancelled");
        assert_eq!(refused.await, ApprovalDecision::Deny);
    }

    #[tokio::test]
    async fn reviewed_arguments_stay_out_of_snapshots_and_go_when_settled() {
        let queue = ApprovalQueue::with_config(ApprovalQueueConfig {
            review_arguments: true,
            ..ApprovalQueueConfig::default()
        });
        let arguments = json!({"path": "a.txt", "source": "secret text"});
        let request = InteractionRequest {
            kind: crate::interaction::InteractionKind::Approval,
            tool_call_id: None,
            name: "fs.write".into(),
            description: None,
            arguments: arguments.as_object().unwrap().clone(),
            context: tool_protocol::ToolCallContext::default(),
        };
        let token = CancellationToken::new();
        let mut asked = Box::pin(queue.interact(&request, &token));
        assert!(futures::poll!(&mut asked).is_pending());
        let id = queue.snapshot()[0].id.clone();
        let wire = serde_json::to_string(&*queue.snapshot()).unwrap();
        assert!(!wire.contains("secret text"), "{wire}");
        let pending = queue.pending_call(&id).unwrap();
        assert_eq!(
            (pending.name.as_str(), &pending.arguments),
            ("fs.write", arguments.as_object().unwrap())
        );
        let changes = ApprovedChanges {
            arguments: json!({"path": "a.txt", "source": "narrowed"})
                .as_object()
                .unwrap()
                .clone(),
            note: "1 of 2 applied".into(),
        };
        assert!(queue.resolve_with_changes(&id, changes.clone()));
        assert_eq!(
            asked.await.unwrap(),
            InteractionOutcome::ApprovedWithChanges(Box::new(changes.clone()))
        );
        assert!(queue.pending_call(&id).is_none(), "gone once settled");
        // A plain request cannot run a changed call, so it is never answered with one.
        let plain = queue.request(request.approval_call(), &token);
        let id = queue.snapshot()[0].id.clone();
        assert!(!queue.resolve_with_changes(&id, changes));
        assert!(queue.resolve(&id, ApprovalDecision::Allow));
        assert_eq!(plain.await, ApprovalDecision::Allow);
        // The host may refuse on a person's behalf, saying why; a plain request sees a deny.
        let mut refused = Box::pin(queue.interact(&request, &token));
        assert!(futures::poll!(&mut refused).is_pending());
        let id = queue.snapshot()[0].id.clone();
        let denial = Denial::new("expired", Map::new());
        assert!(queue.deny_with(&id, denial.clone()));
        assert!(!queue.deny_with(&id, denial.clone()), "settled once");
        assert_eq!(
            refused.await.unwrap(),
            InteractionOutcome::DeniedWith(Box::new(denial.clone()))
        );
        let plain = queue.request(request.approval_call(), &token);
        assert!(queue.deny_with(&queue.snapshot()[0].id.clone(), denial));
        assert_eq!(plain.await, ApprovalDecision::Deny);
        // Without review_arguments nothing is kept.
        let blind = ApprovalQueue::new();
        let _waiting = blind.request(request.approval_call(), &token);
        assert!(blind.pending_call(&blind.snapshot()[0].id).is_none());
    }

    #[tokio::test]
    async fn ids_are_call_id_or_prefix_and_time_plus_one_sequence() {
        let config = ApprovalQueueConfig {
            id_prefix: "p".into(),
            clock: Arc::new(ManualClock::new(5)),
            ..ApprovalQueueConfig::default()
        };
        let queue = ApprovalQueue::with_config(config);
        let token = CancellationToken::new();
        let arguments = Map::new();
        let ids: [Option<ToolCallId>; 5] = [
            Some("x-0".into()),
            Some("x".into()),
            Some("x".into()),
            Some(7u64.into()),
            None,
        ];
        let mut waiters = Vec::new();
        for id in ids {
            let call = ApprovalCall {
                tool_call_id: id,
                name: "t",
                arguments: Some(&arguments),
                ..ApprovalCall::default()
            };
            let mut waiter = Box::pin(queue.request(call, &token));
            assert!(futures::poll!(&mut waiter).is_pending());
            waiters.push(waiter);
        }
        let newest_first: Vec<String> = queue
            .snapshot()
            .iter()
            .map(|entry| entry.id.clone())
            .collect();
        assert_eq!(newest_first, ["p-5-4", "7-3", "x-2", "x-1", "x-0-0"]);
        assert!(queue.resolve("x-1", ApprovalDecision::Allow));
        assert_eq!(waiters.remove(1).await, ApprovalDecision::Allow);
        drop(waiters.remove(0));
        let left: Vec<String> = queue
            .snapshot()
            .iter()
            .map(|entry| entry.id.clone())
            .collect();
        assert_eq!(
            left,
            ["p-5-4", "7-3", "x-2"],
            "dropping a waiter removes its entry"
        );
        assert_eq!(queue.deny_all(), 3);
        for waiter in waiters {
            assert_eq!(waiter.await, ApprovalDecision::Deny);
        }
    }
}
