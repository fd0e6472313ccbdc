//! MCP servers mounted into the studio's registry: the `mcpServers` JSON people already have
//! (Claude Desktop's `command`/`args`/`env` or `url`/`headers`, VS Code's `servers`), each
//! server's tools registered as `<server>.<tool>` and run through the registry's one pipeline,
//! so the agents, the Tools tab, the trace and `studio mcp` (a gateway) see them like the
//! studio's own, behind the same approvals.
//!
//! - **Where the configuration lives**: `settings.json` in the data directory (`mcpServers`,
//!   secrets included: the only place they are written). `studio --mcp-config FILE` (and
//!   `studio mcp --mcp-config FILE`) replaces it at start-up ([`import_config_file`]).
//! - **What the page sees**: [`McpServers::view`], the configuration with every env and header
//!   value masked (`tool_context_mcp::client::MASK`) and each server's status. An edit of that
//!   view comes back through `PUT /api/mcp/servers`, where a value still masked keeps the saved
//!   secret. Status messages (which may quote a server's stderr) have the configured secrets
//!   masked too.
//! - **Saving is checked**: a configuration is validated, written to `settings.json`, and only
//!   then applied; a failed write changes nothing (the running servers stay as they were).
//! - **Live**: every change of a server's state reaches the pages as an `mcpServers` event (the
//!   shape of `GET /api/mcp/servers`).
//!
//! Server names are letters, digits, `_` and `-`, and never one of the studio's own catalogs
//! (`workspace`, `preview`, `editor`, `web`), so a mounted tool is never mistaken for one of
//! the studio's.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::sync::watch;
use tool_context::{QuestionQueue, ToolRegistry};
use tool_context_mcp::client::{
    ClientLimits, ConfigError, MASK, McpMounts, McpServersConfig, McpTransportConfig,
};

use super::StudioState;
use super::settings::Settings;
use crate::kit::error::StudioError;
use crate::kit::events::{EventHub, StudioEvent};
use crate::surfaces::STUDIO_NAMESPACES;

/// The route of the MCP servers API.
pub const MCP_SERVERS_PATH: &str = "/api/mcp/servers";
/// Largest accepted `PUT /api/mcp/servers` body (64 servers of a few hundred bytes each fit
/// many times over).
pub const MAX_MCP_CONFIG_BYTES: usize = 256 * 1024;
/// Largest `--mcp-config` file read.
pub const MAX_MCP_CONFIG_FILE_BYTES: u64 = 1024 * 1024;
/// How long `studio mcp` waits for the configured servers to connect before it serves, so a
/// client's first `tools/list` sees their tools.
pub const GATEWAY_SETTLE_TIMEOUT: Duration = Duration::from_secs(15);
/// Shortest configured secret masked inside status messages (a shorter one would mask
/// ordinary words).
const MIN_MASKED_SECRET_CHARS: usize = 4;

/// The code of a configuration that cannot be used (`400`, `details.path` names where).
pub const STUDIO_INVALID_MCP_CONFIG: &str = "STUDIO_INVALID_MCP_CONFIG";
pub use super::settings::STUDIO_SETTINGS_NOT_SAVED;
/// The code of a change asked while the studio stops (`503`; nothing changed).
pub const STUDIO_STOPPING: &str = "STUDIO_STOPPING";

/// Why a configuration was not taken.
#[derive(Debug)]
pub enum McpConfigRefusal {
    /// It cannot be used: where and why.
    Invalid(ConfigError),
    /// `settings.json` could not be written; nothing changed.
    NotSaved(std::io::Error),
    /// The studio is stopping (its servers are stopped for good); nothing changed.
    Stopping,
}

/// The coded answer: `400 STUDIO_INVALID_MCP_CONFIG` with `details.path` (a JSON pointer into
/// the configuration), `500 STUDIO_SETTINGS_NOT_SAVED` or `503 STUDIO_STOPPING`.
impl From<McpConfigRefusal> for StudioError {
    fn from(refusal: McpConfigRefusal) -> Self {
        match refusal {
            McpConfigRefusal::Invalid(error) => {
                let at = if error.path.is_empty() {
                    "the configuration".to_owned()
                } else {
                    error.path.clone()
                };
                StudioError::bad_request(
                    STUDIO_INVALID_MCP_CONFIG,
                    format!("{at}: {}", error.reason),
                )
                .with_details(json!({"path": error.path, "reason": error.reason}))
            }
            McpConfigRefusal::NotSaved(error) => StudioError::internal(
                STUDIO_SETTINGS_NOT_SAVED,
                format!(
                    "The MCP servers could not be saved to settings.json ({error}); nothing changed: the running servers are as they were."
                ),
            ),
            McpConfigRefusal::Stopping => StudioError::unavailable(
                STUDIO_STOPPING,
                "The studio is stopping; the MCP servers were not changed.",
            ),
        }
    }
}

/// The studio's mounted MCP servers: one [`McpMounts`] over the registry, the configuration it
/// runs, and the settings that keep it.
#[derive(Clone)]
pub struct McpServers {
    inner: Arc<Inner>,
}

struct Inner {
    mounts: McpMounts,
    /// The configuration applied last, and whether the servers were stopped for good; its
    /// lock also orders updates (validate, save, apply) and the shutdown.
    config: Mutex<Applied>,
    settings: Settings,
}

struct Applied {
    config: McpServersConfig,
    stopped: bool,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers")
            .field("config", &self.inner.lock().config)
            .finish_non_exhaustive()
    }
}

impl McpServers {
    /// Mounts the servers saved in `settings` into `registry` (they connect in the
    /// background). A saved configuration that cannot be used is logged (path and reason,
    /// never a value) and left unapplied. What a server asks during a call waits in
    /// `questions` for the person.
    pub fn start(registry: &ToolRegistry, settings: &Settings, questions: &QuestionQueue) -> Self {
        let mounts = McpMounts::new(registry, ClientLimits::default());
        mounts.answer_questions_with(Arc::new(questions.clone()));
        let config = match saved_config(settings) {
            Ok(config) => config,
            Err(error) => {
                tracing::warn!(path = %error.path, reason = %error.reason, "not mounting the saved MCP servers");
                McpServersConfig::default()
            }
        };
        mounts.apply(&config);
        Self {
            inner: Arc::new(Inner {
                mounts,
                config: Mutex::new(Applied {
                    config,
                    stopped: false,
                }),
                settings: settings.clone(),
            }),
        }
    }

    /// `{generation, config, servers}`: the configuration with every secret masked and each
    /// server's status (secrets masked in its messages too). What the page, the events and the
    /// logs see. `generation` grows with every change, so a page that gets views by two routes
    /// (an answer and an event) keeps the newer one.
    pub fn view(&self) -> Value {
        // Read first: the state below is at least this new.
        let generation = *self.inner.mounts.changes().borrow();
        let config = self.inner.lock().config.clone();
        let servers = serde_json::to_value(self.inner.mounts.statuses()).unwrap_or(Value::Null);
        json!({
            "generation": generation,
            "config": config.masked_json(),
            "servers": masked_statuses(servers, &config),
        })
    }

    /// Takes `edited` (an edit of the masked view, or any `mcpServers` / `servers` JSON):
    /// masked values keep the saved secrets, the result is validated, written to
    /// `settings.json` and then applied. Returns the new [`Self::view`].
    pub fn update(&self, edited: &Value) -> Result<Value, McpConfigRefusal> {
        {
            let mut current = self.inner.lock();
            if current.stopped {
                return Err(McpConfigRefusal::Stopping);
            }
            let next = current
                .config
                .merge_edit(edited)
                .and_then(checked)
                .map_err(McpConfigRefusal::Invalid)?;
            self.inner
                .settings
                .save_mcp_servers(stored_form(&next))
                .map_err(McpConfigRefusal::NotSaved)?;
            self.inner.mounts.apply(&next);
            current.config = next;
        }
        Ok(self.view())
    }

    /// A receiver that moves whenever a server's status or the set of servers changes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.mounts.changes()
    }

    /// Waits (at most `timeout` in all) until no configured server is still connecting.
    pub async fn wait_until_settled(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let names: Vec<String> = self
            .inner
            .lock()
            .config
            .servers
            .iter()
            .map(|server| server.name.clone())
            .collect();
        for name in names {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            self.inner.mounts.wait_until_settled(&name, left).await;
        }
    }

    /// Stops every server for good and unmounts its tools (bounded: a connection that does not
    /// close within a few seconds is left to the process's exit). Later updates are refused.
    pub async fn shutdown(&self) {
        self.inner.lock().stopped = true;
        let stopping = self.inner.mounts.shutdown();
        if tokio::time::timeout(Duration::from_secs(5), stopping)
            .await
            .is_err()
        {
            tracing::warn!("MCP servers did not stop within 5 s");
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Applied> {
        self.config
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The configuration saved in `settings`, checked.
fn saved_config(settings: &Settings) -> Result<McpServersConfig, ConfigError> {
    match settings.mcp_servers() {
        None => Ok(McpServersConfig::default()),
        Some(servers) => {
            McpServersConfig::from_json(&json!({"mcpServers": servers})).and_then(checked)
        }
    }
}

/// What `settings.json` keeps: the `mcpServers` map with its secrets, or nothing at all.
fn stored_form(config: &McpServersConfig) -> Option<Value> {
    if config.servers.is_empty() {
        return None;
    }
    config.to_json().get("mcpServers").cloned()
}

/// The studio's own rule on top of the library's: no server is named like one of the studio's
/// catalogs (its tools would pass for the studio's).
fn checked(config: McpServersConfig) -> Result<McpServersConfig, ConfigError> {
    if let Some(server) = config
        .servers
        .iter()
        .find(|server| STUDIO_NAMESPACES.contains(&server.name.as_str()))
    {
        return Err(ConfigError {
            path: format!("/mcpServers/{}", server.name),
            reason: format!(
                "\"{}\" names one of the studio's own tool catalogs ({}); pick another server name",
                server.name,
                STUDIO_NAMESPACES.join(", ")
            ),
        });
    }
    Ok(config)
}

/// Every env and header value of `config` long enough to mask.
fn secrets(config: &McpServersConfig) -> Vec<String> {
    let mut secrets: Vec<String> = config
        .servers
        .iter()
        .flat_map(|server| match &server.transport {
            McpTransportConfig::Stdio { env, .. } => env.values().cloned().collect::<Vec<_>>(),
            McpTransportConfig::Http { headers, .. } => {
                headers.values().cloned().collect::<Vec<_>>()
            }
        })
        .flat_map(|value| {
            // `Bearer <token>`: the token alone may be quoted too.
            let token = value
                .split_once(' ')
                .map(|(_, token)| token.trim().to_owned());
            std::iter::once(value).chain(token)
        })
        .filter(|value| value.chars().count() >= MIN_MASKED_SECRET_CHARS)
        .collect();
    // Longest first, so a secret containing another is masked whole.
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.dedup();
    secrets
}

/// `statuses` with the configured secrets masked in the free text a server can influence (a
/// failure's message quotes its stderr; a skip reason quotes its tool list).
fn masked_statuses(mut statuses: Value, config: &McpServersConfig) -> Value {
    let secrets = secrets(config);
    if secrets.is_empty() {
        return statuses;
    }
    let mask = |text: &mut Value| {
        if let Value::String(text) = text {
            for secret in &secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), MASK);
                }
            }
        }
    };
    for status in statuses.as_array_mut().into_iter().flatten() {
        if let Some(message) = status.get_mut("message") {
            mask(message);
        }
        for skipped in status
            .get_mut("skipped")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(reason) = skipped.get_mut("reason") {
                mask(reason);
            }
        }
    }
    statuses
}

/// Reads a Claude Desktop / VS Code configuration `file` and saves it as the studio's MCP
/// servers in `data_dir`'s settings (replacing the saved ones; a value still masked keeps the
/// saved secret). Returns how many servers it names. The studio started next mounts them.
pub fn import_config_file(data_dir: &Path, file: &Path) -> Result<usize, String> {
    let shown = file.display();
    let size = std::fs::metadata(file)
        .map_err(|error| format!("cannot read {shown}: {error}"))?
        .len();
    if size > MAX_MCP_CONFIG_FILE_BYTES {
        return Err(format!(
            "{shown} is {size} bytes; an MCP configuration is at most {MAX_MCP_CONFIG_FILE_BYTES} bytes"
        ));
    }
    let bytes = std::fs::read(file).map_err(|error| format!("cannot read {shown}: {error}"))?;
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|error| format!("{shown} is not JSON: {error}"))?;
    let settings = Settings::load(data_dir);
    let saved = saved_config(&settings).unwrap_or_default();
    let config = saved
        .merge_edit(&value)
        .and_then(checked)
        .map_err(|error| format!("{shown}: {error}"))?;
    settings
        .save_mcp_servers(stored_form(&config))
        .map_err(|error| format!("cannot save the MCP servers in the settings: {error}"))?;
    Ok(config.servers.len())
}

/// Publishes an `mcpServers` event on `hub` on every change until `stopping` is cancelled.
pub fn publish_changes(
    servers: &McpServers,
    hub: &EventHub,
    stopping: &tokio_util::sync::CancellationToken,
) {
    let servers = servers.clone();
    let hub = hub.clone();
    let stopping = stopping.clone();
    let mut changes = servers.changes();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stopping.cancelled() => break,
                changed = changes.changed() => if changed.is_err() { break },
            }
            let view = servers.view();
            hub.publish(StudioEvent::McpServers {
                generation: view["generation"].as_u64().unwrap_or_default(),
                config: view["config"].clone(),
                servers: view["servers"].clone(),
            });
        }
    });
}

/// `GET` and `PUT /api/mcp/servers`, with the body limit on this route only.
pub fn routes() -> Router<Arc<StudioState>> {
    Router::new().route(
        MCP_SERVERS_PATH,
        get(get_servers)
            .put(put_servers)
            .layer(DefaultBodyLimit::max(MAX_MCP_CONFIG_BYTES)),
    )
}

/// `GET /api/mcp/servers` (token required: arguments and URLs may hold what the mask cannot
/// know is a credential): `{generation, config, servers}`.
async fn get_servers(State(state): State<Arc<StudioState>>) -> Json<Value> {
    Json(state.mcp_servers.view())
}

/// `PUT /api/mcp/servers` with the edited configuration: the new view, or a
/// coded refusal (a body that is not JSON is coded like every route's, see
/// [`super::rejections`]).
async fn put_servers(
    State(state): State<Arc<StudioState>>,
    Json(edited): Json<Value>,
) -> Result<Json<Value>, StudioError> {
    Ok(Json(state.mcp_servers.update(&edited)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(value: Value) -> McpServersConfig {
        McpServersConfig::from_json(&value).unwrap()
    }

    #[test]
    fn a_server_cannot_take_the_name_of_a_studio_catalog() {
        let error = checked(config(
            json!({"mcpServers": {"web": {"command": "x"}, "docs": {"command": "y"}}}),
        ))
        .unwrap_err();
        assert_eq!(error.path, "/mcpServers/web");
        assert!(checked(config(json!({"mcpServers": {"webby": {"command": "x"}}}))).is_ok());
    }

    #[test]
    fn secrets_quoted_in_status_messages_are_masked() {
        let config = config(json!({"mcpServers": {
            "a": {"command": "x", "env": {"TOKEN": "sk-very-secret", "N": "1"}},
            "b": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer tok-123"}}
        }}));
        let statuses = json!([
            {"name": "a", "message": "exited (stderr: token sk-very-secret refused, 1 try)", "skipped": []},
            {"name": "b", "state": "ready", "skipped": [{"name": "t", "reason": "saw tok-123"}]}
        ]);
        let masked = masked_statuses(statuses, &config);
        assert_eq!(
            masked[0]["message"],
            format!("exited (stderr: token {MASK} refused, 1 try)")
        );
        assert_eq!(masked[1]["skipped"][0]["reason"], format!("saw {MASK}"));
    }

    #[test]
    fn an_empty_configuration_leaves_nothing_in_the_settings() {
        assert_eq!(stored_form(&McpServersConfig::default()), None);
        let stored = stored_form(&config(
            json!({"mcpServers": {"a": {"command": "x", "env": {"K": "v"}}}}),
        ))
        .unwrap();
        assert_eq!(stored["a"]["env"]["K"], "v");
    }

    #[test]
    fn a_config_file_is_imported_into_the_settings_with_its_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("claude.json");
        std::fs::write(
            &file,
            r#"{"mcpServers": {"docs": {"command": "python3", "args": ["s.py"], "env": {"KEY": "sk-import"}}}}"#,
        )
        .unwrap();
        assert_eq!(import_config_file(dir.path(), &file), Ok(1));
        let settings = Settings::load(dir.path());
        assert_eq!(
            settings.mcp_servers().unwrap()["docs"]["env"]["KEY"],
            "sk-import"
        );
        assert!(
            !serde_json::to_string(&settings.public_view())
                .unwrap()
                .contains("sk-import")
        );
        std::fs::write(&file, r#"{"mcpServers": {"editor": {"command": "x"}}}"#).unwrap();
        let error = import_config_file(dir.path(), &file).unwrap_err();
        assert!(error.contains("/mcpServers/editor"), "{error}");
        std::fs::write(&file, "{").unwrap();
        assert!(import_config_file(dir.path(), &file).is_err());
    }
}
