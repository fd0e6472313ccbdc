//! The studio host: one registry, workspace manager, approval queue, trace and event hub,
//! served over HTTP and a WebSocket on loopback.

pub(crate) mod changes;
pub mod mcp;
pub mod mcp_servers;
pub mod mcp_state_key;
pub(crate) mod openrouter;
pub mod orphans;
pub mod otel;
pub(crate) mod page_calls;
pub(crate) mod questions;
pub(crate) mod rejections;
pub mod remote_approval;
pub(crate) mod review;
pub mod runs;
pub(crate) mod selection;
pub mod server;
pub mod settings;
pub mod trace;
pub(crate) mod ui;
pub mod upload;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::FromRef;
use axum::serve::ListenerExt;
use live_code_editor::workspace::bridge::PreviewAcks;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tool_context::{
    ApprovalQueue, ApprovalQueueConfig, QuestionQueue, StandardPolicy, ToolRegistry,
};

use crate::agent::plan::Plan;
use crate::kit::bridge::PreviewViewers;
use crate::kit::durable_folder::DurableSaves;
use crate::kit::events::{EventHub, StudioEvent};
use crate::kit::preview_http::{PreviewDocuments, PreviewRoutes};
use crate::kit::private_files;
use crate::kit::security::SecurityPolicy;
use crate::surfaces::editor::{self, EditorRoutes, EditorSurface};
use crate::surfaces::web::{self, WebRoutes, WebSurface};
use crate::surfaces::workspace::{self, WorkspaceRoutes, WorkspaceSurface};
use crate::surfaces::{SAFE_ARGUMENT_NAMES, Surface, SurfaceDeps};
use mcp_servers::McpServers;
use runs::{AgentRuns, RunApprovals, RunPreviewBridge};
use settings::Settings;
use trace::TraceStore;

/// The fixed default port (documented in the README).
pub const DEFAULT_PORT: u16 = 4870;
/// Default data directory, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = ".studio-data";
pub use crate::kit::repository::WORKSPACE_DB_FILE;

/// How to start a studio.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StudioOptions {
    /// Loopback port (0 picks a free one).
    pub port: u16,
    /// Where the workspace database and settings live.
    pub data_dir: PathBuf,
    /// A folder to open at start.
    pub folder: Option<PathBuf>,
    /// Let `folder` replace unsaved edits stored from another source (without it the start
    /// is refused and names them; edits stored from `folder` itself are always kept).
    pub discard_changes: bool,
    /// Follow-up turns a provider run takes, each behind approval like any change, when its
    /// change made the preview fail (default [`DEFAULT_MAX_FIX_TURNS`]; 0 turns it off).
    pub max_fix_turns: u32,
}

/// Follow-up fix turns a provider run takes by default.
pub const DEFAULT_MAX_FIX_TURNS: u32 = 1;

impl StudioOptions {
    /// A studio on a free loopback port keeping its data in `data_dir`, with no folder: what
    /// tests, benches and embedding tools start.
    pub fn ephemeral(data_dir: &Path) -> Self {
        Self {
            port: 0,
            data_dir: data_dir.to_owned(),
            folder: None,
            discard_changes: false,
            max_fix_turns: DEFAULT_MAX_FIX_TURNS,
        }
    }

    /// Sets how many follow-up turns a provider run takes to fix a preview its change broke.
    #[must_use]
    pub fn with_max_fix_turns(mut self, max_fix_turns: u32) -> Self {
        self.max_fix_turns = max_fix_turns;
        self
    }

    /// Sets the loopback port (0 picks a free one).
    #[must_use]
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Sets where the workspace database and settings live.
    #[must_use]
    pub fn with_data_dir(mut self, data_dir: impl Into<PathBuf>) -> Self {
        self.data_dir = data_dir.into();
        self
    }

    /// Sets the folder to open at start (`None`: no folder).
    #[must_use]
    pub fn with_folder(mut self, folder: impl Into<Option<PathBuf>>) -> Self {
        self.folder = folder.into();
        self
    }

    /// Lets (or not) `folder` replace unsaved edits stored from another source.
    #[must_use]
    pub fn with_discard_changes(mut self, discard_changes: bool) -> Self {
        self.discard_changes = discard_changes;
        self
    }
}

impl Default for StudioOptions {
    fn default() -> Self {
        Self {
            port: DEFAULT_PORT,
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            folder: None,
            discard_changes: false,
            max_fix_turns: DEFAULT_MAX_FIX_TURNS,
        }
    }
}

/// Everything the routes share.
#[derive(Debug)]
pub struct StudioState {
    /// The one registry every origin calls.
    pub registry: ToolRegistry,
    /// The standalone workspace surface (`workspace.*`, `preview.*`).
    pub workspace: Arc<WorkspaceSurface>,
    /// Pending approvals.
    pub approvals: ApprovalQueue,
    /// Questions mounted MCP servers ask during calls, waiting for the person.
    pub questions: QuestionQueue,
    /// Live events.
    pub hub: EventHub,
    /// The execution trace.
    pub trace: TraceStore,
    /// Agent runs.
    pub runs: AgentRuns,
    /// Host/Origin/token guard.
    pub security: SecurityPolicy,
    /// Provider settings (and the saved MCP servers).
    pub settings: Settings,
    /// The MCP servers mounted into the registry (`<server>.<tool>`).
    pub mcp_servers: McpServers,
    /// Every attached studio page, whatever its surface (approvals go to the page when one is).
    pub pages: PreviewViewers,
    /// The Live Code Editor surface (`editor.*`).
    pub editor: Arc<EditorSurface>,
    /// The realtime web-coding surface (`web.*`).
    pub web: Arc<WebSurface>,
    /// Durable records of folder writes (`workspace.saveAll`).
    pub saves: DurableSaves,
    /// Compiled preview documents (each surface's latest revision, compiled once).
    pub previews: Arc<PreviewDocuments>,
    /// Seals MCP approval states (2026-07-28); kept in the data directory.
    pub mcp_state_key: tool_context_mcp::RequestStateKey,
    /// How long a page run's approval may wait with no page of its surface attached.
    pub orphan_grace: orphans::OrphanGrace,
    /// Cancelled when the studio stops: long-lived connections (the pages' event sockets) end
    /// with it instead of holding the shutdown open.
    pub stopping: CancellationToken,
    /// Follow-up turns a provider run takes to fix what its change broke in the preview
    /// ([`StudioOptions::max_fix_turns`]).
    pub max_fix_turns: u32,
}

/// A running studio.
#[derive(Debug)]
pub struct RunningStudio {
    /// Shared state (tests drive it directly).
    pub state: Arc<StudioState>,
    /// Bound address.
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningStudio {
    /// The URL to open.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.addr.port())
    }

    /// The per-launch token state-changing requests need.
    pub fn token(&self) -> &str {
        self.state.security.token()
    }

    /// Stops accepting requests, cancels runs, denies pending approvals, stops the mounted MCP
    /// servers and shuts the registry down.
    pub async fn shutdown(self) {
        self.state.runs.cancel_all();
        self.state.approvals.close();
        self.state.questions.close();
        self.state.mcp_servers.shutdown().await;
        self.state.registry.shutdown();
        self.shutdown.cancel();
        let _ = self.server.await;
    }

    /// Serves until the process is asked to stop.
    pub async fn wait(self) -> std::io::Result<()> {
        self.server.await.map_err(std::io::Error::other)?
    }
}

/// Builds the studio state: workspace, registry with the catalog, approval queue and trace.
pub async fn build_state(options: &StudioOptions, port: u16) -> Result<Arc<StudioState>, String> {
    let hub = EventHub::new();
    let saves = DurableSaves::open(&options.data_dir).await;
    let trace = TraceStore::new(hub.clone());
    trace.name_session(
        page_calls::UI_SESSION_ID,
        "palette · direct calls of the pages".into(),
    );
    let runs = AgentRuns::new(hub.clone(), trace.clone());
    let token = uuid::Uuid::new_v4().simple().to_string();
    let security = SecurityPolicy::new(port, token);
    let previews = Arc::<PreviewDocuments>::default();
    let deps = SurfaceDeps {
        hub: hub.clone(),
        data_dir: options.data_dir.clone(),
        saves: saves.clone(),
    };
    let watched_runs = runs.clone();
    let workspace = WorkspaceSurface::open(
        &deps,
        previews.clone(),
        security.preview_key().to_owned(),
        |bridge| Arc::new(RunPreviewBridge::new(bridge, watched_runs)),
    )
    .await?;
    if let Some(folder) = &options.folder {
        workspace
            .link_start_folder(folder, options.discard_changes)
            .await?;
    }
    let approvals = ApprovalQueue::with_config(ApprovalQueueConfig {
        safe_argument_names: SAFE_ARGUMENT_NAMES
            .iter()
            .map(|name| (*name).to_owned())
            .collect(),
        // The page reviews a pending call's diff (host::review); arguments stay in memory only.
        review_arguments: true,
        ..ApprovalQueueConfig::default()
    });
    let editor = EditorSurface::open(&deps).await?;
    let web = WebSurface::open(&deps).await?;
    let mut tools = workspace::tools(&workspace);
    tools.extend(editor::tools(&editor));
    tools.extend(web::tools(&web));
    // A tool's own default decides first (a trusted MCP server's tools run without asking),
    // else read-only tools and a person's direct calls run and everything else asks. No studio
    // tool sets a default, so for them this is `ReadOnlyOrDirectLocal`.
    let registry = ToolRegistry::builder()
        .tools(tools)
        .policy(StandardPolicy)
        .interaction(RunApprovals::new(approvals.clone(), runs.clone()))
        .observer(trace.clone())
        .observer(runs.clone())
        .execution_owner_id(format!("studio:{}", std::process::id()))
        .build()
        .map_err(|e| e.to_string())?;
    runs.know_tools(&registry.list_all_tools());
    let settings = Settings::load(&options.data_dir);
    let questions = QuestionQueue::new();
    let mcp_servers = McpServers::start(&registry, &settings, &questions);
    let state = Arc::new(StudioState {
        registry,
        workspace,
        approvals,
        questions,
        hub,
        trace,
        runs,
        security,
        settings,
        mcp_servers,
        pages: PreviewViewers::default(),
        editor,
        web,
        saves,
        previews,
        mcp_state_key: mcp_state_key::load_or_create(&options.data_dir),
        stopping: CancellationToken::new(),
        orphan_grace: orphans::OrphanGrace::default(),
        max_fix_turns: options.max_fix_turns,
    });
    watch_approvals(&state);
    watch_catalog(&state);
    mcp_servers::publish_changes(&state.mcp_servers, &state.hub, &state.stopping);
    orphans::watch_orphaned_approvals(&state);
    Ok(state)
}

impl StudioState {
    /// The preview acknowledgements (and runtime errors) of `surface`'s preview.
    pub fn surface_preview_acks(&self, surface: Surface) -> PreviewAcks {
        match surface {
            Surface::Workspace => self.workspace.manager().preview_acks().clone(),
            Surface::Editor => self.editor.preview_acks().clone(),
            Surface::Web => self.web.manager().preview_acks().clone(),
        }
    }

    /// The local agent's plan for `prompt` on `surface`, from that surface's planner and
    /// state. `metadata` is the run's context metadata (for example a Design Mode selection).
    pub async fn plan(&self, surface: Surface, prompt: &str, metadata: Option<&Value>) -> Plan {
        match surface {
            Surface::Workspace => workspace::plan(&self.workspace, prompt, metadata).await,
            Surface::Editor => editor::plan(&self.editor, prompt).await,
            Surface::Web => web::plan(&self.web, prompt).await,
        }
    }

    /// Marks `run_id` as a page's run when a page of `surface` is attached as it starts (its
    /// approvals then expire when no such page is left: see [`orphans`]).
    pub fn note_page_run(&self, run_id: &str, surface: Surface) {
        if self.viewers_for(surface).count() > 0 {
            self.runs.asked_from_page(run_id, surface);
        }
    }

    /// Browser tabs rendering `surface`'s preview.
    pub fn viewers_for(&self, surface: Surface) -> &PreviewViewers {
        match surface {
            Surface::Workspace => self.workspace.viewers(),
            Surface::Editor => self.editor.viewers(),
            Surface::Web => self.web.viewers(),
        }
    }
}

/// Publishes changes of the pending approvals and questions, the cards every page shows (runs
/// move to `approval` through [`RunApprovals`], in step with their calls).
fn watch_approvals(state: &Arc<StudioState>) {
    let (approvals, questions) = (state.approvals.clone(), state.questions.clone());
    let (mut approval_changes, mut question_changes) =
        (approvals.subscribe(), questions.subscribe());
    let (hub, stopping) = (state.hub.clone(), state.stopping.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stopping.cancelled() => break,
                changed = approval_changes.changed() => if changed.is_err() { break },
                changed = question_changes.changed() => if changed.is_err() { break },
            }
            approval_changes.mark_unchanged();
            question_changes.mark_unchanged();
            hub.publish(StudioEvent::Approvals {
                pending: questions::pending_cards(&approvals, &questions),
            });
        }
    });
}

/// Keeps the runs' knowledge of the catalog current as MCP servers' tools are mounted and
/// unmounted (which tools can never publish a revision).
fn watch_catalog(state: &Arc<StudioState>) {
    let mut changes = state.registry.catalog_changes();
    let registry = state.registry.clone();
    let runs = state.runs.clone();
    let stopping = state.stopping.clone();
    // Subscribed first: a server mounted from here on moves `changes`.
    runs.know_tools(&registry.list_all_tools());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stopping.cancelled() => break,
                changed = changes.changed() => if changed.is_err() { break },
            }
            runs.know_tools(&registry.list_all_tools());
        }
    });
}

/// File in the data directory holding the per-launch token, readable only by its owner, for
/// local clients that are not the page (MCP over HTTP, the CLI bridge).
pub const TOKEN_FILE: &str = "studio-token";

/// Writes the token file; failures are logged, never fatal (the page still gets the token).
fn write_token_file(data_dir: &Path, token: &str) {
    let path = data_dir.join(TOKEN_FILE);
    if let Err(error) = private_files::write_private(&path, token.as_bytes()) {
        tracing::warn!(path = %path.display(), %error, "could not write the studio token file");
    }
}

/// Binds 127.0.0.1:`options.port` and serves the studio.
pub async fn start(options: StudioOptions) -> Result<RunningStudio, String> {
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", options.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let state = build_state(&options, addr.port()).await?;
    write_token_file(&options.data_dir, state.security.token());
    let shutdown = state.stopping.clone();
    let app = server::router(state.clone());
    let stop = shutdown.clone();
    // Small event frames and JSON answers go out at once: with Nagle's algorithm a frame
    // queued behind an unacknowledged one waits for the peer's (delayed) ACK.
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
    });
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    Ok(RunningStudio {
        state,
        addr,
        shutdown,
        server,
    })
}

impl FromRef<Arc<StudioState>> for EditorRoutes {
    fn from_ref(state: &Arc<StudioState>) -> Self {
        Self {
            editor: state.editor.clone(),
            approvals: state.approvals.clone(),
        }
    }
}

impl FromRef<Arc<StudioState>> for WebRoutes {
    fn from_ref(state: &Arc<StudioState>) -> Self {
        Self {
            web: state.web.clone(),
        }
    }
}

impl FromRef<Arc<StudioState>> for WorkspaceRoutes {
    fn from_ref(state: &Arc<StudioState>) -> Self {
        Self {
            workspace: state.workspace.clone(),
        }
    }
}

impl StudioState {
    /// What the preview routes of `surface` take from the studio.
    fn preview_routes<P>(&self, surface: &Arc<P>) -> PreviewRoutes<P> {
        PreviewRoutes {
            surface: Arc::clone(surface),
            previews: self.previews.clone(),
            security: self.security.clone(),
        }
    }
}

impl FromRef<Arc<StudioState>> for PreviewRoutes<WorkspaceSurface> {
    fn from_ref(state: &Arc<StudioState>) -> Self {
        state.preview_routes(&state.workspace)
    }
}

impl FromRef<Arc<StudioState>> for PreviewRoutes<EditorSurface> {
    fn from_ref(state: &Arc<StudioState>) -> Self {
        state.preview_routes(&state.editor)
    }
}

impl FromRef<Arc<StudioState>> for PreviewRoutes<WebSurface> {
    fn from_ref(state: &Arc<StudioState>) -> Self {
        state.preview_routes(&state.web)
    }
}
