//! [`McpToolServer`]: an rmcp [`ServerHandler`] over a [`ToolRegistry`].

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, ListToolsResult, NumberOrString, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context::{ToolCallOptions, ToolRegistry};
use tool_protocol::paging::{decode_offset_cursor, encode_offset_cursor};
use tool_protocol::{
    ToolCallContext, ToolCallId, ToolCallMode, ToolCallRequest, ToolCallSource, codes,
};

use crate::approval::{ApprovalDesk, McpApproval, explain_denial};
use crate::convert::{mcp_result, mcp_tool};
use crate::lifecycle::{CallObserver, FinishGuard, McpCall};
use crate::progress::{PROGRESS_INTERVAL, Progress};

/// Tools per `tools/list` page unless configured otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 50;
/// Prefix of the session ids given to MCP sessions (`mcp-<uuid>`).
pub const SESSION_ID_PREFIX: &str = "mcp";
/// The newest protocol version served. Sessions are negotiated with `initialize`; protocol
/// `2026-07-28` forbids the server-to-client elicitation request approvals rely on, so it is
/// not offered.
pub const MAX_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

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
    call_options: ToolCallOptions,
    progress_interval: Duration,
    implementation: Implementation,
    instructions: Option<String>,
    observer: Option<Arc<dyn CallObserver>>,
    approval_help: Option<String>,
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
            call_options: ToolCallOptions::default(),
            progress_interval: PROGRESS_INTERVAL,
            implementation: Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
            instructions: None,
            observer: None,
            approval_help: None,
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

    fn configure(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    /// One page of the catalog. The cursor is the registry's opaque offset cursor.
    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
        let tools = self.registry.list_all_tools();
        let start = match cursor {
            None => 0,
            Some(cursor) => {
                decode_offset_cursor(cursor, tools.len()).map_err(|_| invalid_cursor())?
            }
        };
        let end = start
            .saturating_add(self.settings.page_size)
            .min(tools.len());
        let mut page =
            ListToolsResult::with_all_items(tools[start..end].iter().map(mcp_tool).collect());
        page.next_cursor = (end < tools.len()).then(|| encode_offset_cursor(end));
        Ok(page)
    }

    fn call_context(&self) -> ToolCallContext {
        ToolCallContext {
            source: Some(ToolCallSource::Mcp),
            mode: Some(ToolCallMode::Agent),
            session_id: Some(self.session_id.clone()),
            ..ToolCallContext::default()
        }
    }

    async fn run_call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = params.name.to_string();
        if self.registry.tool_definition(&name).is_none() {
            return Err(unknown_tool(&name));
        }
        let progress = Progress::new(context.peer.clone(), context.meta.get_progress_token());
        // A child token: the host may cancel this call without closing the request context.
        let cancellation = context.ct.child_token();
        let call = McpCall::start(
            (
                self.session_id.clone(),
                name.clone(),
                tool_call_id(&context.id),
            ),
            context
                .peer
                .peer_info()
                .map(|info| info.client_info.name.clone()),
            cancellation.clone(),
            progress.clone(),
            self.settings.observer.clone(),
        );
        let _unfinished = FinishGuard(call.clone());
        let approval = Arc::new(McpApproval::new(
            self.settings.desk.clone(),
            context.peer.clone(),
            (progress.clone(), call.clone()),
            Arc::clone(&self.settings.safe_argument_names),
        ));
        let options = ToolCallOptions {
            context: Some(self.call_context()),
            cancellation: Some(cancellation),
            interaction: Some(approval.clone()),
            ..self.settings.call_options.clone()
        };
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
        let result = self.registry.call_tool(request, options).await;
        running.cancel();
        let result = explain_denial(
            result,
            approval.route(),
            &name,
            self.settings.approval_help.as_deref(),
        );
        call.finish(&result).await;
        Ok(mcp_result(result).into())
    }
}

impl ServerHandler for McpToolServer {
    fn get_info(&self) -> ServerConfig {
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(MAX_PROTOCOL_VERSION)
            .with_server_info(self.settings.implementation.clone());
        match &self.settings.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&MAX_PROTOCOL_VERSION))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.page(
            request
                .as_ref()
                .and_then(|request| request.cursor.as_deref()),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.run_call(request, context).await
    }

    /// A `tools/*` request whose params did not parse reaches here: it is malformed (`-32602`),
    /// not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(match request.method.as_str() {
            "tools/call" | "tools/list" => malformed_request(&request.method),
            _ => McpError::new(ErrorCode::METHOD_NOT_FOUND, request.method, None),
        })
    }
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
        let first = server.page(None).unwrap();
        assert_eq!(names(&first), ["t0", "t1"]);
        let second = server.page(first.next_cursor.as_deref()).unwrap();
        assert_eq!(names(&second), ["t2", "t3"]);
        let last = server.page(second.next_cursor.as_deref()).unwrap();
        assert_eq!(names(&last), ["t4"]);
        assert_eq!(last.next_cursor, None);
    }

    #[test]
    fn a_catalog_of_exactly_one_page_has_no_next_cursor() {
        let server = McpToolServer::new(registry(2)).with_page_size(2);
        assert_eq!(server.page(None).unwrap().next_cursor, None);
        let over = McpToolServer::new(registry(3)).with_page_size(2);
        assert!(over.page(None).unwrap().next_cursor.is_some());
    }

    #[test]
    fn foreign_and_out_of_range_cursors_are_invalid_params() {
        let server = McpToolServer::new(registry(3)).with_page_size(2);
        for cursor in ["garbage", "offset:4", "offset:-1", "offset:01"] {
            let error = server.page(Some(cursor)).unwrap_err();
            assert_eq!(
                error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{cursor}"
            );
        }
        // The end of the catalog is a valid (empty) page.
        assert!(server.page(Some("offset:3")).unwrap().tools.is_empty());
    }

    #[test]
    fn sessions_get_distinct_ids_and_share_settings() {
        let server = McpToolServer::new(registry(1)).with_page_size(7);
        let session = server.new_session();
        assert!(session.session_id().starts_with("mcp-"));
        assert_ne!(session.session_id(), server.session_id());
        assert_eq!(session.settings.page_size, 7);
        assert_eq!(
            session.call_context().session_id.as_deref(),
            Some(session.session_id())
        );
        assert_eq!(session.call_context().source, Some(ToolCallSource::Mcp));
    }

    #[test]
    fn only_handshake_protocol_versions_are_offered() {
        let server = McpToolServer::new(registry(1));
        let versions = server.supported_protocol_versions();
        assert_eq!(versions.last(), Some(&ProtocolVersion::V_2025_11_25));
        assert!(!versions.contains(&ProtocolVersion::V_2026_07_28));
        assert_eq!(
            server.get_info().protocol_version,
            ProtocolVersion::V_2025_11_25
        );
    }
}
