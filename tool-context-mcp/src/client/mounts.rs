//! [`McpMounts`]: the MCP servers mounted into one registry, kept in step with a configuration.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tool_context::ToolRegistry;
use tool_context::questions::ToolQuestions;

use super::config::{McpServerConfig, McpServersConfig};
use super::limits::ClientLimits;
use super::link::QuestionSlot;
use super::status::{ServerState, ServerStatus};
use super::supervisor::{MountGate, Supervised, supervise};

/// The MCP servers mounted into one registry. Each enabled server gets its own supervisor
/// (connect, list, mount, follow `list_changed`, reconnect); [`Self::apply`] brings the set in
/// step with a new configuration, restarting only the servers whose transport changed.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use serde_json::json;
/// use tool_context::ToolRegistry;
/// use tool_context_mcp::client::{ClientLimits, McpMounts, McpServersConfig};
///
/// let registry = ToolRegistry::builder().build()?;
/// let mounts = McpMounts::new(&registry, ClientLimits::default());
/// mounts.apply(&McpServersConfig::from_json(&json!({"mcpServers": {
///     "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}
/// }}))?);
/// mounts.wait_until_settled("everything", std::time::Duration::from_secs(30)).await;
/// // `everything.echo` now runs through the registry's pipeline, asking for approval first.
/// println!("{:?}", registry.tool_names());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpMounts {
    inner: Arc<Inner>,
}

struct Inner {
    registry: ToolRegistry,
    limits: Arc<ClientLimits>,
    servers: Mutex<Vec<Entry>>,
    changed: Arc<watch::Sender<u64>>,
    gate: MountGate,
    questions: QuestionSlot,
}

enum Entry {
    Running(McpServerConfig, Supervised),
    Disabled(McpServerConfig),
}

impl Entry {
    fn config(&self) -> &McpServerConfig {
        match self {
            Self::Running(config, _) | Self::Disabled(config) => config,
        }
    }

    fn status(&self) -> ServerStatus {
        match self {
            Self::Running(_, supervised) => supervised.status.borrow().clone(),
            Self::Disabled(config) => {
                ServerStatus::new(&config.name, config.transport_kind(), ServerState::Disabled)
            }
        }
    }
}

impl std::fmt::Debug for McpMounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpMounts")
            .field("servers", &self.statuses())
            .finish_non_exhaustive()
    }
}

impl McpMounts {
    /// No servers yet; [`Self::apply`] adds them.
    pub fn new(registry: &ToolRegistry, limits: ClientLimits) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry: registry.clone(),
                limits: Arc::new(limits),
                servers: Mutex::new(Vec::new()),
                changed: Arc::new(watch::Sender::new(0)),
                gate: MountGate::default(),
                questions: QuestionSlot::default(),
            }),
        }
    }

    /// Puts the questions servers ask during calls to `questions` (a person, through a
    /// [`QuestionQueue`](tool_context::QuestionQueue) a page shows): an MCP form elicitation
    /// on 2025-11-25, an `input_required` round on 2026-07-28. The answer (accepted values,
    /// decline or cancel) goes back to the server, which decides what the call does with it.
    /// Without it every question is declined, and the call's result says so. Call it before
    /// [`Self::apply`]: connections made earlier do not offer elicitation to their servers.
    pub fn answer_questions_with(&self, questions: Arc<dyn ToolQuestions>) {
        self.inner.questions.set(questions);
    }

    /// Brings the mounted servers in step with `config` (call it inside a Tokio runtime): new
    /// servers start connecting, removed or disabled ones are stopped and their tools
    /// unmounted, a changed transport reconnects, and a change of trust or tool selection
    /// re-mounts the tools on the live connection. Returns at once; watch [`Self::changes`].
    pub fn apply(&self, config: &McpServersConfig) {
        let inner = &self.inner;
        let mut servers = inner.lock();
        let mut previous: Vec<Entry> = std::mem::take(&mut *servers);
        for wanted in &config.servers {
            let kept = previous
                .iter()
                .position(|entry| entry.config().name == wanted.name)
                .map(|index| previous.remove(index));
            servers.push(self.entry_for(wanted, kept));
        }
        for removed in previous {
            self.retire(removed);
        }
        drop(servers);
        inner.changed.send_modify(|generation| *generation += 1);
    }

    fn entry_for(&self, wanted: &McpServerConfig, kept: Option<Entry>) -> Entry {
        match kept {
            Some(Entry::Running(config, supervised))
                if !wanted.disabled && config.transport == wanted.transport =>
            {
                if config != *wanted {
                    supervised.config.send_replace(wanted.clone());
                }
                Entry::Running(wanted.clone(), supervised)
            }
            kept => {
                if let Some(old) = kept {
                    self.retire(old);
                }
                self.start(wanted)
            }
        }
    }

    fn start(&self, config: &McpServerConfig) -> Entry {
        if config.disabled {
            self.inner.registry.unmount(&config.name);
            return Entry::Disabled(config.clone());
        }
        let supervised = supervise(
            self.inner.registry.clone(),
            Arc::clone(&self.inner.limits),
            config.clone(),
            Arc::clone(&self.inner.changed),
            Arc::clone(&self.inner.gate),
            self.inner.questions.clone(),
        );
        Entry::Running(config.clone(), supervised)
    }

    /// Stops a server; its supervisor unmounts its tools as it ends. The registry group is
    /// removed at once too, so the tools are gone when `apply` returns.
    fn retire(&self, entry: Entry) {
        self.inner.retire(&entry);
    }

    /// Every configured server's status, in configuration order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.inner.lock().iter().map(Entry::status).collect()
    }

    /// The status of the server named `name`.
    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        self.inner
            .lock()
            .iter()
            .find(|entry| entry.config().name == name)
            .map(Entry::status)
    }

    /// A receiver whose value moves whenever any server's status (or the set) changes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Waits until `name` is no longer connecting (ready, failed, unavailable or disabled), at
    /// most `timeout`; the status then, or `None` for an unknown name.
    pub async fn wait_until_settled(&self, name: &str, timeout: Duration) -> Option<ServerStatus> {
        let mut changes = self.changes();
        let settled = async {
            loop {
                let status = self.status(name)?;
                if status.is_settled() {
                    return Some(status);
                }
                if changes.changed().await.is_err() {
                    return self.status(name);
                }
            }
        };
        match tokio::time::timeout(timeout, settled).await {
            Ok(status) => status,
            Err(_) => self.status(name),
        }
    }

    /// Stops every server, unmounts their tools and waits for their connections to close.
    pub async fn shutdown(&self) {
        let servers = std::mem::take(&mut *self.inner.lock());
        for entry in servers {
            self.inner.retire(&entry);
            if let Entry::Running(_, supervised) = entry {
                supervised.stopped().await;
            }
        }
        self.inner
            .changed
            .send_modify(|generation| *generation += 1);
    }
}

impl Inner {
    /// Stops `entry`'s supervisor and unmounts its tools, under the mount gate.
    fn retire(&self, entry: &Entry) {
        let _gate = self
            .gate
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Entry::Running(_, supervised) = entry {
            supervised.stop();
        }
        self.registry.unmount(&entry.config().name);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.servers
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Dropping the last handle stops every server and takes its tools out of the registry.
impl Drop for Inner {
    fn drop(&mut self) {
        let servers = std::mem::take(&mut *self.lock());
        for entry in &servers {
            self.retire(entry);
        }
    }
}
