//! [`ToolRegistry`]: the catalog snapshot, its configuration and the entry points of the one
//! call pipeline.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::Either;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tool_durable_operations::store::MAX_LEASE;
use tool_durable_operations::{DurableOperationStore, FENCING_CAPABILITY};
use tool_protocol::observability::ObservabilityPolicy;
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallRequest, ToolCallResult, ToolCallSource, ToolDefinition,
};

use crate::durable::{DEFAULT_DURABLE_LEASE_MS, DurableLedger};
use crate::idempotency::{IdempotencyConfig, IdempotencyConfigError, IdempotencyRegistry};
use crate::interaction::ToolInteraction;
use crate::ledger::Ledger;
use crate::mounts::Mounts;
use crate::observer::ToolCallObserver;
use crate::options::{ToolCallOptions, canonical_owner_id};
use crate::pipeline;
use crate::policy::{PolicyDecision, StandardPolicy, ToolPolicy};
use crate::schema::CompiledSchema;
use crate::shutdown::RegistryShutdown;
use crate::tool::{Tool, ToolHandler};
use crate::trace::TraceId;

/// Prefix of the generated execution owner id (`tool-context:<uuid>`).
pub const DEFAULT_OWNER_ID_PREFIX: &str = "tool-context";

/// When arguments are checked against the input schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ValidationMode {
    /// Before the policy runs: invalid arguments return `TOOL_VALIDATION_FAILED` with the
    /// schema issues and never reach approval or the handler.
    #[default]
    Strict,
    /// At dispatch: issues are logged (`tracing` warning) and the handler still runs. A typed
    /// tool ([`Tool::typed`]) runs as long as the arguments still decode into its input type;
    /// arguments that cannot decode return `TOOL_VALIDATION_FAILED` with a message saying warn
    /// mode could not decode them (and the decode error in `details.issues`).
    Warn,
    /// No schema check; the handler gets the arguments as sent.
    Silent,
}

/// A registry cannot be built from this configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A tool name is empty or whitespace.
    #[error("Tool names must be non-empty.")]
    BlankToolName,
    /// Two tools share a name.
    #[error("Tool \"{0}\" is registered more than once.")]
    DuplicateTool(String),
    /// An input schema is not a JSON object schema, or does not compile.
    #[error("Tool \"{tool}\" has an invalid input schema: {reason}")]
    InvalidInputSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// An output schema does not compile.
    #[error("Tool \"{tool}\" has an invalid output schema: {reason}")]
    InvalidOutputSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// The page size is zero.
    #[error("toolListPageSize must be a positive integer.")]
    ZeroPageSize,
    /// The execution owner id is blank, longer than 256 characters or contains NUL.
    #[error("executionOwnerId must be non-blank text of at most 256 characters without NUL.")]
    InvalidOwnerId,
    /// The idempotency configuration is unusable.
    #[error(transparent)]
    Idempotency(#[from] IdempotencyConfigError),
    /// The durable store does not declare the incarnation-revision fencing capability.
    #[error("durableOperationStore must declare incarnation-revision fencing capability.")]
    DurableFencingCapability,
    /// The durable lease is zero or longer than the store accepts.
    #[error(
        "durableOperationLeaseMs must be a positive number of milliseconds of at most 365 days."
    )]
    InvalidDurableLease,
    /// The durable owner id is blank, longer than 256 characters or contains NUL.
    #[error(
        "durableOperationOwnerId must be non-blank text of at most 256 characters without NUL."
    )]
    InvalidDurableOwnerId,
    /// A durable owner id or lease was set without a durable store.
    #[error("durableOperationOwnerId and durableOperationLeaseMs require a durableOperationStore.")]
    DurableOptionWithoutStore,
}

/// A registered tool with its compiled schemas.
pub(crate) struct RegisteredTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) default_policy: Option<PolicyDecision>,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
}

/// Name lookups on every call: keyed by registered names only (a lookup cannot add one), so a
/// fast seeded hash replaces SipHash's flood resistance at no risk.
pub(crate) type NameHasher = foldhash::fast::RandomState;

/// Everything a call needs, frozen when the registry is built.
pub(crate) struct RegistryInner {
    pub(crate) tools: HashMap<String, Arc<RegisteredTool>, NameHasher>,
    /// Visible definitions (allowlist applied) in registration order.
    pub(crate) listed: Vec<ToolDefinition>,
    pub(crate) allowed: Option<HashSet<String, NameHasher>>,
    pub(crate) validation_mode: ValidationMode,
    pub(crate) page_size: Option<usize>,
    pub(crate) policy: Arc<dyn ToolPolicy>,
    pub(crate) interaction: Option<Arc<dyn ToolInteraction>>,
    /// The default bound on a person's approval wait, ms ([`ToolRegistryBuilder::approval_timeout`]).
    pub(crate) approval_timeout_ms: Option<u64>,
    pub(crate) observers: Vec<Arc<dyn ToolCallObserver>>,
    pub(crate) owner_id: String,
    pub(crate) ledger: Ledger,
    pub(crate) idempotency: IdempotencyRegistry,
    pub(crate) shutdown: RegistryShutdown,
    /// Random per registry: a call's trace id is this and its sequence number.
    pub(crate) trace_registry: u64,
    pub(crate) trace_sequence: AtomicU64,
    /// Tools mounted after the build ([`ToolRegistry::mount`]).
    pub(crate) mounts: Mounts,
    /// Records arguments and results on call spans through this policy
    /// ([`ToolRegistryBuilder::record_call_content`]); `None` records neither.
    pub(crate) call_content: Option<ObservabilityPolicy>,
}

impl RegistryInner {
    /// A trace id no other call of any registry shares.
    pub(crate) fn next_trace_id(&self) -> TraceId {
        TraceId::new(
            self.trace_registry,
            self.trace_sequence.fetch_add(1, Ordering::Relaxed),
        )
    }
}

/// The tool registry: one catalog snapshot and one call pipeline for every origin (model, MCP,
/// UI, local agent). Cheap to clone; clones share everything.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use serde_json::{Value, json};
/// use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
/// use tool_protocol::{ModelToolCall, ToolCallError, ToolDefinition};
///
/// let registry = ToolRegistry::builder()
///     .tool(Tool::new(
///         ToolDefinition::new("echo", "Echoes.", json!({"type": "object", "required": ["text"]})),
///         |arguments: Value, _call: ToolInvocation| async move { Ok::<_, ToolCallError>(arguments["text"].clone()) },
///     ))
///     .policy(AllowAll)
///     .build()
///     .unwrap();
/// let call: ModelToolCall = serde_json::from_value(json!({"id": "c1", "name": "echo", "arguments": {"text": "hi"}})).unwrap();
/// let result = registry.execute_model_tool_call(call, ToolCallOptions::default()).await;
/// assert_eq!(result.structured_content, Some(json!("hi")));
/// # });
/// ```
#[derive(Clone)]
pub struct ToolRegistry {
    pub(crate) inner: Arc<RegistryInner>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tool_names())
            .field("validation_mode", &self.inner.validation_mode)
            .field("owner_id", &self.inner.owner_id)
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// Starts a builder.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::default()
    }

    /// Names of the visible tools (allowlist applied): the built ones in registration order,
    /// then the mounted ones ([`Self::mount`]).
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .listed()
            .iter()
            .map(|definition| definition.name.clone())
            .collect()
    }

    /// The definition of a visible tool, built or mounted; `None` for unknown and hidden names.
    pub fn tool_definition(&self, name: &str) -> Option<ToolDefinition> {
        if !self.inner.is_allowed(name) {
            return None;
        }
        self.inner
            .find_tool(name)
            .map(|tool| tool.definition.clone())
    }

    /// Every visible definition (allowlist applied), built then mounted: the complete catalog
    /// that provider exports are derived from.
    pub fn list_all_tools(&self) -> Vec<ToolDefinition> {
        self.inner.listed().into_owned()
    }

    /// The execution owner id recorded in provenance when a call sets none.
    pub fn execution_owner_id(&self) -> &str {
        &self.inner.owner_id
    }

    /// The durable operation store shared by every process, when the registry was built with
    /// one ([`ToolRegistryBuilder::durable_store`]); hosts keep their own durable records
    /// (MCP tasks, say) next to the registry's.
    pub fn durable_store(&self) -> Option<&Arc<DurableOperationStore>> {
        self.inner.ledger.durable_store()
    }

    /// The in-memory idempotency registry (for inspection and [`IdempotencyRegistry::clear`]).
    pub fn idempotency(&self) -> &IdempotencyRegistry {
        &self.inner.idempotency
    }

    /// Runs a tools/call request through the pipeline. The context defaults to `{source: mcp}`.
    /// Never panics and never returns an `Err`: every failure is a result with a coded error.
    pub fn call_tool(
        &self,
        request: ToolCallRequest,
        options: ToolCallOptions,
    ) -> impl Future<Output = ToolCallResult> + Send + '_ {
        let options = options_with_context(options, |context| context.unwrap_or_else(mcp_context));
        pipeline::call(&self.inner, request, options)
    }

    /// Runs a model's tool call: source `model` and mode `agent` unless the context sets them.
    pub fn execute_model_tool_call(
        &self,
        call: ModelToolCall,
        options: ToolCallOptions,
    ) -> impl Future<Output = ToolCallResult> + Send + '_ {
        let options =
            options_with_context(options, |context| context.unwrap_or_default().for_model());
        pipeline::call(&self.inner, ToolCallRequest::from(call), options)
    }

    /// Runs an untrusted JSON tools/call request. A value that is not a valid request returns
    /// `TOOL_VALIDATION_FAILED` (`Invalid tools/call request.`) without any event, keeping its
    /// `id` as the `toolCallId` when that id is a string or number.
    pub fn call_tool_value(
        &self,
        request: &Value,
        options: ToolCallOptions,
    ) -> impl Future<Output = ToolCallResult> + Send + '_ {
        match pipeline::parse_request(request) {
            Ok(request) => Either::Left(self.call_tool(request, options)),
            Err(result) => Either::Right(std::future::ready(*result)),
        }
    }

    /// Shuts the registry down: new calls get `TOOL_REGISTRY_NOT_READY`, in-flight calls end
    /// with `TOOL_EXECUTION_ABORTED` (their handlers' tokens are cancelled and they drain
    /// detached).
    pub fn shutdown(&self) {
        self.inner.shutdown.fire();
    }

    /// Whether [`Self::shutdown`] (or the builder's shutdown token) has fired.
    pub fn is_shut_down(&self) -> bool {
        self.inner.shutdown.is_fired()
    }
}

/// 64 random bits: a v4 UUID's halves combined (each bit position holds a random bit of one).
fn random_u64() -> u64 {
    let (high, low) = uuid::Uuid::new_v4().as_u64_pair();
    high ^ low
}

fn mcp_context() -> ToolCallContext {
    ToolCallContext {
        source: Some(ToolCallSource::Mcp),
        ..ToolCallContext::default()
    }
}

fn options_with_context(
    mut options: ToolCallOptions,
    context: impl FnOnce(Option<ToolCallContext>) -> ToolCallContext,
) -> ToolCallOptions {
    options.context = Some(context(options.context.take()));
    options
}

/// Builds a [`ToolRegistry`]; everything is validated and compiled in [`Self::build`].
#[derive(Default)]
pub struct ToolRegistryBuilder {
    tools: Vec<Tool>,
    allowed: Option<Vec<String>>,
    validation_mode: ValidationMode,
    page_size: Option<usize>,
    policy: Option<Arc<dyn ToolPolicy>>,
    interaction: Option<Arc<dyn ToolInteraction>>,
    approval_timeout: Option<std::time::Duration>,
    observers: Vec<Arc<dyn ToolCallObserver>>,
    owner_id: Option<String>,
    idempotency: IdempotencyConfig,
    shutdown: Option<CancellationToken>,
    durable_store: Option<Arc<DurableOperationStore>>,
    durable_owner_id: Option<String>,
    durable_lease_ms: Option<u64>,
    durable_diagnostics: Option<ObservabilityPolicy>,
    call_content: Option<ObservabilityPolicy>,
}

impl fmt::Debug for ToolRegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistryBuilder")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl ToolRegistryBuilder {
    /// Adds a tool.
    #[must_use]
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds tools.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Restricts discovery, execution and every export to these names (a snapshot).
    #[must_use]
    pub fn allowed_tool_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the validation mode (default strict).
    #[must_use]
    pub fn validation_mode(mut self, mode: ValidationMode) -> Self {
        self.validation_mode = mode;
        self
    }

    /// Pages `list_tools` requests (must be positive).
    #[must_use]
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Sets the policy (default [`StandardPolicy`]).
    #[must_use]
    pub fn policy(mut self, policy: impl ToolPolicy + 'static) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Sets who answers `ask` decisions when a call supplies no interaction of its own.
    #[must_use]
    pub fn interaction(mut self, interaction: impl ToolInteraction + 'static) -> Self {
        self.interaction = Some(Arc::new(interaction));
        self
    }

    /// Bounds every call's wait for a person's approval (unless the call sets its own):
    /// an unanswered approval ends with the retryable `TOOL_APPROVAL_TIMEOUT`, and the time
    /// the person took does not count against the call's timeout. See
    /// [`ToolCallOptions::approval_timeout_ms`](crate::ToolCallOptions::approval_timeout_ms);
    /// at most 2,147,483,647 ms (longer is capped).
    #[must_use]
    pub fn approval_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    /// Adds a lifecycle observer.
    #[must_use]
    pub fn observer(mut self, observer: impl ToolCallObserver + 'static) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// Sets the execution owner id recorded in provenance (default `tool-context:<uuid>`).
    #[must_use]
    pub fn execution_owner_id(mut self, owner_id: impl Into<String>) -> Self {
        self.owner_id = Some(owner_id.into());
        self
    }

    /// Sets idempotency retention, bound and clock.
    #[must_use]
    pub fn idempotency(mut self, config: IdempotencyConfig) -> Self {
        self.idempotency = config;
        self
    }

    /// Shuts the registry down when `token` fires (e.g. the application's shutdown token).
    #[must_use]
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = Some(token);
        self
    }

    /// Claims keyed calls on a durable operation store shared by every process (contract
    /// 2.12): a retry on any of them replays, waits for the lease or asks for reconciliation.
    #[must_use]
    pub fn durable_store(mut self, store: Arc<DurableOperationStore>) -> Self {
        self.durable_store = Some(store);
        self
    }

    /// The owner id written into durable records (default: the execution owner id).
    #[must_use]
    pub fn durable_owner_id(mut self, owner_id: impl Into<String>) -> Self {
        self.durable_owner_id = Some(owner_id.into());
        self
    }

    /// The lease of a durable claim in ms (default [`DEFAULT_DURABLE_LEASE_MS`], positive).
    #[must_use]
    pub fn durable_lease_ms(mut self, lease_ms: u64) -> Self {
        self.durable_lease_ms = Some(lease_ms);
        self
    }

    /// The redaction policy of diagnostics kept in failed and unknown durable records
    /// (default [`ObservabilityPolicy::default`]).
    #[must_use]
    pub fn durable_diagnostic_policy(mut self, policy: ObservabilityPolicy) -> Self {
        self.durable_diagnostics = Some(policy);
        self
    }

    /// Records each call's arguments and result on its `execute_tool` span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`), redacted and bounded by
    /// `policy`. Off by default: spans carry names, ids, decisions and sizes, never content.
    #[must_use]
    pub fn record_call_content(mut self, policy: ObservabilityPolicy) -> Self {
        self.call_content = Some(policy);
        self
    }

    /// The durable layer, validated: capability, owner id and lease.
    fn durable_ledger(&mut self, owner_id: &str) -> Result<Option<DurableLedger>, BuildError> {
        let Some(store) = self.durable_store.take() else {
            if self.durable_owner_id.is_some() || self.durable_lease_ms.is_some() {
                return Err(BuildError::DurableOptionWithoutStore);
            }
            return Ok(None);
        };
        if store.fencing_capability() != FENCING_CAPABILITY {
            return Err(BuildError::DurableFencingCapability);
        }
        let owner_id = match &self.durable_owner_id {
            Some(owner_id) => {
                canonical_owner_id(owner_id).map_err(|_| BuildError::InvalidDurableOwnerId)?
            }
            None => owner_id.to_owned(),
        };
        let lease_ms = self.durable_lease_ms.unwrap_or(DEFAULT_DURABLE_LEASE_MS);
        if lease_ms == 0 || u128::from(lease_ms) > MAX_LEASE.as_millis() {
            return Err(BuildError::InvalidDurableLease);
        }
        Ok(Some(DurableLedger {
            store,
            owner_id,
            lease_ms,
            diagnostics: self.durable_diagnostics.take().unwrap_or_default(),
        }))
    }

    /// Validates the configuration, compiles every schema and freezes the catalog.
    pub fn build(mut self) -> Result<ToolRegistry, BuildError> {
        if self.page_size == Some(0) {
            return Err(BuildError::ZeroPageSize);
        }
        let owner_id = match &self.owner_id {
            Some(owner_id) => {
                canonical_owner_id(owner_id).map_err(|_| BuildError::InvalidOwnerId)?
            }
            None => format!(
                "{DEFAULT_OWNER_ID_PREFIX}:{}",
                uuid::Uuid::new_v4().simple()
            ),
        };
        let durable = self.durable_ledger(&owner_id)?;
        let idempotency = IdempotencyRegistry::new(self.idempotency)?;
        let allowed: Option<HashSet<String, NameHasher>> =
            self.allowed.map(|names| names.into_iter().collect());
        let mut tools = HashMap::with_capacity_and_hasher(self.tools.len(), NameHasher::default());
        let mut listed = Vec::new();
        for tool in self.tools {
            let registered = register(tool)?;
            let name = registered.definition.name.clone();
            if allowed
                .as_ref()
                .is_none_or(|allowed| allowed.contains(&name))
            {
                listed.push(registered.definition.clone());
            }
            if tools.insert(name.clone(), Arc::new(registered)).is_some() {
                return Err(BuildError::DuplicateTool(name));
            }
        }
        let inner = RegistryInner {
            tools,
            listed,
            allowed,
            validation_mode: self.validation_mode,
            page_size: self.page_size,
            policy: self.policy.unwrap_or_else(|| Arc::new(StandardPolicy)),
            interaction: self.interaction,
            approval_timeout_ms: self.approval_timeout.map(|timeout| {
                u64::try_from(timeout.as_millis())
                    .unwrap_or(u64::MAX)
                    .min(crate::options::MAX_TIMEOUT_MS.unsigned_abs())
            }),
            observers: self.observers,
            owner_id,
            ledger: Ledger::new(idempotency.clone(), durable),
            idempotency,
            shutdown: RegistryShutdown::new(self.shutdown),
            trace_registry: random_u64(),
            trace_sequence: AtomicU64::new(0),
            mounts: Mounts::default(),
            call_content: self.call_content,
        };
        Ok(ToolRegistry {
            inner: Arc::new(inner),
        })
    }
}

pub(crate) fn register(tool: Tool) -> Result<RegisteredTool, BuildError> {
    let name = tool.definition.name.clone();
    if name.trim().is_empty() {
        return Err(BuildError::BlankToolName);
    }
    let input_error = |reason: String| BuildError::InvalidInputSchema {
        tool: name.clone(),
        reason,
    };
    let schema = &tool.definition.input_schema;
    if !schema.is_object() {
        return Err(input_error("the schema must be a JSON object".into()));
    }
    if schema.get("type").is_some_and(|kind| kind != "object") {
        return Err(input_error(
            "the schema must describe an object (\"type\": \"object\")".into(),
        ));
    }
    let input = CompiledSchema::compile(schema).map_err(input_error)?;
    let output = tool
        .definition
        .output_schema
        .as_ref()
        .map(|schema| {
            CompiledSchema::compile(schema).map_err(|reason| BuildError::InvalidOutputSchema {
                tool: name.clone(),
                reason,
            })
        })
        .transpose()?;
    Ok(RegisteredTool {
        definition: tool.definition,
        handler: tool.handler,
        default_policy: tool.default_policy,
        input,
        output,
    })
}
