//! Which MCP servers to mount: the `mcpServers` JSON people already have from Claude Desktop
//! (`command`/`args`/`env`, `url`/`headers`) or VS Code (`servers` with `type`), plus our own
//! per-server fields for trust and tool selection.
//!
//! Secrets (environment values, header values) are kept for the connection and shown nowhere
//! else: [`McpServersConfig::masked_json`] is the view for pages and logs, and
//! [`McpServersConfig::merge_edit`] turns an edit of that view back into a full configuration
//! without ever needing the secrets to round-trip through the page.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

/// What a masked secret looks like in [`McpServersConfig::masked_json`]; an edit that keeps
/// this value keeps the secret it stands for.
pub const MASK: &str = "••••••";

/// The longest server name: it prefixes every tool name (`<server>.<tool>`).
pub const MAX_SERVER_NAME_CHARS: usize = 64;

/// At most this many servers in one configuration.
pub const MAX_SERVERS: usize = 64;

/// A configuration that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ConfigError {
    /// A JSON pointer into the configuration (`/mcpServers/docs/url`).
    pub path: String,
    /// Why.
    pub reason: String,
}

impl ConfigError {
    fn at(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// Every configured server, in the order the configuration lists them.
///
/// Parsed from JSON, or built with [`McpServersConfig::new`] (the struct is
/// `#[non_exhaustive]`: settings for all servers may join the list).
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpServersConfig {
    /// The servers.
    pub servers: Vec<McpServerConfig>,
}

impl McpServersConfig {
    /// A configuration of `servers`, in this order.
    pub fn new(servers: Vec<McpServerConfig>) -> Self {
        Self { servers }
    }
}

/// One server: how to reach it and how far to trust it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpServerConfig {
    /// The name its tools are mounted under (`<name>.<tool>`): letters, digits, `_` and `-`.
    pub name: String,
    /// How to reach it.
    pub transport: McpTransportConfig,
    /// Not connected while set (kept in the configuration).
    pub disabled: bool,
    /// Its tools run without asking a person (its annotations are still only hints).
    pub trusted: bool,
    /// Remote tool names that run without asking even when the server is not trusted.
    pub trusted_tools: Vec<String>,
    /// When set, only these remote tools are mounted.
    pub allowed_tools: Option<Vec<String>>,
    /// Remote tools never mounted.
    pub disabled_tools: Vec<String>,
    /// The protocol revision to speak; `None` probes `server/discover` (2026-07-28) and falls
    /// back to `initialize` (2025-11-25). JSON key `protocolVersion`.
    pub protocol_version: Option<ProtocolRevision>,
}

/// A protocol revision a server can be pinned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolRevision {
    /// `initialize` / `notifications/initialized` sessions.
    V2025_11_25,
    /// `server/discover` and self-contained requests.
    V2026_07_28,
}

impl ProtocolRevision {
    /// The revision's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [Self::V2025_11_25, Self::V2026_07_28]
            .into_iter()
            .find(|revision| revision.as_str() == text)
    }
}

/// How to reach a server.
#[derive(Clone, PartialEq, Eq)]
pub enum McpTransportConfig {
    /// A child process speaking MCP on its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (values are secrets).
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// The streamable HTTP transport.
    Http {
        /// The endpoint (`https://host/mcp`).
        url: String,
        /// Extra request headers, e.g. `Authorization: Bearer …` (values are secrets).
        headers: BTreeMap<String, String>,
    },
}

impl McpServerConfig {
    /// A server reached by `transport`, untrusted, with every tool mounted.
    pub fn new(name: impl Into<String>, transport: McpTransportConfig) -> Self {
        Self {
            name: name.into(),
            transport,
            disabled: false,
            trusted: false,
            trusted_tools: Vec::new(),
            allowed_tools: None,
            disabled_tools: Vec::new(),
            protocol_version: None,
        }
    }

    /// Marks the whole server trusted: its tools run without asking.
    #[must_use]
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
    }

    /// Whether the remote tool `remote_name` is mounted at all.
    pub fn mounts_tool(&self, remote_name: &str) -> bool {
        !self.disabled_tools.iter().any(|name| name == remote_name)
            && self
                .allowed_tools
                .as_ref()
                .is_none_or(|allowed| allowed.iter().any(|name| name == remote_name))
    }

    /// Whether the remote tool `remote_name` runs without asking a person.
    pub fn trusts_tool(&self, remote_name: &str) -> bool {
        self.trusted || self.trusted_tools.iter().any(|name| name == remote_name)
    }

    /// `stdio` or `http`.
    pub fn transport_kind(&self) -> &'static str {
        match self.transport {
            McpTransportConfig::Stdio { .. } => "stdio",
            McpTransportConfig::Http { .. } => "http",
        }
    }

    fn to_json(&self, mask: bool) -> Value {
        let secret = |value: &String| {
            if mask {
                Value::from(MASK)
            } else {
                Value::from(value.as_str())
            }
        };
        let mut out = match &self.transport {
            McpTransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut out = Map::new();
                out.insert("command".into(), json!(command));
                out.insert("args".into(), json!(args));
                if !env.is_empty() {
                    let env: Map<_, _> = env.iter().map(|(k, v)| (k.clone(), secret(v))).collect();
                    out.insert("env".into(), Value::Object(env));
                }
                if let Some(cwd) = cwd {
                    out.insert("cwd".into(), json!(cwd.to_string_lossy()));
                }
                out
            }
            McpTransportConfig::Http { url, headers } => {
                let mut out = Map::new();
                out.insert("type".into(), json!("http"));
                out.insert("url".into(), json!(url));
                if !headers.is_empty() {
                    let headers: Map<_, _> = headers
                        .iter()
                        .map(|(k, v)| (k.clone(), secret(v)))
                        .collect();
                    out.insert("headers".into(), Value::Object(headers));
                }
                out
            }
        };
        let flags = [("disabled", self.disabled), ("trusted", self.trusted)];
        for (key, set) in flags {
            if set {
                out.insert(key.into(), json!(true));
            }
        }
        if !self.trusted_tools.is_empty() {
            out.insert("trustedTools".into(), json!(self.trusted_tools));
        }
        if let Some(allowed) = &self.allowed_tools {
            out.insert("allowedTools".into(), json!(allowed));
        }
        if !self.disabled_tools.is_empty() {
            out.insert("disabledTools".into(), json!(self.disabled_tools));
        }
        if let Some(revision) = self.protocol_version {
            out.insert("protocolVersion".into(), json!(revision.as_str()));
        }
        Value::Object(out)
    }
}

impl McpServersConfig {
    /// Reads `{"mcpServers": {...}}` (Claude Desktop), `{"servers": {...}}` (VS Code) or the
    /// bare map of servers.
    pub fn from_json(value: &Value) -> Result<Self, ConfigError> {
        let (servers, at) = servers_map(value)?;
        if servers.len() > MAX_SERVERS {
            return Err(ConfigError::at(
                at,
                format!("at most {MAX_SERVERS} servers are supported"),
            ));
        }
        let servers = servers
            .iter()
            .map(|(name, server)| parse_server(name, server, &format!("{at}/{}", pointer(name))))
            .collect::<Result<_, _>>()?;
        Ok(Self { servers })
    }

    /// The configuration as `{"mcpServers": {...}}`, secrets included (for the settings file).
    pub fn to_json(&self) -> Value {
        self.json(false)
    }

    /// The configuration with every secret replaced by [`MASK`]: the only form a page, a trace
    /// or a log sees.
    pub fn masked_json(&self) -> Value {
        self.json(true)
    }

    fn json(&self, mask: bool) -> Value {
        let servers: Map<_, _> = self
            .servers
            .iter()
            .map(|server| (server.name.clone(), server.to_json(mask)))
            .collect();
        json!({ "mcpServers": servers })
    }

    /// The configuration `edited` describes, where a secret still equal to [`MASK`] keeps this
    /// configuration's value for the same server and key. A masked secret with no such value is
    /// an error rather than a literal mask sent to a server.
    pub fn merge_edit(&self, edited: &Value) -> Result<Self, ConfigError> {
        let mut next = Self::from_json(edited)?;
        for server in &mut next.servers {
            let previous = self
                .server(&server.name)
                .map(|previous| &previous.transport);
            let at = format!("/mcpServers/{}", pointer(&server.name));
            match (&mut server.transport, previous) {
                (
                    McpTransportConfig::Stdio { env, .. },
                    Some(McpTransportConfig::Stdio { env: old, .. }),
                ) => unmask(env, Some(old), &format!("{at}/env"))?,
                (
                    McpTransportConfig::Http { headers, .. },
                    Some(McpTransportConfig::Http { headers: old, .. }),
                ) => unmask(headers, Some(old), &format!("{at}/headers"))?,
                (McpTransportConfig::Stdio { env, .. }, _) => {
                    unmask(env, None, &format!("{at}/env"))?;
                }
                (McpTransportConfig::Http { headers, .. }, _) => {
                    unmask(headers, None, &format!("{at}/headers"))?;
                }
            }
        }
        Ok(next)
    }

    /// The server named `name`.
    pub fn server(&self, name: &str) -> Option<&McpServerConfig> {
        self.servers.iter().find(|server| server.name == name)
    }
}

fn unmask(
    values: &mut BTreeMap<String, String>,
    previous: Option<&BTreeMap<String, String>>,
    at: &str,
) -> Result<(), ConfigError> {
    for (key, value) in values.iter_mut() {
        if value != MASK {
            continue;
        }
        match previous.and_then(|previous| previous.get(key)) {
            Some(kept) => value.clone_from(kept),
            None => {
                return Err(ConfigError::at(
                    format!("{at}/{}", pointer(key)),
                    "a masked value with no saved value to keep: enter the value",
                ));
            }
        }
    }
    Ok(())
}

/// Secrets never reach a debug print.
impl fmt::Debug for McpServersConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "McpServersConfig({})", self.masked_json())
    }
}

impl fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "McpServerConfig({}: {})", self.name, self.to_json(true))
    }
}

impl fmt::Debug for McpTransportConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio { command, args, .. } => {
                write!(f, "Stdio({command} {args:?}, env masked)")
            }
            Self::Http { url, .. } => write!(f, "Http({url}, headers masked)"),
        }
    }
}

/// A JSON pointer segment.
fn pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn servers_map(value: &Value) -> Result<(&Map<String, Value>, &'static str), ConfigError> {
    let Some(object) = value.as_object() else {
        return Err(ConfigError::at(
            "",
            "the configuration must be a JSON object",
        ));
    };
    for key in ["mcpServers", "servers"] {
        if let Some(servers) = object.get(key) {
            let servers = servers.as_object().ok_or_else(|| {
                ConfigError::at(format!("/{key}"), "must be an object of servers")
            })?;
            return Ok((
                servers,
                if key == "servers" {
                    "/servers"
                } else {
                    "/mcpServers"
                },
            ));
        }
    }
    Ok((object, ""))
}

/// Letters, digits, `_` and `-`: no dot, so `<server>.<tool>` splits at its first dot.
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_SERVER_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn parse_server(name: &str, value: &Value, at: &str) -> Result<McpServerConfig, ConfigError> {
    if !valid_server_name(name) {
        return Err(ConfigError::at(
            at,
            format!(
                "a server name is 1 to {MAX_SERVER_NAME_CHARS} letters, digits, '_' or '-' (it prefixes its tools' names)"
            ),
        ));
    }
    let object = value
        .as_object()
        .ok_or_else(|| ConfigError::at(at, "a server must be an object"))?;
    let field = |key: &str| object.get(key).filter(|value| !value.is_null());
    let transport = parse_transport(object, at)?;
    Ok(McpServerConfig {
        name: name.to_owned(),
        transport,
        disabled: flag(field("disabled"), &format!("{at}/disabled"))?,
        trusted: flag(field("trusted"), &format!("{at}/trusted"))?,
        trusted_tools: names(field("trustedTools"), &format!("{at}/trustedTools"))?
            .unwrap_or_default(),
        allowed_tools: names(field("allowedTools"), &format!("{at}/allowedTools"))?,
        disabled_tools: names(field("disabledTools"), &format!("{at}/disabledTools"))?
            .unwrap_or_default(),
        protocol_version: revision(field("protocolVersion"), &format!("{at}/protocolVersion"))?,
    })
}

fn parse_transport(
    object: &Map<String, Value>,
    at: &str,
) -> Result<McpTransportConfig, ConfigError> {
    let kind = object.get("type").and_then(Value::as_str);
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
            Some(_) => Err(ConfigError::at(
                format!("{at}/{key}"),
                "must be non-empty text",
            )),
        }
    };
    match (kind, text("command")?, text("url")?) {
        (Some("stdio") | None, Some(command), None) => Ok(McpTransportConfig::Stdio {
            command,
            args: names(object.get("args"), &format!("{at}/args"))?.unwrap_or_default(),
            env: string_map(object.get("env"), &format!("{at}/env"))?,
            cwd: text("cwd")?.map(PathBuf::from),
        }),
        (Some("http" | "streamable-http" | "streamableHttp") | None, None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::at(
                    format!("{at}/url"),
                    "must be an http:// or https:// URL",
                ));
            }
            Ok(McpTransportConfig::Http {
                url,
                headers: string_map(object.get("headers"), &format!("{at}/headers"))?,
            })
        }
        (Some("sse"), _, _) => Err(ConfigError::at(
            format!("{at}/type"),
            "the deprecated HTTP+SSE transport is not supported: use the streamable HTTP URL",
        )),
        (Some(other), _, _) if !matches!(other, "stdio" | "http") => Err(ConfigError::at(
            format!("{at}/type"),
            format!("unknown transport type {other:?} (stdio or http)"),
        )),
        _ => Err(ConfigError::at(
            at,
            "a server needs either \"command\" (stdio) or \"url\" (streamable HTTP), not both",
        )),
    }
}

fn revision(value: Option<&Value>, at: &str) -> Result<Option<ProtocolRevision>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    value
        .as_str()
        .and_then(ProtocolRevision::parse)
        .map(Some)
        .ok_or_else(|| ConfigError::at(at, "must be \"2025-11-25\" or \"2026-07-28\""))
}

fn flag(value: Option<&Value>, at: &str) -> Result<bool, ConfigError> {
    match value {
        None => Ok(false),
        Some(Value::Bool(set)) => Ok(*set),
        Some(_) => Err(ConfigError::at(at, "must be true or false")),
    }
}

fn names(value: Option<&Value>, at: &str) -> Result<Option<Vec<String>>, ConfigError> {
    let Some(value) = value.filter(|value| !value.is_null()) else {
        return Ok(None);
    };
    let items = value
        .as_array()
        .ok_or_else(|| ConfigError::at(at, "must be an array of text"))?;
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| ConfigError::at(format!("{at}/{index}"), "must be text"))
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

fn string_map(value: Option<&Value>, at: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let Some(value) = value.filter(|value| !value.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let object = value
        .as_object()
        .ok_or_else(|| ConfigError::at(at, "must be an object of text values"))?;
    object
        .iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key.clone(), text.clone())),
            _ => Err(ConfigError::at(
                format!("{at}/{}", pointer(key)),
                "must be text",
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_desktop() -> Value {
        json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"TOKEN": "s3cret"}},
            "docs": {"url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer abc"}, "trusted": true,
                     "disabledTools": ["delete"]}
        }})
    }

    #[test]
    fn claude_desktop_and_vs_code_shapes_both_parse() {
        let config = McpServersConfig::from_json(&claude_desktop()).unwrap();
        assert_eq!(config.servers.len(), 2);
        assert_eq!(config.servers[0].transport_kind(), "stdio");
        assert!(config.server("docs").unwrap().trusted);
        assert!(!config.server("docs").unwrap().mounts_tool("delete"));
        let vs_code = json!({"servers": {"gh": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}});
        let config = McpServersConfig::from_json(&vs_code).unwrap();
        assert_eq!(config.servers[0].transport_kind(), "http");
    }

    #[test]
    fn secrets_are_masked_in_every_view_but_the_settings_file() {
        let config = McpServersConfig::from_json(&claude_desktop()).unwrap();
        let masked = config.masked_json().to_string();
        assert!(
            !masked.contains("s3cret") && !masked.contains("Bearer abc"),
            "{masked}"
        );
        assert!(!format!("{config:?}").contains("s3cret"));
        assert_eq!(
            McpServersConfig::from_json(&config.to_json()).unwrap(),
            config
        );
    }

    #[test]
    fn an_edit_of_the_masked_view_keeps_the_secrets_and_refuses_an_orphan_mask() {
        let config = McpServersConfig::from_json(&claude_desktop()).unwrap();
        let mut edited = config.masked_json();
        edited["mcpServers"]["docs"]["trusted"] = json!(false);
        let merged = config.merge_edit(&edited).unwrap();
        assert!(!merged.server("docs").unwrap().trusted);
        assert_eq!(
            merged.to_json()["mcpServers"]["files"]["env"]["TOKEN"],
            "s3cret"
        );
        edited["mcpServers"]["new"] = json!({"url": "http://x/mcp", "headers": {"X": MASK}});
        let error = config.merge_edit(&edited).unwrap_err();
        assert_eq!(error.path, "/mcpServers/new/headers/X");
    }

    #[test]
    fn bad_shapes_name_where_they_are() {
        for (value, path) in [
            (
                json!({"mcpServers": {"a.b": {"command": "x"}}}),
                "/mcpServers/a.b",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "url": "http://y"}}}),
                "/mcpServers/a",
            ),
            (
                json!({"mcpServers": {"a": {"url": "ftp://y"}}}),
                "/mcpServers/a/url",
            ),
            (
                json!({"mcpServers": {"a": {"type": "sse", "url": "http://y"}}}),
                "/mcpServers/a/type",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "args": [1]}}}),
                "/mcpServers/a/args/0",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "trusted": "yes"}}}),
                "/mcpServers/a/trusted",
            ),
            (json!([]), ""),
        ] {
            let error = McpServersConfig::from_json(&value).unwrap_err();
            assert_eq!(error.path, path, "{value}: {error}");
        }
    }
}
