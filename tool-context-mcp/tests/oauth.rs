//! The OAuth 2.1 resource server against a real authorization server: `oauth2-mock-server`
//! from npm (examples/tests/mcp_node/oauth_server.mjs, two issuers with their own RS256 keys
//! and the confidential clients alice, bob and carol). Tokens come from its token endpoint or
//! are minted by its own signer; the independent clients are the TypeScript SDK v2
//! (`@modelcontextprotocol/client`) and the Python `mcp` package, each completing the OAuth
//! discovery against our metadata by itself.
//!
//! Needs the npm peers (`npm ci` in examples/tests/mcp_node, Node 22 as `MCP_NODE22` or the
//! local node22 install) and `python3` with `mcp` 2.3+; scripts/test.sh provides all three.

mod oauth_support;
mod wire;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use oauth_support::{AuthServers, node22, peers_dir, registry};
use rmcp::transport::StreamableHttpServerConfig;
use serde_json::{Value, json};
use tool_context_mcp::McpToolServer;
use tool_context_mcp::oauth::{
    MCP_AUTH_REQUIRED, MCP_INSUFFICIENT_SCOPE, MCP_SESSION_NOT_FOUND, MCP_TOKEN_INVALID,
    OAuthResourceServer,
};
use tool_context_mcp::request_state::MCP_REQUEST_STATE_INVALID;
use tool_context_mcp::tasks::MCP_TASK_NOT_FOUND;
use wire::Wire;

/// A protected MCP host: `mcp` behind the OAuth layer at `/mcp`, metadata at both well-known
/// paths.
struct Host {
    url: String,
    writes: Arc<AtomicU64>,
    gate: Arc<tokio::sync::Notify>,
}

async fn protected_host(auth: &AuthServers) -> Host {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let oauth = OAuthResourceServer::builder(&url, &auth.issuer)
        .required_scopes(["mcp:tools"])
        .scope_tools("notes:read", ["notes.read", "notes.wait"])
        .scope_tools("notes:write", ["notes.*"])
        .resource_name("notes")
        .build()
        .unwrap();
    let (writes, gate) = (Arc::default(), Arc::default());
    let server = McpToolServer::new(registry(&writes, &gate))
        .with_task_after(std::time::Duration::from_millis(50));
    let service =
        tool_context_mcp::streamable_http_service(&server, StreamableHttpServerConfig::default());
    let mut app = axum::Router::new().nest_service("/mcp", oauth.layer().wrap(service));
    for path in oauth.metadata_paths() {
        app = app.route_service(&path, oauth.metadata_service());
    }
    tokio::spawn(async move { axum::serve(listener, app).await });
    Host { url, writes, gate }
}

/// A raw `tools/list` POST with `authorization`, as the HTTP answer.
async fn post_list(url: &str, authorization: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", wire::VERSION)
        .header("Mcp-Method", "tools/list");
    if let Some(authorization) = authorization {
        request = request.header("Authorization", authorization);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": wire::VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "oauth-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    request.json(&body).send().await.unwrap()
}

/// Status, `WWW-Authenticate` and `error.code` of a refused request.
async fn refusal(response: reqwest::Response) -> (u16, String, String) {
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body: Value = response.json().await.unwrap();
    (
        status,
        challenge,
        body["error"]["code"].as_str().unwrap_or("").to_owned(),
    )
}

fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn metadata_points_clients_at_the_authorization_server() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let origin = host.url.trim_end_matches("/mcp");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata: Value = reqwest::get(format!("{origin}{path}"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["resource"], host.url, "{path}");
        assert_eq!(metadata["authorization_servers"], json!([auth.issuer]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(["mcp:tools", "notes:read", "notes:write"])
        );
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
    let (status, challenge, code) = refusal(post_list(&host.url, None).await).await;
    assert_eq!((status, code.as_str()), (401, MCP_AUTH_REQUIRED));
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
        )
    );
}

#[tokio::test]
async fn expired_foreign_misaddressed_and_forged_tokens_are_refused() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let scope = "mcp:tools notes:read";
    let minted = |overrides: Value| {
        let mut request =
            json!({"issuer": "trusted", "sub": "alice", "scope": scope, "aud": host.url});
        request
            .as_object_mut()
            .unwrap()
            .extend(overrides.as_object().unwrap().clone());
        auth.mint(request)
    };
    let good = minted(json!({})).await;
    let mut forged = good.clone();
    // Change one character inside the signature (not the last, whose low bits are padding and
    // would make the base64 itself invalid): still well-formed, no longer verifying.
    let at = forged.len() - 10;
    let swapped = if forged.as_bytes()[at] == b'A' {
        "B"
    } else {
        "A"
    };
    forged.replace_range(at..=at, swapped);
    let cases = [
        (
            "expired",
            minted(json!({"expiresIn": -120})).await,
            "expired",
        ),
        (
            "not yet valid",
            minted(json!({"nbfOffset": 600})).await,
            "not valid yet",
        ),
        (
            "another audience",
            minted(json!({"aud": "http://127.0.0.1:1/mcp"})).await,
            "another resource",
        ),
        (
            "no audience",
            minted(json!({"claims": {"aud": null}})).await,
            "lacks a required claim",
        ),
        (
            "another issuer claim",
            minted(json!({"claims": {"iss": auth.other_issuer}})).await,
            "another authorization server",
        ),
        (
            "another issuer's key",
            minted(json!({"issuer": "other"})).await,
            "not signed with a key",
        ),
        ("a forged signature", forged, "signature does not verify"),
        ("garbage", "a.b.c".to_owned(), "not a signed JWT"),
    ];
    for (case, token, reason) in cases {
        let (status, challenge, code) =
            refusal(post_list(&host.url, Some(&format!("Bearer {token}"))).await).await;
        assert_eq!((status, code.as_str()), (401, MCP_TOKEN_INVALID), "{case}");
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\""),
            "{case}: {challenge}"
        );
        assert!(challenge.contains(reason), "{case}: {challenge}");
        assert!(
            challenge.contains("resource_metadata=\""),
            "{case}: {challenge}"
        );
    }
    assert_eq!(host.writes.load(Ordering::SeqCst), 0);
    let accepted = post_list(&host.url, Some(&format!("Bearer {good}"))).await;
    assert_eq!(accepted.status(), 200);
}

#[tokio::test]
async fn a_token_without_the_required_scope_is_403_naming_it() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    // carol may only have notes:read: the issuer grants no mcp:tools.
    let carol = auth.token("carol", "mcp:tools notes:read", &host.url).await;
    let (status, challenge, code) =
        refusal(post_list(&host.url, Some(&format!("Bearer {carol}"))).await).await;
    assert_eq!((status, code.as_str()), (403, MCP_INSUFFICIENT_SCOPE));
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp:tools\""),
        "{challenge}"
    );
}

#[tokio::test]
async fn scopes_decide_which_tools_a_principal_sees_and_calls() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let bob = auth.token("bob", "mcp:tools notes:read", &host.url).await;
    let alice = auth
        .token("alice", "mcp:tools notes:read notes:write", &host.url)
        .await;
    let bob = Wire::new(&host.url, json!({"elicitation": {"form": {}}})).with_bearer(&bob);
    let alice = Wire::new(&host.url, json!({"elicitation": {"form": {}}})).with_bearer(&alice);
    assert_eq!(
        tool_names(&bob.result("tools/list", json!({})).await),
        ["notes.read", "notes.wait"]
    );
    assert_eq!(
        tool_names(&alice.result("tools/list", json!({})).await),
        ["notes.read", "notes.write", "notes.wait"]
    );
    let call = json!({"name": "notes.write", "arguments": {"text": "x"}});
    let hidden = bob.send("tools/call", call.clone()).await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    assert_eq!(hidden["error"]["data"]["code"], "TOOL_NOT_FOUND");
    let read = bob
        .result("tools/call", json!({"name": "notes.read", "arguments": {}}))
        .await;
    assert_eq!(read["structuredContent"]["notes"][0], "first");
    let caller = &read["structuredContent"]["caller"];
    assert_eq!(caller["subject"], "bob", "{read}");
    assert_eq!(caller["issuer"], auth.issuer.as_str());
    // alice may write: the call asks for approval (an input_required round) instead.
    let asked = alice.result("tools/call", call).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(host.writes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn approvals_and_tasks_belong_to_the_principal_that_started_them() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let scope = "mcp:tools notes:read notes:write";
    let token = |sub: &'static str| {
        auth.mint(json!({"issuer": "trusted", "sub": sub, "scope": scope, "aud": host.url}))
    };
    let capabilities =
        json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let alice = Wire::new(&host.url, capabilities.clone()).with_bearer(&token("alice").await);
    let mallory = Wire::new(&host.url, capabilities).with_bearer(&token("mallory").await);

    let call = json!({"name": "notes.write", "arguments": {"text": "mine"}});
    let asked = alice.result("tools/call", call.clone()).await;
    let mut retry = call.clone();
    retry["requestState"] = asked["requestState"].clone();
    retry["inputResponses"] = json!({"approval": {"action": "accept", "content": {}}});
    // Another principal cannot redeem alice's approval, even with the same arguments.
    let stolen = mallory.send("tools/call", retry.clone()).await;
    assert_eq!(
        stolen["error"]["data"]["code"], MCP_REQUEST_STATE_INVALID,
        "{stolen}"
    );
    assert_eq!(host.writes.load(Ordering::SeqCst), 0);
    let written = alice.result("tools/call", retry).await;
    assert_eq!(written["structuredContent"]["writes"], 1, "{written}");

    let started = alice
        .result("tools/call", json!({"name": "notes.wait", "arguments": {}}))
        .await;
    let task_id = started["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {started}"))
        .to_owned();
    let foreign = mallory.send("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(
        foreign["error"]["data"]["code"], MCP_TASK_NOT_FOUND,
        "{foreign}"
    );
    let listed = mallory.result("tasks/list", json!({})).await;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    let own = alice.result("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(own["status"], "working", "{own}");
    host.gate.notify_one();
}

/// A 2025-11-25 POST of `message` as `token`'s bearer, in `session` when given.
async fn post_in_session(
    url: &str,
    token: &str,
    session: Option<&str>,
    message: Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    request.json(&message).send().await.unwrap()
}

/// Opens a 2025-11-25 session as `token`'s principal; its id.
async fn open_session(url: &str, token: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-test", "version": "0"}}});
    let opened = post_in_session(url, token, None, initialize).await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let acknowledged = post_in_session(url, token, Some(&session), initialized).await;
    assert!(acknowledged.status().is_success());
    session
}

#[tokio::test]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let scope = "mcp:tools notes:read";
    let token = |sub: &'static str| {
        auth.mint(json!({"issuer": "trusted", "sub": sub, "scope": scope, "aud": host.url}))
    };
    let (alice, mallory) = (token("alice").await, token("mallory").await);
    let session = open_session(&host.url, &alice).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // A leaked session id is not a credential: another principal gets "no such session".
    let stolen = post_in_session(&host.url, &mallory, Some(&session), list.clone()).await;
    let (status, challenge, code) = refusal(stolen).await;
    assert_eq!((status, code.as_str()), (404, MCP_SESSION_NOT_FOUND));
    assert_eq!(challenge, "");
    let own = post_in_session(&host.url, &alice, Some(&session), list.clone()).await;
    assert_eq!(own.status(), 200);
    assert!(own.text().await.unwrap().contains("notes.read"));
    // Ended by its owner, the session answers nobody.
    let ended = reqwest::Client::new()
        .delete(&host.url)
        .bearer_auth(&alice)
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    let after = post_in_session(&host.url, &alice, Some(&session), list).await;
    assert_eq!(after.status(), 404);
}

/// Runs a peer client script; its one JSON line.
async fn peer(mut command: tokio::process::Command) -> Value {
    let output = command.output().await.expect("the peer client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|_| panic!("no JSON from the peer: {stdout}\n{stderr}"))
}

fn peer_args<'a>(host: &'a Host, client: &'a str, secret: &'a str, scope: &'a str) -> [&'a str; 6] {
    [&host.url, client, secret, scope, "notes.read", "{}"]
}

#[tokio::test]
async fn the_typescript_sdk_v2_client_discovers_authorizes_and_calls() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let mut command = tokio::process::Command::new(node22());
    command
        .arg(peers_dir().join("oauth_client_v2.mjs"))
        .args(peer_args(
            &host,
            "bob",
            "bob-secret",
            "mcp:tools notes:read",
        ))
        .env("MCP_OAUTH_ISSUER", &auth.issuer);
    let answer = peer(command).await;
    assert_eq!(
        answer["tools"],
        json!(["notes.read", "notes.wait"]),
        "{answer}"
    );
    assert_eq!(
        answer["result"]["structuredContent"]["notes"][0], "first",
        "{answer}"
    );
    // A wrong secret never gets a token: the client fails at the issuer, not at us.
    let mut command = tokio::process::Command::new(node22());
    command
        .arg(peers_dir().join("oauth_client_v2.mjs"))
        .args(peer_args(&host, "bob", "wrong", "mcp:tools notes:read"));
    let refused = peer(command).await;
    assert_eq!(refused["status"], 401, "{refused}");
}

#[tokio::test]
async fn the_python_client_discovers_authorizes_and_calls() {
    let auth = AuthServers::start().await;
    let host = protected_host(&auth).await;
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tests/mcp_python/oauth_client.py");
    let mut command = tokio::process::Command::new("python3");
    command
        .arg(&script)
        .args(peer_args(
            &host,
            "alice",
            "alice-secret",
            "mcp:tools notes:read notes:write",
        ))
        .env("MCP_OAUTH_ISSUER", &auth.issuer);
    let answer = peer(command).await;
    assert_eq!(
        answer["tools"],
        json!(["notes.read", "notes.write", "notes.wait"]),
        "{answer}"
    );
    assert_eq!(
        answer["result"]["structuredContent"]["notes"][0], "first",
        "{answer}"
    );
    // carol's token lacks mcp:tools: 403.
    let mut command = tokio::process::Command::new("python3");
    command
        .arg(&script)
        .args(peer_args(&host, "carol", "carol-secret", "notes:read"));
    let refused = peer(command).await;
    assert_eq!(refused["status"], 403, "{refused}");
}
