//! The one call pipeline, in the contract's order:
//!
//! request check -> option check -> `started` -> ready -> lookup -> allowlist -> (strict)
//! argument validation -> policy (+ interaction) -> ready -> ledger claim -> handler ->
//! result contract + output schema -> output budget -> ledger terminal record -> `completed` /
//! `failed`; a keyed call the policy asks about claims before the interaction (see
//! `CallRun::claim_asking`).
//!
//! Each stage is a small function returning `Result<_, ToolCallError>`. Waiting stages
//! (policy, interaction, handler, shared execution) race the call signal.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use futures::FutureExt;
use futures::future::Either;
use serde_json::Value;
use tokio::time::Instant;
use tool_protocol::validate::{ValidationIssue, parse_tool_call_request};
use tool_protocol::{
    ProvenanceState, ToolCallContext, ToolCallError, ToolCallEvent, ToolCallEventType,
    ToolCallRequest, ToolCallResult, ToolExecutionProvenance,
};
use tracing::Instrument;

use crate::allowlist::ToolNamePatterns;
use crate::failure;
use crate::frozen::{RegistryInner, ToolRef};
use crate::handler_run::{HandlerOutcome, HandlerPanicked, HandlerRun};
use crate::interaction::{
    ApprovedChanges, InteractionKind, InteractionOutcome, InteractionRequest, ToolInteraction,
};
use crate::ledger::{LedgerClaim, OperationIdentity, Recorded};
use crate::observer::{final_state, notify, used_output_bytes};
use crate::options::{ToolCallOptions, ValidatedOptions, validate_options};
use crate::policy::{PolicyDecision, PolicyRequest};
use crate::registered::RegisteredTool;
use crate::signal::{CallSignal, WaitStage};
use crate::telemetry;
use crate::tool::{HandlerOutput, ToolInvocation};
use crate::trace::TraceId;
use crate::validation::ValidationMode;

/// Parses an untrusted JSON request; the failure result keeps the `id` when it is a string or
/// a number.
pub(crate) fn parse_request(value: &Value) -> Result<ToolCallRequest, Box<ToolCallResult>> {
    parse_tool_call_request(value).map_err(|issues| {
        let id = value
            .get("id")
            .and_then(|id| serde_json::from_value(id.clone()).ok());
        let error = failure::invalid_request(Some(crate::schema::issues_json(&issues)));
        Box::new(ToolCallResult::failure(error).with_tool_call_id(id))
    })
}

/// Runs one call. `options.context` is already defaulted by the entry point.
///
/// A plain function returning the run's future (or the ready rejection) rather than an
/// `async fn` wrapping it: the call future is moved on every await that nests it, and each
/// wrapper layer would add its own copy of the request and options to it. Nothing observable
/// happens before the first poll: the deadline is armed and `started` emitted there.
pub(crate) fn call(
    registry: &RegistryInner,
    request: ToolCallRequest,
    mut options: ToolCallOptions,
) -> impl Future<Output = ToolCallResult> + Send + '_ {
    let caller_span = options.span.take();
    match prepare(registry, request, options) {
        Ok(mut run) => {
            run.span = telemetry::open(caller_span, &run.request.name);
            telemetry::record_start(
                &run.span,
                &telemetry::CallStart {
                    name: &run.request.name,
                    tool_call_id: run.request.id.as_ref(),
                    context: &run.context,
                    trace_id: run.trace_id,
                    timeout_ms: run.options.timeout_ms,
                    max_output_bytes: run.options.max_output_bytes,
                },
            );
            telemetry::record_arguments(
                &run.span,
                registry.call_content.as_ref(),
                run.request.arguments.as_ref(),
            );
            let span = run.span.clone();
            Either::Left(run_future(run, span))
        }
        // Boxed as it was made: the call future holds a pointer, not a result.
        Err(rejected) => Either::Right(std::future::ready(rejected).map(|rejected| *rejected)),
    }
}

/// The run as a future in its span, boxed: every await that nests a future moves it whole,
/// and a few moves of the run's state cost more than one small allocation (the state stays
/// under glibc's 1 KiB per-thread cache limit; see the size test). A disabled span (no
/// subscriber, or filtered out) is not entered on every poll. The block owns the run and
/// awaits it by reference: an `async fn` taking the run by value would hold it twice (its
/// argument and the body's binding).
fn run_future(
    mut run: CallRun<'_>,
    span: tracing::Span,
) -> Pin<Box<impl Future<Output = ToolCallResult> + Send + '_>> {
    let run = async move { run.run().await };
    Box::pin(if span.is_disabled() {
        Either::Left(run)
    } else {
        Either::Right(run.instrument(span))
    })
}

/// The parts of a request the handler's invocation takes (see [`CallRun::hand_over`]).
struct HandedOver {
    arguments: Value,
    tool_name: String,
    context: ToolCallContext,
}

/// How a handler run ended: its outcome or panic, or `Err` when the signal fired first.
type RunOutcome = Result<Result<HandlerOutcome, HandlerPanicked>, ToolCallError>;

/// The run of a request whose name and options pass their checks.
fn prepare(
    registry: &RegistryInner,
    request: ToolCallRequest,
    options: ToolCallOptions,
) -> Result<CallRun<'_>, Box<ToolCallResult>> {
    let rejected = |error, id| Box::new(ToolCallResult::failure(error).with_tool_call_id(id));
    if let Err(error) = check_request(&request) {
        return Err(rejected(error, request.id));
    }
    match validate_options(&options) {
        Ok(validated) => Ok(CallRun::new(registry, request, options, validated)),
        Err(error) => Err(rejected(error, request.id)),
    }
}

fn check_request(request: &ToolCallRequest) -> Result<(), ToolCallError> {
    if request.name.trim().is_empty() {
        Err(failure::invalid_request(None))
    } else {
        Ok(())
    }
}

struct CallRun<'r> {
    registry: &'r RegistryInner,
    request: ToolCallRequest,
    context: ToolCallContext,
    options: ValidatedOptions,
    interaction: Option<Arc<dyn ToolInteraction>>,
    signal: CallSignal<'r>,
    trace_id: TraceId,
    /// Whether observers receive events: only then must the request and context outlive
    /// the handler, so an unobserved call moves them where an observed one clones them.
    observed: bool,
    /// What the result says when a person approved a narrowed call.
    changes_note: Option<Box<str>>,
    /// The call's `execute_tool` span (disabled without a subscriber that wants it).
    span: tracing::Span,
    /// The caller's narrowing of the registry's allowlist.
    allowed_tools: Option<ToolNamePatterns>,
}

impl<'r> CallRun<'r> {
    fn new(
        registry: &'r RegistryInner,
        request: ToolCallRequest,
        options: ToolCallOptions,
        validated: ValidatedOptions,
    ) -> Self {
        let signal = CallSignal::new(
            options.cancellation,
            &registry.shutdown,
            validated.timeout_ms,
            validated
                .approval_timeout_ms
                .or(registry.approval_timeout_ms),
        );
        Self {
            registry,
            request,
            context: options.context.unwrap_or_default(),
            options: validated,
            interaction: options.interaction.or_else(|| registry.interaction.clone()),
            signal,
            trace_id: registry.next_trace_id(),
            observed: !registry.observers.is_empty(),
            changes_note: None,
            span: tracing::Span::none(),
            allowed_tools: options.allowed_tools,
        }
    }

    async fn run(&mut self) -> ToolCallResult {
        self.signal.arm();
        // Only events carry the elapsed time, so an unobserved call never reads the clock.
        let started_at = self.observed.then(Instant::now);
        self.emit(ToolCallEventType::Started, None, started_at);
        let mut result = self.stages().await.unwrap_or_else(ToolCallResult::failure);
        // The result answers this request only, whatever a handler or a replay carried.
        result.tool_call_id = take_unless(self.observed, &mut self.request.id);
        let event_type = if result.is_error() {
            ToolCallEventType::Failed
        } else {
            ToolCallEventType::Completed
        };
        self.emit(event_type, Some(&result), started_at);
        telemetry::record_end(&self.span, self.registry.call_content.as_ref(), &result);
        result
    }

    /// The stages after the option check. Nothing large is held across an await: each
    /// wait's own state lives in its variant of this future alone, and the future is moved
    /// whole on every await that nests it.
    async fn stages(&mut self) -> Result<ToolCallResult, ToolCallError> {
        self.ensure_ready()?;
        let registry = self.registry;
        let tool = lookup(registry, &self.request.name, self.allowed_tools.as_ref())?;
        telemetry::record_tool_type(&self.span, matches!(tool, ToolRef::Mounted(_)));
        self.validate_arguments(&tool)?;
        let decision = self.decide_policy(&tool).await?;
        telemetry::record_policy(&self.span, decision);
        let (claim, changes) = match decision {
            PolicyDecision::Allow => {
                self.ensure_ready()?;
                (self.claim(&tool).await?, None)
            }
            PolicyDecision::Deny => return Err(failure::policy_denied(&self.request.name)),
            // Boxed (as the durable ledger is) so the call future stays as small as the
            // allowed path needs.
            PolicyDecision::Ask => Box::pin(self.claim_asking(&tool)).await?,
        };
        telemetry::record_idempotency(&self.span, claim.telemetry_outcome());
        let claim = match claim {
            LedgerClaim::Replay(waiter) => {
                // Boxed (as the ask path and the durable ledger are) so the call future stays
                // as small as the keyed-less path needs.
                let mut shared = self
                    .signal
                    .race(WaitStage::SharedExecution, Box::pin(waiter.wait()))
                    .await?;
                self.enforce_output_budget(&mut shared);
                return Ok(shared);
            }
            LedgerClaim::Replayed(mut stored) => {
                self.enforce_output_budget(&mut stored);
                return Ok(*stored);
            }
            claim @ (LedgerClaim::Unguarded | LedgerClaim::Owner(_)) => claim,
        };
        // The identity was claimed on the arguments as sent; the handler runs what was approved.
        if let Some(changes) = changes {
            self.request.arguments = Some(changes.arguments);
            self.changes_note = Some(changes.note.into_boxed_str());
        }
        let handed = self.hand_over();
        // A keyed claim may have waited for its store; a keyed-less one never does, so
        // readiness was checked with nothing waited for since.
        let waited = !matches!(claim, LedgerClaim::Unguarded);
        let outcome = match self.start_handler(&tool, waited, handed) {
            Ok(run) => self.signal.race_checked(WaitStage::Handler, run).await,
            Err(stopped) => *stopped,
        };
        let write = match self.record(&tool, claim, outcome) {
            Recorded::Now(answer) => return answer,
            Recorded::Writing(write) => write,
        };
        write.await
    }

    /// The ledger's claim for the call's operation identity (none without a key).
    async fn claim(&self, tool: &RegisteredTool) -> Result<LedgerClaim, ToolCallError> {
        let identity = self.operation_identity(tool.definition.is_read_only())?;
        self.registry
            .ledger
            .claim(identity.as_ref(), &self.request.name, &self.signal)
            .await
    }

    /// The call's answer from the handler's outcome (checked against the output schema and
    /// budget), recorded in the ledger; an interrupted run is recorded as interrupted.
    fn record(
        &self,
        tool: &RegisteredTool,
        claim: LedgerClaim,
        outcome: RunOutcome,
    ) -> Recorded<'_, Result<ToolCallResult, ToolCallError>> {
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(interrupted) => {
                return match self.registry.ledger.record_interrupted(claim, interrupted) {
                    Recorded::Now(error) => Recorded::Now(Err(error)),
                    Recorded::Writing(write) => Recorded::Writing(Box::pin(write.map(Err))),
                };
            }
        };
        let mut result = handler_result(&tool.definition.name, outcome);
        check_output(tool, &mut result);
        if let Some(note) = &self.changes_note {
            result
                .content
                .push(tool_protocol::ToolContent::text(note.as_ref()));
        }
        self.enforce_output_budget(&mut result);
        self.registry
            .ledger
            .record_terminal(claim, result, &self.signal)
    }

    /// What the handler takes from the request: moved out when nothing reads it after the
    /// handler (an unobserved call; errors name the tool by its definition), else copied for
    /// the events.
    fn hand_over(&mut self) -> HandedOver {
        let arguments = take_unless(self.observed, &mut self.request.arguments);
        HandedOver {
            arguments: Value::Object(arguments.unwrap_or_default()),
            tool_name: take_unless(self.observed, &mut self.request.name),
            context: take_unless(self.observed, &mut self.context),
        }
    }

    /// The arguments as sent, `{}` when absent.
    fn raw_arguments(&self) -> Value {
        Value::Object(self.request.arguments.clone().unwrap_or_default())
    }

    /// Validates the arguments as sent (`{}` when absent), lending them to the validator as a
    /// `Value` and putting them back: no copy.
    fn validate_arguments(&mut self, tool: &RegisteredTool) -> Result<(), ToolCallError> {
        let sent = self.request.arguments.is_some();
        let arguments = Value::Object(self.request.arguments.take().unwrap_or_default());
        let checked = self.check_arguments(tool, &arguments);
        if let Value::Object(arguments) = arguments {
            self.request.arguments = sent.then_some(arguments);
        }
        checked
    }

    fn ensure_ready(&self) -> Result<(), ToolCallError> {
        if self.registry.shutdown.is_fired() {
            Err(failure::registry_not_ready())
        } else {
            Ok(())
        }
    }

    fn check_arguments(
        &self,
        tool: &RegisteredTool,
        arguments: &Value,
    ) -> Result<(), ToolCallError> {
        match self.registry.validation_mode {
            ValidationMode::Strict => {
                tool.input
                    .check(arguments)
                    .map_err(|issues| failure::arguments_invalid(&self.request.name, &issues))?;
            }
            ValidationMode::Warn => {
                if let Err(issues) = tool.input.check(arguments) {
                    tracing::warn!(issues = %crate::schema::join_issues(&issues), "tool arguments failed validation; dispatching anyway");
                }
            }
            ValidationMode::Silent => {}
        }
        Ok(())
    }

    /// The claim of a call the policy asks about, and what the person approved.
    ///
    /// A keyed call claims its operation *before* anyone is asked: an operation that already
    /// ran (or is running) replays its outcome without asking again, since it executes
    /// nothing, and one person answers for concurrent retries of one operation. When the
    /// person refuses, or the wait for them ends, the claim is released as unstarted (the
    /// handler never ran), so a later retry of the key asks again. A call without a key is
    /// asked first and claims nothing.
    async fn claim_asking(
        &self,
        tool: &RegisteredTool,
    ) -> Result<(LedgerClaim, Option<Box<ApprovedChanges>>), ToolCallError> {
        if self.options.idempotency_key.is_none() {
            let changes = self.ask(tool).await?;
            self.ensure_ready()?;
            return Ok((LedgerClaim::Unguarded, changes));
        }
        self.ensure_ready()?;
        let claim = self.claim(tool).await?;
        if !matches!(claim, LedgerClaim::Owner(_)) {
            return Ok((claim, None));
        }
        match self.ask(tool).await {
            Ok(changes) => Ok((claim, changes)),
            Err(refused) => Err(
                match self.registry.ledger.release_unstarted(claim, refused) {
                    Recorded::Now(error) => error,
                    Recorded::Writing(write) => write.await,
                },
            ),
        }
    }

    /// Asks the call's interaction about an `ask` decision: `Ok` when the person approved,
    /// with `Some` when they approved a narrowed call (its arguments checked against the input
    /// schema strictly, whatever the mode).
    async fn ask(
        &self,
        tool: &RegisteredTool,
    ) -> Result<Option<Box<ApprovedChanges>>, ToolCallError> {
        let Some(interaction) = &self.interaction else {
            return Err(failure::approval_required(&self.request.name));
        };
        match self.interact(tool, interaction.as_ref()).await? {
            InteractionOutcome::Approved => Ok(None),
            InteractionOutcome::ApprovedWithChanges(changes) => {
                let arguments = Value::Object(changes.arguments.clone());
                tool.input
                    .check(&arguments)
                    .map_err(|issues| failure::arguments_invalid(&self.request.name, &issues))?;
                Ok(Some(changes))
            }
            InteractionOutcome::Denied => Err(failure::person_denied(&self.request.name)),
            InteractionOutcome::DeniedWith(denial) => Err(failure::denied_with(&denial)),
        }
    }

    async fn decide_policy(&self, tool: &RegisteredTool) -> Result<PolicyDecision, ToolCallError> {
        let request = PolicyRequest {
            request: &self.request,
            definition: &tool.definition,
            context: &self.context,
            tool_default: tool.default_policy,
            cancellation: self.signal.cancellation(),
        };
        // A policy that decides without waiting is asked first, under the same rules as a
        // race: a call the signal already stopped never asks. Readiness was checked just
        // before (`stages`), so only the caller's cancellation is left to check.
        self.signal.check_caller(WaitStage::Policy)?;
        let policy = &self.registry.policy;
        let decided =
            match std::panic::catch_unwind(AssertUnwindSafe(|| policy.decide_now(&request))) {
                Ok(Some(decided)) => Ok(decided),
                Ok(None) => {
                    let decision = AssertUnwindSafe(policy.decide(request)).catch_unwind();
                    self.signal.race(WaitStage::Policy, decision).await?
                }
                Err(panic) => Err(panic),
            };
        match decided {
            Ok(Ok(decision)) => Ok(decision),
            Ok(Err(error)) => Err(failure::policy_failed(&error.to_string())),
            Err(_) => Err(failure::policy_failed("Tool policy panicked.")),
        }
    }

    async fn interact(
        &self,
        tool: &RegisteredTool,
        interaction: &dyn ToolInteraction,
    ) -> Result<InteractionOutcome, ToolCallError> {
        let request = InteractionRequest {
            kind: InteractionKind::Approval,
            tool_call_id: self.request.id.clone(),
            name: self.request.name.clone(),
            description: tool.definition.description.clone(),
            arguments: self.request.arguments.clone().unwrap_or_default(),
            context: self.context.clone(),
        };
        let outcome =
            AssertUnwindSafe(interaction.interact(&request, self.signal.cancellation().token()))
                .catch_unwind();
        let asked_at = Instant::now();
        let answered = self.signal.race(WaitStage::Interaction, outcome).await;
        if self.signal.bounds_approval() {
            self.signal.pause_deadline_for(asked_at);
        }
        telemetry::record_approval(
            &self.span,
            approval_outcome(&answered),
            u64::try_from(asked_at.elapsed().as_millis()).unwrap_or(u64::MAX),
        );
        match answered? {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(error)) => Err(failure::policy_failed(&error.to_string())),
            Err(_) => Err(failure::policy_failed("Tool interaction handler panicked.")),
        }
    }

    /// The session-scoped identity over the raw (unvalidated) arguments, when a key is set.
    fn operation_identity(
        &self,
        read_only: bool,
    ) -> Result<Option<OperationIdentity>, ToolCallError> {
        let Some(key) = &self.options.idempotency_key else {
            return Ok(None);
        };
        let raw = self.raw_arguments();
        OperationIdentity::new(
            &self.request.name,
            key,
            self.context.session_id.as_deref(),
            &raw,
            read_only,
        )
        .map(Some)
    }

    /// Calls the handler once the signal is checked (only the caller's cancellation unless the
    /// claim `waited`: readiness was checked just before it); the caller races the run it gives, so
    /// the handler is polled in place and a call that waits for it to the end spawns no task.
    /// Its first poll happens inside that race, so a handler that needs no waiting completes
    /// even under a zero timeout, and one that has to wait (even one scheduler turn) does not.
    /// When the call stops waiting (timeout, cancellation, shutdown, or the call's future
    /// dropped), [`HandlerRun`]'s drop moves the handler to its own task to drain detached
    /// with its cancellation fired. `Err` (boxed, so the call future does not carry it beside
    /// the run) when the signal had fired or the handler panicked at its call.
    fn start_handler(
        &self,
        tool: &RegisteredTool,
        waited: bool,
        handed: HandedOver,
    ) -> Result<HandlerRun, Box<RunOutcome>> {
        let checked = if waited {
            self.signal.check(WaitStage::Handler)
        } else {
            self.signal.check_caller(WaitStage::Handler)
        };
        if let Err(interrupted) = checked {
            return Err(Box::new(Err(interrupted)));
        }
        let invocation = ToolInvocation {
            tool_name: handed.tool_name,
            context: handed.context,
            tool_call_id: self.request.id.clone(),
            trace_id: self.trace_id,
            cancellation: self.signal.cancellation().clone(),
        };
        HandlerRun::start(
            &tool.handler,
            handed.arguments,
            invocation,
            self.registry.validation_mode,
        )
        .map_err(|panicked| Box::new(Ok(Err(panicked))))
    }

    /// Replaces a result over the call's output budget with the output-limit failure.
    fn enforce_output_budget(&self, result: &mut ToolCallResult) {
        let Some(max) = self.options.max_output_bytes else {
            return;
        };
        let used = u64::try_from(result.output_bytes()).unwrap_or(u64::MAX);
        if used > max {
            *result = ToolCallResult::failure(failure::output_limit(max, used));
        }
    }

    /// The owner recorded in provenance: the call's own, else the registry's.
    fn owner_id(&self) -> &str {
        self.options
            .execution_owner_id
            .as_deref()
            .unwrap_or(&self.registry.owner_id)
    }

    fn emit(
        &self,
        event_type: ToolCallEventType,
        result: Option<&ToolCallResult>,
        started_at: Option<Instant>,
    ) {
        let Some(started_at) = started_at else {
            return;
        };
        let elapsed_ms = u64::try_from(started_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (state, used, elapsed, duration) = match result {
            None => (ProvenanceState::Pending, 0, 0, None),
            Some(result) => (
                final_state(result),
                used_output_bytes(result),
                elapsed_ms,
                Some(elapsed_ms),
            ),
        };
        let event = ToolCallEvent {
            event_type,
            trace_id: self.trace_id.into(),
            tool_call_id: self.request.id.clone(),
            name: self.request.name.clone(),
            request: self.request.clone(),
            context: Some(self.context.clone()),
            timestamp: unix_ms(),
            provenance: ToolExecutionProvenance {
                owner_id: self.owner_id().to_owned(),
                state,
                timeout_ms: self.options.timeout_ms,
                max_output_bytes: self.options.max_output_bytes,
                used_output_bytes: used,
                elapsed_ms: elapsed,
            },
            duration_ms: duration,
            result: result.cloned(),
        };
        notify(&self.registry.observers, &event);
    }
}

/// How a person's answer reads on the span: what they chose, or `unanswered` when the wait
/// ended first (timeout, cancellation, shutdown) or the interaction failed.
fn approval_outcome<E, P>(
    answered: &Result<Result<Result<InteractionOutcome, E>, P>, ToolCallError>,
) -> &'static str {
    match answered {
        Ok(Ok(Ok(InteractionOutcome::Approved))) => "approved",
        Ok(Ok(Ok(InteractionOutcome::ApprovedWithChanges(_)))) => "approved_with_changes",
        Ok(Ok(Ok(InteractionOutcome::Denied | InteractionOutcome::DeniedWith(_)))) => "denied",
        _ => "unanswered",
    }
}

/// Exact name lookup (built tools, then mounted ones), then the registry's allowlist and the
/// caller's. A built tool is borrowed from the registry, which outlives the call; a mounted one
/// is held by the call.
fn lookup<'r>(
    registry: &'r RegistryInner,
    name: &str,
    allowed_tools: Option<&ToolNamePatterns>,
) -> Result<ToolRef<'r>, ToolCallError> {
    let tool = registry
        .find_tool(name)
        .ok_or_else(|| failure::not_found(name))?;
    let caller_allows = allowed_tools.is_none_or(|patterns| patterns.matches(name));
    if !registry.is_allowed(name) || !caller_allows {
        return Err(failure::not_allowed(name));
    }
    Ok(tool)
}

/// The result of a handler run that finished; `name` is the tool's.
fn handler_result(name: &str, outcome: Result<HandlerOutcome, HandlerPanicked>) -> ToolCallResult {
    match outcome {
        Ok(Ok(HandlerOutput::Value(value))) => ToolCallResult::success(value),
        Ok(Ok(HandlerOutput::Empty)) => ToolCallResult::empty_success(),
        Ok(Ok(HandlerOutput::Result(result))) => match result_contract_violation(&result) {
            None => result,
            Some(reason) => ToolCallResult::failure(failure::result_invalid(name, reason)),
        },
        Ok(Err(error)) => ToolCallResult::failure(failure::from_handler(error, name)),
        Err(HandlerPanicked) => ToolCallResult::failure(failure::handler_panicked(name)),
    }
}

/// A success of a tool with an output schema must carry matching structured content: else
/// it becomes the output-invalid failure.
fn check_output(tool: &RegisteredTool, result: &mut ToolCallResult) {
    let Some(schema) = &tool.output else {
        return;
    };
    if result.is_error() {
        return;
    }
    let checked = match &result.structured_content {
        Some(structured) => schema.check(structured),
        None => Err(vec![ValidationIssue::new(
            "",
            "the result has no structured content",
        )]),
    };
    if let Err(issues) = checked {
        *result = ToolCallResult::failure(failure::output_invalid(&tool.definition.name, &issues));
    }
}

/// `value` itself when nothing reads it afterwards (`observed` is false), else a copy.
fn take_unless<T: Clone + Default>(observed: bool, value: &mut T) -> T {
    if observed {
        value.clone()
    } else {
        std::mem::take(value)
    }
}

/// Why a handler-built result breaks the result contract, if it does.
fn result_contract_violation(result: &ToolCallResult) -> Option<&'static str> {
    let error = result.error.as_ref()?;
    if error.code.trim().is_empty() {
        Some("error.code must be non-empty")
    } else if error.message.trim().is_empty() {
        Some("error.message must be non-empty")
    } else {
        None
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AllowAll, Tool, ToolRegistry};
    use serde_json::json;
    use tool_protocol::ToolDefinition;

    /// glibc serves blocks up to 1,032 bytes from its per-thread cache; a larger run state
    /// would make the box that saves the moves cost more than they do.
    #[test]
    fn the_boxed_run_state_stays_in_the_small_allocation_cache() {
        let tool = Tool::new(
            ToolDefinition::new("echo", "Echoes.", json!({"type": "object"})),
            |arguments: Value, _: ToolInvocation| async move { Ok::<_, ToolCallError>(arguments) },
        );
        let registry = ToolRegistry::builder()
            .tool(tool)
            .policy(AllowAll)
            .build()
            .unwrap();
        let request = ToolCallRequest::new("echo", serde_json::Map::new());
        let Ok(run) = prepare(&registry.inner, request, ToolCallOptions::default()) else {
            panic!("a valid request prepares");
        };
        let boxed = run_future(run, tracing::Span::none());
        let size = std::mem::size_of_val(&*boxed);
        assert!(size <= 1_024, "the run state is {size} bytes");
    }
}
