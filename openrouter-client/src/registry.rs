//! [`RegistryExecutor`]: a `tool-context` [`ToolRegistry`] as the loop's [`ToolExecutor`]
//! (feature `tool-context`).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tool_context::{ToolCallOptions, ToolRegistry};
use tool_protocol::codes::{TOOL_NOT_ALLOWED, TOOL_NOT_FOUND};
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallResult, ToolDefinition,
};

use crate::executor::ToolExecutor;

type NameFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;
type CallOptionsFn = Arc<dyn Fn(&ModelToolCall) -> ToolCallOptions + Send + Sync>;

/// A [`ToolRegistry`] as the loop's [`ToolExecutor`]: every call goes through the registry's
/// one pipeline (allowlist, schema validation, policy and approvals, timeout, output budget,
/// idempotency, events), as a model call (source `model`, mode `agent`, the run's session).
///
/// - [`list_tools`](ToolExecutor::list_tools) is the registry's full listing
///   ([`ToolRegistry::list_all_tools`], mounted tools included), read when each run starts,
///   narrowed by [`Self::only`].
/// - [`call_tool`](ToolExecutor::call_tool) is
///   [`ToolRegistry::execute_model_tool_call`] with the loop's context (plus
///   [`Self::with_metadata`]) and the run's cancellation token, on top of the per-call options
///   of [`Self::with_call_options`].
///
/// A name that [`Self::only`] excludes is never offered and never reaches the pipeline: a
/// call of it fails with `TOOL_NOT_ALLOWED` when the registry has the tool (the code the
/// registry's own allowlist uses for "exists but excluded"), else `TOOL_NOT_FOUND`. (Through
/// the loop such a call does not even get here: the loop answers a name it did not list with
/// `TOOL_NOT_FOUND` itself.)
///
/// No idempotency key is set unless your options set one: the loop's calls are new calls.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use openrouter_tool_loop::{RegistryExecutor, ToolExecutor};
/// use serde_json::{Value, json};
/// use tokio_util::sync::CancellationToken;
/// use tool_context::{Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
/// use tool_protocol::{ModelToolCall, ToolCallContext, ToolCallError, ToolDefinition};
///
/// // Read-only, so the default policy lets a model call it without asking.
/// let echo = |name: &str| Tool::new(
///     ToolDefinition::new(name, "Echoes its arguments.", json!({"type": "object"})),
///     |arguments: Value, _: ToolInvocation| async move { Ok::<_, ToolCallError>(arguments) },
/// ).read_only();
/// let registry = ToolRegistry::builder().tool(echo("notes.read")).tool(echo("admin.reset")).build().unwrap();
/// let executor = RegistryExecutor::new(registry)
///     .only(|name| name.starts_with("notes."))
///     .with_call_options(ToolCallOptions::default().with_timeout_ms(30_000));
///
/// let names: Vec<String> = executor.list_tools().await.into_iter().map(|tool| tool.name).collect();
/// assert_eq!(names, ["notes.read"]);
/// let arguments = json!({"id": 7}).as_object().cloned().unwrap();
/// let call = ModelToolCall::new("call_1", "notes.read", arguments);
/// let result = executor.call_tool(call, ToolCallContext::default(), CancellationToken::new()).await;
/// assert_eq!(result.structured_content, Some(json!({"id": 7})));
/// # });
/// ```
#[derive(Clone)]
pub struct RegistryExecutor {
    registry: ToolRegistry,
    filter: Option<NameFilter>,
    metadata: Map<String, Value>,
    call_options: Option<CallOptionsFn>,
}

impl fmt::Debug for RegistryExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryExecutor")
            .field("registry", &self.registry)
            .field("filtered", &self.filter.is_some())
            .field("metadata", &self.metadata)
            .field("call_options", &self.call_options.is_some())
            .finish()
    }
}

impl RegistryExecutor {
    /// Every visible tool of `registry`, called with default options.
    pub fn new(registry: ToolRegistry) -> Self {
        Self {
            registry,
            filter: None,
            metadata: Map::new(),
            call_options: None,
        }
    }

    /// Offers only the tools whose canonical name passes `filter` (checked at each listing
    /// and each call, so it also covers tools mounted later). Several filters all apply.
    #[must_use]
    pub fn only(mut self, filter: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.filter = Some(match self.filter.take() {
            None => Arc::new(filter),
            Some(earlier) => Arc::new(move |name: &str| earlier(name) && filter(name)),
        });
        self
    }

    /// Adds `metadata` to every call's context metadata (a key already in the loop's context
    /// is replaced). Handlers, policies, approvals and the trace see it.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata.extend(metadata);
        self
    }

    /// Per-call options every call starts from (a timeout, an output budget, an owner id, an
    /// interaction handler). The executor then sets `context` and `cancellation` to the loop's,
    /// replacing the template's. Replaces an earlier [`Self::with_call_options_fn`].
    #[must_use]
    pub fn with_call_options(self, template: ToolCallOptions) -> Self {
        self.with_call_options_fn(move |_| template.clone())
    }

    /// Like [`Self::with_call_options`], computed for each call (by tool name, say; an
    /// idempotency key derived from `call.id` is your choice to make here). The executor then
    /// sets `context` and `cancellation` to the loop's.
    #[must_use]
    pub fn with_call_options_fn(
        mut self,
        options: impl Fn(&ModelToolCall) -> ToolCallOptions + Send + Sync + 'static,
    ) -> Self {
        self.call_options = Some(Arc::new(options));
        self
    }

    /// The registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The metadata added to every call's context.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// Whether the tool named `name` passes [`Self::only`] (whether the registry has it is
    /// another matter).
    pub fn offers(&self, name: &str) -> bool {
        self.filter.as_ref().is_none_or(|filter| filter(name))
    }

    /// The failure of a call that the filter excludes.
    fn excluded(&self, call: &ModelToolCall) -> ToolCallResult {
        let name = &call.name;
        let error = if self.registry.tool_definition(name).is_some() {
            ToolCallError::new(
                TOOL_NOT_ALLOWED,
                format!("Tool \"{name}\" is not offered by this executor"),
            )
        } else {
            ToolCallError::new(
                TOOL_NOT_FOUND,
                format!("Tool \"{name}\" not found in registry"),
            )
        };
        ToolCallResult::failure(error).with_tool_call_id(call.id.clone())
    }
}

#[async_trait]
impl ToolExecutor for RegistryExecutor {
    async fn list_tools(&self) -> Vec<ToolDefinition> {
        let mut tools = self.registry.list_all_tools();
        tools.retain(|tool| self.offers(&tool.name));
        tools
    }

    async fn call_tool(
        &self,
        call: ModelToolCall,
        mut context: ToolCallContext,
        cancel: CancellationToken,
    ) -> ToolCallResult {
        if !self.offers(&call.name) {
            return self.excluded(&call);
        }
        if !self.metadata.is_empty() {
            context
                .metadata
                .get_or_insert_with(Default::default)
                .extend(self.metadata.clone());
        }
        let options = self
            .call_options
            .as_ref()
            .map_or_else(ToolCallOptions::default, |options| options(&call))
            .with_context(context)
            .with_cancellation(cancel);
        self.registry.execute_model_tool_call(call, options).await
    }
}
