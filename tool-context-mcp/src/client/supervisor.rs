//! One task per mounted server: connect, list, mount, follow `list_changed`, and reconnect with
//! bounded backoff when the connection is lost. The task owns the connection; the registry
//! only ever sees whole tool groups swapped in one step.

use std::sync::Arc;

use rmcp::Peer;
use rmcp::model::{
    PaginatedRequestParams, ProtocolVersion, SubscriptionFilter, Tool as RemoteTool,
};
use rmcp::service::RoleClient;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tool_context::{SkippedTool, ToolRegistry};

use super::catalog::registry_tools;
use super::codes::{
    MCP_REMOTE_CONNECT_FAILED, MCP_REMOTE_LIST_FAILED, MCP_REMOTE_UNAVAILABLE,
    MCP_SERVER_START_FAILED,
};
use super::config::{McpServerConfig, McpTransportConfig};
use super::connect::{ClientSide, Connection, StderrTail, connect};
use super::limits::ClientLimits;
use super::link::{InFlight, LinkKind, QuestionSlot, ServerLink};
use super::status::{ServerState, ServerStatus, SkippedView};

/// A running supervisor: send it configuration changes (same transport), stop it.
pub(crate) struct Supervised {
    pub(crate) config: watch::Sender<McpServerConfig>,
    pub(crate) status: watch::Receiver<ServerStatus>,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Supervised {
    /// Stops the server: its tools are unmounted and its connection closed.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Waits for the task to end after [`Self::stop`].
    pub(crate) async fn stopped(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Starts supervising `config`'s server; `changed` moves whenever its status does.
pub(crate) fn supervise(
    registry: ToolRegistry,
    limits: Arc<ClientLimits>,
    config: McpServerConfig,
    changed: Arc<watch::Sender<u64>>,
    gate: MountGate,
    questions: QuestionSlot,
) -> Supervised {
    let initial = ServerStatus::new(
        &config.name,
        config.transport_kind(),
        ServerState::Connecting,
    );
    let (status, status_rx) = watch::channel(initial);
    let (config_tx, config_rx) = watch::channel(config);
    let stop = CancellationToken::new();
    let supervisor = Supervisor {
        registry,
        limits,
        config: config_rx,
        status,
        changed,
        stop: stop.clone(),
        stderr: StderrTail::default(),
        gate,
        questions,
    };
    Supervised {
        config: config_tx,
        status: status_rx,
        stop,
        task: Some(tokio::spawn(supervisor.run())),
    }
}

struct Supervisor {
    registry: ToolRegistry,
    limits: Arc<ClientLimits>,
    config: watch::Receiver<McpServerConfig>,
    status: watch::Sender<ServerStatus>,
    changed: Arc<watch::Sender<u64>>,
    stop: CancellationToken,
    stderr: StderrTail,
    gate: MountGate,
    questions: QuestionSlot,
}

/// Serializes mounting with stopping: a supervisor mounts only while it has not been stopped,
/// checked under the same lock its manager holds to stop it and unmount, so a stopped server
/// can never mount again over its successor.
pub(crate) type MountGate = Arc<std::sync::Mutex<()>>;

/// How a connection ended.
enum Ended {
    Stopped,
    Lost { code: &'static str, reason: String },
}

impl Supervisor {
    async fn run(mut self) {
        let mut attempt = 0u32;
        let mut was_ready = false;
        loop {
            let config = self.config.borrow_and_update().clone();
            self.update(|status| status.state = ServerState::Connecting);
            let list_changed = Arc::new(Notify::new());
            let in_flight = Arc::new(InFlight::new(self.questions.clone()));
            let side = ClientSide {
                list_changed: Arc::clone(&list_changed),
                in_flight: Arc::clone(&in_flight),
            };
            let connected = tokio::select! {
                connected = connect(&config, &self.limits, side, &self.stderr) => connected,
                () = self.stop.cancelled() => break,
            };
            let (code, reason) = match connected {
                Ok(connection) => {
                    match self
                        .serve(connection, list_changed, in_flight, &mut was_ready)
                        .await
                    {
                        Ended::Stopped => break,
                        Ended::Lost { code, reason } => {
                            if was_ready {
                                attempt = 0;
                            }
                            (code, reason)
                        }
                    }
                }
                Err(reason) => (connect_failed(&config), reason),
            };
            let wait = self.limits.backoff(attempt);
            attempt = attempt.saturating_add(1);
            let retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
            let code = code.to_owned();
            tracing::debug!(server = %config.name, %code, %reason, "MCP server not connected");
            self.update(|status| {
                status.state = if was_ready {
                    ServerState::Unavailable {
                        code,
                        message: reason,
                        retry_in_ms,
                    }
                } else {
                    ServerState::Failed {
                        code,
                        message: reason,
                        retry_in_ms,
                    }
                };
            });
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.stop.cancelled() => break,
            }
        }
    }

    /// Mounts the connected server's tools and keeps them current until the connection ends
    /// or the server is stopped.
    async fn serve(
        &mut self,
        connection: Connection,
        list_changed: Arc<Notify>,
        in_flight: Arc<InFlight>,
        was_ready: &mut bool,
    ) -> Ended {
        let Connection { service, child } = connection;
        let peer = service.peer().clone();
        let config = self.config.borrow().clone();
        let link = ServerLink::new(&config.name, link_kind(&config), in_flight);
        if let Err(reason) = self.remount(&config, &link, &peer).await {
            service.cancellation_token().cancel();
            return Ended::Lost {
                code: MCP_REMOTE_LIST_FAILED,
                reason,
            };
        }
        link.set_peer(Some(peer.clone()));
        *was_ready = true;
        self.update(|status| {
            status.state = ServerState::Ready;
            let info = peer.peer_info();
            status.protocol_version = protocol_version(&peer).map(|version| version.to_string());
            status.server_info = info
                .as_ref()
                .and_then(|info| info.server_info.as_ref())
                .map(|server| format!("{} {}", server.name, server.version));
        });
        let listening = listen_for_list_changes(&peer, &list_changed);
        let closer = service.cancellation_token();
        let waiting = service.waiting();
        tokio::pin!(waiting);
        let ended = loop {
            tokio::select! {
                () = self.stop.cancelled() => break Ended::Stopped,
                changed = self.config.changed() => {
                    if changed.is_err() {
                        break Ended::Stopped;
                    }
                    let config = self.config.borrow_and_update().clone();
                    self.remount_or_note(&config, &link, &peer).await;
                }
                () = list_changed.notified() => {
                    let config = self.config.borrow().clone();
                    self.remount_or_note(&config, &link, &peer).await;
                }
                _ = &mut waiting => break Ended::Lost {
                    code: MCP_REMOTE_UNAVAILABLE,
                    reason: self.with_stderr("the connection to the server closed".into()),
                },
            }
        };
        link.set_peer(None);
        closer.cancel();
        if let Some(listening) = listening {
            listening.abort();
        }
        drop(child);
        ended
    }

    /// Re-lists after `list_changed` or a configuration change; a failure keeps the tools that
    /// were mounted and says so in the status.
    async fn remount_or_note(
        &self,
        config: &McpServerConfig,
        link: &Arc<ServerLink>,
        peer: &Peer<RoleClient>,
    ) {
        if let Err(reason) = self.remount(config, link, peer).await {
            self.update(|status| {
                status.skipped.push(SkippedView {
                    name: "*".into(),
                    reason: format!("re-listing failed, the earlier tools stay mounted: {reason}"),
                });
            });
        }
    }

    /// Lists the server's tools and swaps them into the registry as one group.
    async fn remount(
        &self,
        config: &McpServerConfig,
        link: &Arc<ServerLink>,
        peer: &Peer<RoleClient>,
    ) -> Result<(), String> {
        let (remote, mut skipped) = tokio::time::timeout(self.limits.list_timeout, self.list(peer))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "tools/list did not finish within {} ms",
                    self.limits.list_timeout.as_millis()
                ))
            })?;
        let (tools, mut left_out) = registry_tools(config, link, remote, &self.limits);
        let report = {
            let _gate = self
                .gate
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if self.stop.is_cancelled() {
                return Err("the server was stopped".into());
            }
            self.registry.mount(&config.name, tools)
        };
        left_out.extend(report.skipped);
        skipped.extend(left_out);
        self.update(|status| {
            status.tools = report.mounted;
            status.skipped = skipped.into_iter().map(SkippedView::from).collect();
        });
        Ok(())
    }

    /// Every page of `tools/list`, bounded: at most `max_pages` pages and one tool more than
    /// `max_tools` (enough to know the list is too long) are held.
    async fn list(
        &self,
        peer: &Peer<RoleClient>,
    ) -> Result<(Vec<RemoteTool>, Vec<SkippedTool>), String> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..self.limits.max_pages {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page = peer
                .list_tools(Some(params))
                .await
                .map_err(|error| format!("tools/list failed: {error}"))?;
            tools.extend(page.tools);
            if tools.len() > self.limits.max_tools {
                tools.truncate(self.limits.max_tools + 1);
                return Ok((tools, Vec::new()));
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok((tools, Vec::new())),
            }
        }
        let note = SkippedTool::new(
            "*",
            format!(
                "the server's tool list goes on past {} pages; the rest are not mounted",
                self.limits.max_pages
            ),
        );
        Ok((tools, vec![note]))
    }

    fn update(&self, change: impl FnOnce(&mut ServerStatus)) {
        self.status.send_modify(change);
        self.changed.send_modify(|generation| *generation += 1);
    }

    fn with_stderr(&self, reason: String) -> String {
        match self.stderr.text() {
            Some(tail) => format!("{reason} (stderr: {tail})"),
            None => reason,
        }
    }
}

/// The code of a failed connect: a local command that did not start is no remote failure.
fn connect_failed(config: &McpServerConfig) -> &'static str {
    match link_kind(config) {
        LinkKind::Stdio => MCP_SERVER_START_FAILED,
        LinkKind::Http => MCP_REMOTE_CONNECT_FAILED,
    }
}

fn link_kind(config: &McpServerConfig) -> LinkKind {
    match config.transport {
        McpTransportConfig::Stdio { .. } => LinkKind::Stdio,
        McpTransportConfig::Http { .. } => LinkKind::Http,
    }
}

/// On 2026-07-28, `list_changed` arrives on a subscription the client opens; on 2025-11-25 it
/// reaches [`ClientSide`] unasked.
fn listen_for_list_changes(
    peer: &Peer<RoleClient>,
    list_changed: &Arc<Notify>,
) -> Option<JoinHandle<()>> {
    if protocol_version(peer) != Some(ProtocolVersion::V_2026_07_28) {
        return None;
    }
    let peer = peer.clone();
    let list_changed = Arc::clone(list_changed);
    Some(tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let Ok(mut subscription) = peer.listen(filter).await else {
            return;
        };
        while let Ok(Some(_)) = subscription.next().await {
            list_changed.notify_one();
        }
    }))
}

/// The revision the handshake settled on.
fn protocol_version(peer: &Peer<RoleClient>) -> Option<ProtocolVersion> {
    peer.peer_info().map(|info| info.protocol_version.clone())
}
