//! A mounted call whose response is lost after the server committed: the mount resends it with
//! the same idempotency key, and the server replays instead of running it again.
//!
//! The server (`McpToolServer` over streamable HTTP) sits behind a loopback proxy that forwards
//! the first `tools/call` request, waits until the server's answer carries the result (the call
//! ran), and then drops the connection instead of passing the answer on: the loss a proxy
//! timeout or a host killed after commit causes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::transport::StreamableHttpServerConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_context_mcp::client::{ClientLimits, McpMounts, McpServersConfig, ServerState};
use tool_context_mcp::{McpToolServer, streamable_http_service};
use tool_protocol::{ModelToolCall, ToolCallError};

#[derive(Deserialize, JsonSchema)]
struct Write {
    text: String,
}

/// A server whose one tool counts how often it really ran.
async fn serve(runs: &Arc<AtomicU64>) -> SocketAddr {
    let counted = runs.clone();
    let write = Tool::typed(
        "work.write",
        "Writes.",
        move |input: Write, _call: ToolInvocation| {
            let runs = counted.clone();
            async move {
                let run = runs.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<_, ToolCallError>(json!({"text": input.text, "run": run}))
            }
        },
    );
    let registry = ToolRegistry::builder()
        .tools([write])
        .policy(AllowAll)
        .build()
        .unwrap();
    let server = McpToolServer::new(registry);
    let service = streamable_http_service(&server, StreamableHttpServerConfig::default());
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Forwards connections to `upstream`; while `drop_next` is set, the first connection carrying
/// a `tools/call` loses its answer once the answer holds the call's result.
async fn lossy_proxy(upstream: SocketAddr, drop_next: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(relay(client, upstream, drop_next.clone()));
        }
    });
    address
}

async fn relay(client: TcpStream, upstream: SocketAddr, drop_next: Arc<AtomicBool>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let carries_call = Arc::new(AtomicBool::new(false));
    let seen = carries_call.clone();
    let up = async move {
        let mut buffer = vec![0; 16 * 1024];
        while let Ok(read) = from_client.read(&mut buffer).await {
            if read == 0 || to_server.write_all(&buffer[..read]).await.is_err() {
                break;
            }
            if contains(&buffer[..read], b"tools/call") {
                seen.store(true, Ordering::SeqCst);
            }
        }
    };
    let down = async move {
        let mut answered = Vec::new();
        let mut buffer = vec![0; 16 * 1024];
        while let Ok(read) = from_server.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            answered.extend_from_slice(&buffer[..read]);
            let committed = carries_call.load(Ordering::SeqCst)
                && contains(&answered, b"structuredContent")
                && drop_next.swap(false, Ordering::SeqCst);
            if committed {
                return; // dropping both halves resets the client's connection
            }
            if to_client.write_all(&buffer[..read]).await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        () = up => {}
        () = down => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_answer_is_resent_with_its_key_and_the_tool_runs_once() {
    let runs = Arc::new(AtomicU64::new(0));
    let server = serve(&runs).await;
    let drop_next = Arc::new(AtomicBool::new(false));
    let proxy = lossy_proxy(server, drop_next.clone()).await;

    let registry = ToolRegistry::builder().policy(AllowAll).build().unwrap();
    let mut limits = ClientLimits::default();
    limits.connect_timeout = Duration::from_secs(20);
    limits.reconnect_initial = Duration::from_millis(100);
    let mounts = McpMounts::new(&registry, limits);
    let url = format!("http://{proxy}/mcp");
    let config = json!({"mcpServers": {"remote": {"url": url, "trusted": true}}});
    mounts.apply(&McpServersConfig::from_json(&config).unwrap());
    let status = mounts
        .wait_until_settled("remote", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(status.state, ServerState::Ready, "{status:?}");

    drop_next.store(true, Ordering::SeqCst);
    let call: ModelToolCall = serde_json::from_value(json!({
        "id": "c1", "name": "remote.work.write", "arguments": {"text": "once"}
    }))
    .unwrap();
    let result = registry
        .execute_model_tool_call(call, ToolCallOptions::default())
        .await;

    assert!(
        !drop_next.load(Ordering::SeqCst),
        "the proxy never dropped an answer"
    );
    assert!(result.error.is_none(), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"text": "once", "run": 1})),
        "the resend got the first run's result"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the tool ran twice");
}
