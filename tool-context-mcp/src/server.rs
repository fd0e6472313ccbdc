//! [`McpToolServer`]: an rmcp [`ServerHandler`] over a [`ToolRegistry`].

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CustomRequest, CustomResult,
    ErrorCode, GetTaskParams, GetTaskResult, Implementation, ListToolsResult, NumberOrString,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscriptionFilter, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context::{ToolCallOptions, ToolNamePatterns, ToolRegistry};
use tool_durable_operations::{DurableOperationStore, MemoryBackend};
use tool_protocol::paging::{decode_offset_cursor, encode_offset_cursor};
use tool_protocol::{
    ToolCallContext, ToolCallId, ToolCallMode, ToolCallRequest, ToolCallSource, codes,
};
use tracing::{Instrument, Span};

use crate::approval::{ApprovalDesk, McpApproval, explain_denial};
use crate::change_preview::ChangePreview;
use crate::convert::{mcp_result, mcp_tool};
use crate::discovery::{
    MAX_PROTOCOL_VERSION_WITH_INITIALIZE, supported_protocol_versions, uses_request_lifecycle,
};
use crate::idempotency;
use crate::input_required::{StateSealing, approval_request, awaiting_client, client_round};
use crate::lifecycle::{CallIdentity, CallObserver, FinishGuard, McpCall};
use crate::list_changes;
use crate::principal::{self, Principal};
use crate::progress::{PROGRESS_INTERVAL, Progress};
use crate::request_state::{DEFAULT_REQUEST_STATE_TTL, RequestStateKey, StateSeal};
use crate::result_links::{self, LinkStore, MAX_RESULT_SIZE_META_KEY, ResultLinks, ResultSizes};
use crate::tasks::{self, DEFAULT_TASK_AFTER, HandOff, TaskOrigin, TaskRef, TaskTokens, Tasks};
use crate::telemetry::ServerRequest;

/// Tools per `tools/list` page unless configured otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 50;
/// Prefix of the session ids given to MCP sessions (`mcp-<uuid>`).
pub const SESSION_ID_PREFIX: &str = "mcp";
/// Owner of the requests unless configured ([`McpToolServer::with_request_owner`]).
pub const DEFAULT_REQUEST_OWNER: &str = "mcp";

/// Serves one [`ToolRegistry`] to MCP clients: `tools/list` (paged canonical definitions) and
/// `tools/call` (the registry's one pipeline, with `source: mcp` and one session id per MCP
/// session). Cheap to clone.
///
/// - An unknown tool (or one hidden by the allowlist) and a malformed request are JSON-RPC
///   errors `-32602`; `data.code` carries `TOOL_NOT_FOUND` / `TOOL_VALIDATION_FAILED`.
/// - Every other failure is a result with `isError: true` and the coded error in
///   `_meta["tool-context/error"]`, never in `structuredContent` (see [`crate::convert`]).
/// - `notifications/cancelled` cancels the call (`TOOL_CANCELLED`).
/// - Approvals go to an attended [`ApprovalDesk`], else to the client by elicitation, else the
///   call is denied (see [`crate::approval`]).
/// - Protocol 2026-07-28 is served next to 2025-11-25 ([`crate::discovery`]): approvals there
///   are `input_required` rounds with a sealed, single-use `requestState`
///   ([`Self::with_request_state_key`], [`crate::input_required`]), and a task-capable client's
///   long call becomes a durable task ([`Self::with_task_after`], [`crate::tasks`]).
///
/// ```
/// use tool_context::ToolRegistry;
/// use tool_context_mcp::McpToolServer;
/// let server = McpToolServer::new(ToolRegistry::builder().build().unwrap()).with_page_size(20);
/// let other = server.new_session();
/// assert_ne!(server.session_id(), other.session_id());
/// ```
#[derive(Clone)]
pub struct McpToolServer {
    registry: ToolRegistry,
    settings: Arc<Settings>,
    session_id: String,
}

/// Configuration shared by every session of a server.
#[derive(Clone)]
struct Settings {
    page_size: usize,
    desk: Option<ApprovalDesk>,
    safe_argument_names: Arc<[String]>,
    change_preview: Option<Arc<dyn ChangePreview>>,
    call_options: ToolCallOptions,
    progress_interval: Duration,
    implementation: Implementation,
    instructions: Option<String>,
    observer: Option<Arc<dyn CallObserver>>,
    approval_help: Option<String>,
    stateless: StatelessSettings,
    result_links: Option<ResultLinks>,
    result_sizes: ResultSizes,
}

/// What the 2026-07-28 lifecycle adds: sealed approval states, tasks and their store.
#[derive(Clone)]
struct StatelessSettings {
    seal: (RequestStateKey, Duration),
    owner: String,
    durable: Option<Arc<DurableOperationStore>>,
    /// Used when neither the server nor the registry names a durable store.
    memory: Arc<DurableOperationStore>,
    task_after: Duration,
    tasks: Tasks,
}

impl fmt::Debug for McpToolServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolServer")
            .field("session_id", &self.session_id)
            .field("page_size", &self.settings.page_size)
            .field("desk", &self.settings.desk)
            .finish_non_exhaustive()
    }
}

impl McpToolServer {
    /// A server for `registry` with [`DEFAULT_PAGE_SIZE`], no approval desk and a fresh
    /// session id.
    pub fn new(registry: ToolRegistry) -> Self {
        let settings = Settings {
            page_size: DEFAULT_PAGE_SIZE,
            desk: None,
            safe_argument_names: Arc::from(Vec::new()),
            change_preview: None,
            call_options: ToolCallOptions::default(),
            progress_interval: PROGRESS_INTERVAL,
            implementation: Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
            instructions: None,
            observer: None,
            approval_help: None,
            stateless: StatelessSettings {
                seal: (RequestStateKey::generate(), DEFAULT_REQUEST_STATE_TTL),
                owner: DEFAULT_REQUEST_OWNER.to_owned(),
                durable: None,
                memory: Arc::new(DurableOperationStore::new(Arc::new(MemoryBackend::new()))),
                task_after: DEFAULT_TASK_AFTER,
                tasks: Tasks::default(),
            },
            result_links: None,
            result_sizes: ResultSizes::default(),
        };
        Self {
            registry,
            settings: Arc::new(settings),
            session_id: new_session_id(),
        }
    }

    /// The same server for a new MCP session: shared registry and settings, a new session id.
    /// Transports call this once per connection.
    #[must_use]
    pub fn new_session(&self) -> Self {
        Self {
            registry: self.registry.clone(),
            settings: Arc::clone(&self.settings),
            session_id: new_session_id(),
        }
    }

    /// The session id calls of this session carry in their context.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The served registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Tools per `tools/list` page (clamped to at least 1).
    #[must_use]
    pub fn with_page_size(self, page_size: usize) -> Self {
        self.configure(|settings| settings.page_size = page_size.max(1))
    }

    /// Asks `desk` about approvals whenever it is attended.
    #[must_use]
    pub fn with_approval_desk(self, desk: ApprovalDesk) -> Self {
        self.configure(|settings| settings.desk = Some(desk))
    }

    /// Adds what a call would change (bounded, secret-naming lines hidden: see
    /// [`crate::change_preview`]) to the confirmation a client is asked, on both protocol
    /// revisions.
    #[must_use]
    pub fn with_change_preview(self, preview: impl ChangePreview + 'static) -> Self {
        let preview: Arc<dyn ChangePreview> = Arc::new(preview);
        self.configure(|settings| settings.change_preview = Some(preview))
    }

    /// Arguments whose scalar values the elicitation message may preview (as in the approval
    /// queue); other arguments are shown by name only.
    #[must_use]
    pub fn with_safe_argument_names<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.configure(|settings| settings.safe_argument_names = Arc::from(names))
    }

    /// Options every call starts from (timeout, output budget, owner id). The context,
    /// cancellation and interaction are always set per call.
    #[must_use]
    pub fn with_call_options(self, options: ToolCallOptions) -> Self {
        self.configure(|settings| settings.call_options = options)
    }

    /// Time between progress heartbeats of a running call (default [`PROGRESS_INTERVAL`]).
    #[must_use]
    pub fn with_progress_interval(self, interval: Duration) -> Self {
        self.configure(|settings| {
            settings.progress_interval = interval.max(Duration::from_millis(1))
        })
    }

    /// Name and version reported in `initialize`.
    #[must_use]
    pub fn with_implementation(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let implementation = Implementation::new(name.into(), version.into());
        self.configure(|settings| settings.implementation = implementation)
    }

    /// Instructions reported in `initialize`.
    #[must_use]
    pub fn with_instructions(self, instructions: impl Into<String>) -> Self {
        let instructions = instructions.into();
        self.configure(|settings| settings.instructions = Some(instructions))
    }

    /// Tells `observer` about every call's lifecycle (see [`crate::lifecycle`]).
    #[must_use]
    pub fn with_call_observer(self, observer: impl CallObserver + 'static) -> Self {
        let observer: Arc<dyn CallObserver> = Arc::new(observer);
        self.configure(|settings| settings.observer = Some(observer))
    }

    /// The host's own way to approve calls, named in the denial of a call nobody could be asked
    /// about (see [`crate::approval::unavailable_denial`]), e.g. "run `studio mcp --approve-with
    /// URL`".
    #[must_use]
    pub fn with_approval_help(self, help: impl Into<String>) -> Self {
        let help = help.into();
        self.configure(|settings| settings.approval_help = Some(help))
    }

    /// The key that seals approval `requestState`s (protocol 2026-07-28; default: a random key
    /// per server). Hosts given the same key accept each other's states, across restarts too.
    #[must_use]
    pub fn with_request_state_key(self, key: RequestStateKey) -> Self {
        self.configure(|settings| settings.stateless.seal.0 = key)
    }

    /// How long an `input_required` approval stays answerable (default
    /// [`DEFAULT_REQUEST_STATE_TTL`]).
    #[must_use]
    pub fn with_request_state_ttl(self, ttl: Duration) -> Self {
        self.configure(|settings| settings.stateless.seal.1 = ttl)
    }

    /// Who requests without an authenticated [`Principal`] belong to (default
    /// [`DEFAULT_REQUEST_OWNER`]): their approval states and tasks are bound to it. A request
    /// carrying a principal (see [`crate::principal`]) belongs to that principal instead.
    #[must_use]
    pub fn with_request_owner(self, owner: impl Into<String>) -> Self {
        let owner = owner.into();
        self.configure(|settings| settings.stateless.owner = owner)
    }

    /// The durable store of tasks and of the approval replay guard (default: the registry's
    /// durable store, else one in memory).
    #[must_use]
    pub fn with_durable_store(self, store: Arc<DurableOperationStore>) -> Self {
        self.configure(|settings| settings.stateless.durable = Some(store))
    }

    /// How long a call of a task-capable 2026-07-28 client runs before it becomes a task
    /// (default [`DEFAULT_TASK_AFTER`]).
    #[must_use]
    pub fn with_task_after(self, after: Duration) -> Self {
        self.configure(|settings| settings.stateless.task_after = after)
    }

    /// Sends results longer than a host should take whole as their start plus a
    /// `resource_link` to the whole text, kept in the durable store (see
    /// [`crate::result_links`]); the server then offers `resources/read`.
    #[must_use]
    pub fn with_result_links(self, links: ResultLinks) -> Self {
        self.configure(|settings| settings.result_links = Some(links))
    }

    /// Announces `_meta["anthropic/maxResultSizeChars"]: chars` on the tools matching `tools`:
    /// hosts may take that many characters of their results whole, so they are linked only
    /// past it, and their output budget is at least `4 × chars` bytes. The first matching
    /// announcement counts.
    #[must_use]
    pub fn with_max_result_size_chars(self, tools: ToolNamePatterns, chars: u64) -> Self {
        self.configure(|settings| settings.result_sizes.push(tools, chars))
    }

    /// The output budget of a call of `tool`: the configured one, raised so that results the
    /// server links or announces fit.
    fn output_budget(&self, tool: &str) -> Option<i64> {
        let configured = self.settings.call_options.max_output_bytes;
        let announced = self
            .settings
            .result_sizes
            .of(tool)
            .map(|chars| chars.saturating_mul(4));
        let floor = match &self.settings.result_links {
            Some(links) => Some(links.max_stored_bytes.max(announced.unwrap_or(0))),
            None => announced.filter(|_| configured.is_some()),
        };
        let floor = floor.map(|bytes| i64::try_from(bytes).unwrap_or(i64::MAX));
        match (configured, floor) {
            (Some(configured), Some(floor)) => Some(configured.max(floor)),
            (configured, floor) => configured.or(floor),
        }
    }

    /// `result` as sent to the client: linked when it is too long (see
    /// [`Self::with_result_links`]).
    async fn sent_result(
        &self,
        result: tool_protocol::ToolCallResult,
        tool: &str,
        owner: &str,
    ) -> rmcp::model::CallToolResult {
        let Some(links) = &self.settings.result_links else {
            return mcp_result(result);
        };
        let inline = self
            .settings
            .result_sizes
            .of(tool)
            .map_or(links.inline_chars, |chars| {
                usize::try_from(chars).unwrap_or(usize::MAX)
            });
        let kept = LinkStore {
            store: self.store(),
            owner,
            host: self.registry.execution_owner_id(),
        };
        result_links::link_if_large(result, tool, inline, links, kept).await
    }

    fn store(&self) -> &DurableOperationStore {
        let stateless = &self.settings.stateless;
        stateless
            .durable
            .as_deref()
            .or(self.registry.durable_store().map(Arc::as_ref))
            .unwrap_or(&stateless.memory)
    }

    fn seal(&self) -> StateSeal {
        let (key, ttl) = &self.settings.stateless.seal;
        StateSeal::new(key, *ttl)
    }

    /// Who `context`'s request belongs to: its authenticated principal, else the configured
    /// owner.
    fn owner(&self, context: &RequestContext<RoleServer>) -> String {
        principal::of_request(context).map_or_else(
            || self.settings.stateless.owner.clone(),
            Principal::owner_id,
        )
    }

    /// The tools `context`'s principal may see and call (`None`: every tool).
    fn allowed_tools(context: &RequestContext<RoleServer>) -> Option<ToolNamePatterns> {
        principal::of_request(context).map(|principal| principal.tools.clone())
    }

    async fn describe_change(
        &self,
        tool: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<String> {
        let preview = self.settings.change_preview.as_ref()?;
        let empty = serde_json::Map::new();
        preview.describe(tool, arguments.unwrap_or(&empty)).await
    }

    fn configure(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    /// One page of the catalog the caller may see. The cursor is the registry's opaque offset
    /// cursor (over that caller's catalog).
    fn page(
        &self,
        cursor: Option<&str>,
        allowed: Option<&ToolNamePatterns>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = self.registry.list_all_tools();
        if let Some(allowed) = allowed {
            tools.retain(|tool| allowed.matches(&tool.name));
        }
        let start = match cursor {
            None => 0,
            Some(cursor) => {
                decode_offset_cursor(cursor, tools.len()).map_err(|_| invalid_cursor())?
            }
        };
        let end = start
            .saturating_add(self.settings.page_size)
            .min(tools.len());
        let listed = tools[start..end].iter().map(|tool| self.listed_tool(tool));
        let mut page = ListToolsResult::with_all_items(listed.collect());
        page.next_cursor = (end < tools.len()).then(|| encode_offset_cursor(end));
        Ok(page)
    }

    /// A catalog entry, with the result size hosts may take whole when one is announced.
    fn listed_tool(&self, definition: &tool_protocol::ToolDefinition) -> rmcp::model::Tool {
        let mut tool = mcp_tool(definition);
        if let Some(chars) = self.settings.result_sizes.of(&definition.name) {
            tool.meta
                .get_or_insert_with(rmcp::model::MetaObject::new)
                .0
                .insert(MAX_RESULT_SIZE_META_KEY.to_owned(), chars.into());
        }
        tool
    }

    /// The context of a call in this session; an authenticated caller is named in
    /// `metadata.principal` (`{subject, issuer?}`) so tools and audit see who asked.
    fn call_context(&self, principal: Option<&Principal>) -> ToolCallContext {
        let metadata = principal.map(|principal| {
            let mut named = serde_json::Map::new();
            named.insert("subject".into(), principal.subject.clone().into());
            if let Some(issuer) = &principal.issuer {
                named.insert("issuer".into(), issuer.clone().into());
            }
            serde_json::Map::from_iter([("principal".to_owned(), named.into())])
        });
        ToolCallContext {
            source: Some(ToolCallSource::Mcp),
            mode: Some(ToolCallMode::Agent),
            session_id: Some(self.session_id.clone()),
            metadata,
            ..ToolCallContext::default()
        }
    }

    /// A call of a task-capable 2026-07-28 client may become a task; every other call runs in
    /// the request.
    async fn dispatch_call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        span: Span,
    ) -> Result<CallToolResponse, McpError> {
        let may_become_task = uses_request_lifecycle(&context)
            && context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
        if !may_become_task {
            // A child token: the host may cancel this call without closing the request context.
            let cancellation = context.ct.child_token();
            return self.run_call(params, context, cancellation, span).await;
        }
        // The task's own token: once handed off, only `tasks/cancel` (or shutdown) stops it.
        let cancellation = CancellationToken::new();
        let request = context.ct.clone();
        let (server, name) = (self.clone(), params.name.to_string());
        let owner = self.owner(&context);
        // A bad key is refused by the call itself, at once, before any hand-off.
        let key = idempotency::key_of_request(&params, &context)
            .ok()
            .flatten();
        let call = {
            let cancellation = cancellation.clone();
            async move { server.run_call(params, context, cancellation, span).await }
        };
        let origin = TaskOrigin {
            owner: &owner,
            tool: &name,
            host: self.registry.execution_owner_id(),
            key: key.as_deref(),
        };
        self.settings
            .stateless
            .tasks
            .run_or_hand_off(
                HandOff {
                    store: self.store(),
                    origin,
                    after: self.settings.stateless.task_after,
                },
                TaskTokens {
                    task: cancellation,
                    request,
                },
                call,
            )
            .await
    }

    async fn run_call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        cancellation: CancellationToken,
        span: Span,
    ) -> Result<CallToolResponse, McpError> {
        let name = params.name.to_string();
        let allowed = Self::allowed_tools(&context);
        let hidden = allowed.as_ref().is_some_and(|tools| !tools.matches(&name));
        if hidden || self.registry.tool_definition(&name).is_none() {
            return Err(unknown_tool(&name));
        }
        let owner = self.owner(&context);
        let key = match idempotency::key_of_request(&params, &context) {
            Ok(key) => key,
            Err(refused) => {
                let refused = tool_protocol::ToolCallResult::failure(refused);
                return Ok(self.sent_result(refused, &name, &owner).await.into());
            }
        };
        let seal = self.seal();
        let sealing = StateSealing {
            seal: &seal,
            store: self.store(),
            owner: &owner,
        };
        let round = client_round(&params, &context, &sealing, key.is_some()).await?;
        let progress = Progress::new(context.peer.clone(), context.meta.get_progress_token());
        let call = McpCall::start(
            CallIdentity {
                session_id: self.session_id.clone(),
                tool: name.clone(),
                tool_call_id: tool_call_id(&context.id),
            },
            context
                .peer
                .peer_info()
                .map(|info| info.client_info.name.clone()),
            cancellation.clone(),
            progress.clone(),
            self.settings.observer.clone(),
        );
        let _unfinished = FinishGuard(call.clone());
        let approval = Arc::new(
            McpApproval::new(
                self.settings.desk.clone(),
                context.peer.clone(),
                progress.clone(),
                call.clone(),
                Arc::clone(&self.settings.safe_argument_names),
            )
            .with_client_round(round)
            .with_change_preview(self.settings.change_preview.clone()),
        );
        let arguments = params.arguments.clone();
        let cancelled = cancellation.clone();
        let mut call_context = self.call_context(principal::of_request(&context));
        if key.is_some() {
            // A retry comes on a new connection (2025-11-25) or with no session at all
            // (2026-07-28): the key is scoped by who calls, not by the transport's session.
            call_context.session_id = Some(idempotency::scope(&owner));
        }
        let mut options = self
            .settings
            .call_options
            .clone()
            .with_context(call_context)
            .with_cancellation(cancellation)
            .with_interaction(approval.clone())
            .with_span(span);
        if let Some(allowed) = allowed {
            options = options.with_allowed_tools(allowed);
        }
        if let Some(budget) = self.output_budget(&name) {
            options = options.with_max_output_bytes(budget);
        }
        let keyed = key.is_some();
        if let Some(key) = key {
            options = options.with_idempotency_key(key);
        }
        let request = ToolCallRequest {
            id: Some(call.tool_call_id().clone()),
            name: name.clone(),
            arguments: params.arguments,
        };
        let running = CancellationToken::new();
        progress.heartbeat(
            format!("Running \"{name}\"."),
            self.settings.progress_interval,
            running.clone(),
        );
        let result = if keyed {
            idempotency::call_waiting_for_pending(&self.registry, request, options, &cancelled)
                .await
        } else {
            self.registry.call_tool(request, options).await
        };
        running.cancel();
        if approval.asked_client() {
            call.finish(&awaiting_client(&name)).await;
            // The call did not run, so the change is described from the state it would apply to.
            let change = self.describe_change(&name, arguments.as_ref()).await;
            let asked = approval_request(&name, arguments.as_ref(), change, &sealing);
            return Ok(asked.into());
        }
        let result = explain_denial(
            result,
            approval.route(),
            &name,
            self.settings.approval_help.as_deref(),
        );
        call.finish(&result).await;
        Ok(self.sent_result(result, &name, &owner).await.into())
    }
}

impl ServerHandler for McpToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        if self.settings.result_links.is_some() {
            capabilities.resources = Some(rmcp::model::ResourcesCapability::default());
        }
        capabilities
            .experimental
            .get_or_insert_with(Default::default)
            .insert(
                idempotency::IDEMPOTENCY_CAPABILITY.to_owned(),
                idempotency::capability(),
            );
        let config = ServerConfig::new(capabilities)
            .with_protocol_version(MAX_PROTOCOL_VERSION_WITH_INITIALIZE)
            .with_server_info(self.settings.implementation.clone());
        match &self.settings.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(supported_protocol_versions())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        list_changes::notify_session(context.peer, self.registry.catalog_changes());
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let tools = SubscriptionFilter::builder().tools_list_changed().build();
        Some(requested.intersection(&tools))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if context.accepted().tools_list_changed == Some(true) {
            let changes = self.registry.catalog_changes();
            list_changes::notify_subscription(context.sink(), changes, context.cancelled()).await;
        } else {
            context.cancelled().await;
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let cursor = request
            .as_ref()
            .and_then(|request| request.cursor.as_deref());
        let allowed = Self::allowed_tools(&context);
        self.traced("tools/list", &context, async {
            self.page(cursor, allowed.as_ref())
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let traced = ServerRequest::start(
            "tools/call",
            Some(&request.name),
            &context,
            &self.session_id,
        );
        let span = traced.span().clone();
        let outcome = self
            .dispatch_call(request, context, span.clone())
            .instrument(span)
            .await;
        traced.finish(&outcome, is_tool_error(&outcome));
        outcome
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let Some(links) = &self.settings.result_links else {
            return Err(McpError::method_not_found::<
                rmcp::model::ReadResourceRequestMethod,
            >());
        };
        let owner = self.owner(&context);
        let answer = result_links::read(self.store(), &owner, &request.uri, links.ttl);
        let read = self.traced("resources/read", &context, answer).await?;
        Ok(read.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let owner = self.owner(&context);
        let answer = tasks::get(
            self.store(),
            TaskRef {
                owner: &owner,
                task_id: &request.task_id,
            },
        );
        self.traced("tasks/get", &context, answer).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let owner = self.owner(&context);
        let answer = tasks::update(
            self.store(),
            TaskRef {
                owner: &owner,
                task_id: &request.task_id,
            },
        );
        self.traced("tasks/update", &context, answer).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tasks = &self.settings.stateless.tasks;
        let owner = self.owner(&context);
        let answer = tasks.cancel(
            self.store(),
            TaskRef {
                owner: &owner,
                task_id: &request.task_id,
            },
        );
        self.traced("tasks/cancel", &context, answer).await
    }

    /// A `tools/*` request whose params did not parse reaches here: it is malformed (`-32602`),
    /// not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if let Some(answer) = self.legacy_task_request(&request, &context).await {
            return answer.map(CustomResult::new);
        }
        Err(match request.method.as_str() {
            "tools/call" | "tools/list" => malformed_request(&request.method),
            _ => McpError::new(ErrorCode::METHOD_NOT_FOUND, request.method, None),
        })
    }
}

impl McpToolServer {
    /// Serves a request in its `{method}` server span, recording how it ended.
    async fn traced<T>(
        &self,
        method: &'static str,
        context: &RequestContext<RoleServer>,
        answer: impl Future<Output = Result<T, McpError>>,
    ) -> Result<T, McpError> {
        let traced = ServerRequest::start(method, None, context, &self.session_id);
        let outcome = answer.instrument(traced.span().clone()).await;
        traced.finish(&outcome, false);
        outcome
    }

    /// `tasks/list` and `tasks/result`, which rmcp does not parse (see [`crate::tasks`]).
    async fn legacy_task_request(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<serde_json::Value, McpError>> {
        let params = request.params.clone().unwrap_or_default();
        let text = |field: &str| params.get(field).and_then(serde_json::Value::as_str);
        let (store, owner) = (self.store(), self.owner(context));
        match request.method.as_str() {
            "tasks/list" => Some(tasks::list(store, &owner, text("cursor")).await),
            "tasks/result" => Some(match text("taskId") {
                Some(task_id) => {
                    tasks::result(
                        store,
                        TaskRef {
                            owner: &owner,
                            task_id,
                        },
                        &context.ct,
                    )
                    .await
                }
                None => Err(malformed_request(&request.method)),
            }),
            _ => None,
        }
    }
}

/// Whether a call answered with a tool error (`isError`).
fn is_tool_error(outcome: &Result<CallToolResponse, McpError>) -> bool {
    matches!(outcome, Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true))
}

fn new_session_id() -> String {
    format!("{SESSION_ID_PREFIX}-{}", uuid::Uuid::new_v4().simple())
}

fn tool_call_id(id: &NumberOrString) -> ToolCallId {
    match id {
        NumberOrString::Number(number) => ToolCallId::Number((*number).into()),
        NumberOrString::String(text) => ToolCallId::String(text.to_string()),
    }
}

fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown tool: \"{name}\" is not in this server's tools/list."),
        Some(json!({ "code": codes::TOOL_NOT_FOUND, "name": name })),
    )
}

fn malformed_request(method: &str) -> McpError {
    McpError::invalid_params(
        format!("Invalid {method} request: the params do not match the MCP schema."),
        Some(json!({ "code": codes::TOOL_VALIDATION_FAILED })),
    )
}

fn invalid_cursor() -> McpError {
    McpError::invalid_params(
        "Invalid tools/list cursor.",
        Some(json!({ "code": codes::TOOL_VALIDATION_FAILED })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use tool_context::{Tool, ToolInvocation};
    use tool_protocol::{ToolCallError, ToolDefinition};

    fn registry(count: usize) -> ToolRegistry {
        ToolRegistry::builder()
            .tools((0..count).map(|index| {
                Tool::new(
                    ToolDefinition::new(format!("t{index}"), "A tool.", json!({"type": "object"})),
                    |arguments: Value, _call: ToolInvocation| async move {
                        Ok::<_, ToolCallError>(arguments)
                    },
                )
            }))
            .build()
            .unwrap()
    }

    fn names(page: &ListToolsResult) -> Vec<String> {
        page.tools
            .iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    #[test]
    fn pages_follow_opaque_cursors_to_the_exact_end() {
        let server = McpToolServer::new(registry(5)).with_page_size(2);
        let first = server.page(None, None).unwrap();
        assert_eq!(names(&first), ["t0", "t1"]);
        let second = server.page(first.next_cursor.as_deref(), None).unwrap();
        assert_eq!(names(&second), ["t2", "t3"]);
        let last = server.page(second.next_cursor.as_deref(), None).unwrap();
        assert_eq!(names(&last), ["t4"]);
        assert_eq!(last.next_cursor, None);
    }

    #[test]
    fn a_catalog_of_exactly_one_page_has_no_next_cursor() {
        let server = McpToolServer::new(registry(2)).with_page_size(2);
        assert_eq!(server.page(None, None).unwrap().next_cursor, None);
        let over = McpToolServer::new(registry(3)).with_page_size(2);
        assert!(over.page(None, None).unwrap().next_cursor.is_some());
    }

    #[test]
    fn foreign_and_out_of_range_cursors_are_invalid_params() {
        let server = McpToolServer::new(registry(3)).with_page_size(2);
        for cursor in ["garbage", "offset:4", "offset:-1", "offset:01"] {
            let error = server.page(Some(cursor), None).unwrap_err();
            assert_eq!(
                error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{cursor}"
            );
        }
        // The end of the catalog is a valid (empty) page.
        assert!(
            server
                .page(Some("offset:3"), None)
                .unwrap()
                .tools
                .is_empty()
        );
    }

    #[test]
    fn sessions_get_distinct_ids_and_share_settings() {
        let server = McpToolServer::new(registry(1)).with_page_size(7);
        let session = server.new_session();
        assert!(session.session_id().starts_with("mcp-"));
        assert_ne!(session.session_id(), server.session_id());
        assert_eq!(session.settings.page_size, 7);
        assert_eq!(
            session.call_context(None).session_id.as_deref(),
            Some(session.session_id())
        );
        assert_eq!(session.call_context(None).source, Some(ToolCallSource::Mcp));
    }

    #[test]
    fn both_lifecycles_are_offered_and_initialize_stays_on_2025_11_25() {
        let server = McpToolServer::new(registry(1));
        let versions = server.supported_protocol_versions();
        assert_eq!(versions.last(), Some(&ProtocolVersion::V_2026_07_28));
        assert!(versions.contains(&ProtocolVersion::V_2025_11_25));
        assert!(server.get_info().capabilities.supports_tasks());
        assert_eq!(
            server.get_info().protocol_version,
            ProtocolVersion::V_2025_11_25
        );
    }
}
