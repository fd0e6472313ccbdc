//! The two places a CLI command can run: a headless workspace opened in this process, or a
//! running studio reached over HTTP.

use std::sync::Arc;

use serde_json::Map;
use tool_protocol::{
    ToolCallContext, ToolCallMode, ToolCallRequest, ToolCallResult, ToolCallSource, ToolDefinition,
};

use super::approval::{ApprovalMode, CliApproval};
use super::remote::RemoteStudio;
use super::{CliError, TOKEN_ENV, Target};
use crate::host::{self, StudioOptions, StudioState};
use tool_context::ToolCallOptions;

/// Session id of calls made from the CLI (groups them in the trace and idempotency scope).
pub const CLI_SESSION_ID: &str = "studio-cli";
/// The tool `--save` runs after a successful mutation.
const SAVE_TOOL: &str = "workspace.saveAll";

/// Where `studio tools` runs its commands.
#[derive(Debug)]
pub enum Backend {
    /// A workspace opened in this process (data directory, optional linked folder).
    Headless {
        /// The studio state (registry, manager, approvals).
        state: Arc<StudioState>,
        /// Whether a folder is linked (so `--save` has somewhere to write).
        folder_linked: bool,
    },
    /// A running studio.
    Remote(RemoteStudio),
}

impl Backend {
    /// Opens the headless workspace or prepares the HTTP client for `--url`.
    pub async fn connect(target: &Target) -> Result<Self, CliError> {
        if let Some(url) = &target.url {
            return Ok(Self::Remote(RemoteStudio::new(url, remote_token(target))?));
        }
        let options = StudioOptions {
            port: 0,
            data_dir: target.data_dir.clone(),
            folder: target.folder.clone(),
            discard_changes: target.discard_changes,
            max_fix_turns: host::DEFAULT_MAX_FIX_TURNS,
        };
        let state = host::build_state(&options, options.port)
            .await
            .map_err(CliError::Unavailable)?;
        // Tools of the saved MCP servers are listed and callable once they have connected.
        state
            .mcp_servers
            .wait_until_settled(host::mcp_servers::GATEWAY_SETTLE_TIMEOUT)
            .await;
        Ok(Self::Headless {
            state,
            folder_linked: target.folder.is_some(),
        })
    }

    /// Every tool of the registry, in catalog order.
    pub async fn list(&self) -> Result<Vec<ToolDefinition>, CliError> {
        match self {
            Self::Headless { state, .. } => Ok(state.registry.list_all_tools()),
            Self::Remote(remote) => remote.list().await,
        }
    }

    /// Runs one call under the CLI's approval `mode`; with `save` (headless, folder linked) a
    /// successful mutation is followed by `workspace.saveAll` under the same approval.
    pub async fn call(
        &self,
        request: ToolCallRequest,
        mode: ApprovalMode,
        save: bool,
    ) -> Result<ToolCallResult, CliError> {
        match self {
            Self::Headless {
                state,
                folder_linked,
            } => {
                let name = request.name.clone();
                let result = headless_call(state, request, mode).await;
                if save && !result.is_error() && name != SAVE_TOOL && mutates(state, &name) {
                    save_to_folder(state, *folder_linked, mode).await?;
                }
                Ok(result)
            }
            Self::Remote(remote) => remote.call(request, mode).await,
        }
    }

    /// Shuts a headless registry down (in-flight work ends; nothing is left running).
    pub fn close(&self) {
        if let Self::Headless { state, .. } = self {
            state.approvals.close();
            state.registry.shutdown();
        }
    }
}

/// The token for `--url`: `--token`, else `STUDIO_TOKEN`, else the token file the studio wrote
/// in its data directory.
fn remote_token(target: &Target) -> Option<String> {
    let non_empty = |token: String| {
        let token = token.trim().to_owned();
        (!token.is_empty()).then_some(token)
    };
    target
        .token
        .clone()
        .and_then(non_empty)
        .or_else(|| std::env::var(TOKEN_ENV).ok().and_then(non_empty))
        .or_else(|| {
            std::fs::read_to_string(target.data_dir.join(host::TOKEN_FILE))
                .ok()
                .and_then(non_empty)
        })
}

/// One registry call as a local agent-mode caller, so the policy applies: read-only tools
/// run, everything else asks [`CliApproval`].
async fn headless_call(
    state: &StudioState,
    request: ToolCallRequest,
    mode: ApprovalMode,
) -> ToolCallResult {
    let context = ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Agent)
        .with_session(CLI_SESSION_ID);
    let options = ToolCallOptions::default()
        .with_context(context)
        .with_interaction(Arc::new(CliApproval(mode)));
    state.registry.call_tool(request, options).await
}

/// Whether `name` is a known tool that is not read-only.
fn mutates(state: &StudioState, name: &str) -> bool {
    state
        .registry
        .tool_definition(name)
        .is_some_and(|definition| !definition.is_read_only())
}

/// `--save`: writes the workspace back to the linked folder; the saved paths go to stderr so
/// stdout stays the call's JSON.
async fn save_to_folder(
    state: &StudioState,
    folder_linked: bool,
    mode: ApprovalMode,
) -> Result<(), CliError> {
    if !folder_linked {
        return Err(CliError::Usage("--save needs --folder.".to_owned()));
    }
    let saved = headless_call(state, ToolCallRequest::new(SAVE_TOOL, Map::new()), mode).await;
    if let Some(error) = saved.error {
        let hint = "the call itself succeeded and its change is kept in the workspace; saving it to the folder failed.";
        return Err(CliError::Tool(error, Some(hint.to_owned())));
    }
    let paths = saved
        .structured_content
        .as_ref()
        .and_then(|value| value.get("savedPaths"))
        .map(ToString::to_string)
        .unwrap_or_else(|| "[]".to_owned());
    eprintln!("studio tools: saved {paths}");
    Ok(())
}
