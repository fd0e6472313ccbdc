//! [`ToolRegistry`]: the catalog snapshot, its configuration and the entry points of the one
//! call pipeline.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use futures::future::Either;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tool_durable_operations::store::MAX_LEASE;
use tool_durable_operations::{DurableOperationStore, FENCING_CAPABILITY};
use tool_protocol::observability::ObservabilityPolicy;
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallRequest, ToolCallResult, ToolCallSource, ToolDefinition,
};

pub use crate::build_error::BuildError;
use crate::durable::{DEFAULT_DURABLE_LEASE_MS, DurableLedger, LeaseTakeover};
use crate::frozen::RegistryInner;
use crate::idempotency::{IdempotencyConfig, IdempotencyRegistry};
use crate::interaction::ToolInteraction;
use crate::ledger::Ledger;
use crate::mounts::{MountReport, Mounts};
use crate::observer::ToolCallObserver;
use crate::options::{ToolCallOptions, canonical_owner_id};
use crate::pipeline;
use crate::policy::{StandardPolicy, ToolPolicy};
use crate::registered::{NameHasher, register};
use crate::shutdown::RegistryShutdown;
use crate::tool::Tool;
pub use crate::validation::ValidationMode;

/// Prefix of the generated execution owner id (`tool-context:<uuid>`).
pub const DEFAULT_OWNER_ID_PREFIX: &str = "tool-context";

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

// Groups of tools added after the build, each swapped whole (see `crate::mounts`).
impl ToolRegistry {
    /// Mounts `tools` as the group `group`, replacing whatever that group held, in one step:
    /// a call sees either the old group or the new one. A tool whose schema does not compile,
    /// whose name is blank, or whose name a built tool, another group or an earlier tool of
    /// this group already has, is skipped and reported; the rest are mounted. Calls already
    /// running on a replaced tool finish on it.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_context::{Tool, ToolInvocation, ToolRegistry};
    /// use tool_protocol::{ToolCallError, ToolDefinition};
    /// let tool = |name: &str, schema: Value| Tool::new(
    ///     ToolDefinition::new(name, "t", schema),
    ///     |_: Value, _: ToolInvocation| async { Ok::<_, ToolCallError>(()) },
    /// );
    /// let registry = ToolRegistry::builder().build().unwrap();
    /// let report = registry.mount("docs", vec![
    ///     tool("docs.search", json!({"type": "object"})),
    ///     tool("docs.broken", json!({"type": "object", "properties": {"q": {"type": 7}}})),
    /// ]);
    /// assert_eq!(report.mounted, ["docs.search"]);
    /// assert_eq!(report.skipped[0].name, "docs.broken");
    /// assert_eq!(registry.tool_names(), ["docs.search"]);
    /// registry.unmount("docs");
    /// assert!(registry.tool_names().is_empty());
    /// ```
    pub fn mount(&self, group: &str, tools: Vec<Tool>) -> MountReport {
        self.inner.mounts.mount(group, tools, &self.inner.tools)
    }

    /// Removes the group `group` and its tools; `false` when no such group was mounted.
    /// Calls already running on its tools finish on them.
    pub fn unmount(&self, group: &str) -> bool {
        self.inner.mounts.unmount(group)
    }

    /// Names of the tools mounted as `group` (allowlist not applied), in mount order.
    pub fn mounted_tool_names(&self, group: &str) -> Vec<String> {
        self.inner.mounts.tool_names(group)
    }

    /// A receiver whose value moves on every [`Self::mount`] and [`Self::unmount`]: an MCP
    /// server sends `notifications/tools/list_changed` from it, a page refreshes its catalog.
    pub fn catalog_changes(&self) -> watch::Receiver<u64> {
        self.inner.mounts.subscribe()
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
    durable_takeover: LeaseTakeover,
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

    /// What a keyed call does when it reclaims a record whose owner's lease expired mid-run
    /// (default [`LeaseTakeover::RunAgain`]; a fleet of hosts whose tools cannot tell whether
    /// they already ran wants [`LeaseTakeover::MarkUnknown`]).
    #[must_use]
    pub fn durable_takeover(mut self, takeover: LeaseTakeover) -> Self {
        self.durable_takeover = takeover;
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
            takeover: self.durable_takeover,
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
