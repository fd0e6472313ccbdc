//! Two MCP hosts behind a round-robin load balancer, as a horizontally scaled deployment runs
//! them: each host is its own "process" (its own tokio runtime on its own thread, its own
//! registry, server and PostgreSQL connection pool) and both share one PostgreSQL durable store
//! (a table of their own per test), one `RequestStateKey` and one OAuth resource: the public URL
//! of the balancer, which every token names as its audience. Protocol 2026-07-28 requests are
//! sessionless, so the balancer (a small reverse proxy in this file) sends each request to the
//! next host in turn, A, B, A, B..., and logs which host served it. Proven on the wire, with
//! tokens of a real authorization server (`oauth2-mock-server`, see tests/oauth.rs):
//!
//! - the protected-resource metadata names the public URL whichever host answers, and a token
//!   for a host's own URL or from another issuer is refused by both;
//! - an approval asked on one host is answered on the other and runs there exactly once; replays
//!   of the answer are refused `MCP_REQUEST_STATE_REPLAYED` by both hosts;
//! - another principal can neither redeem alice's approval state (`MCP_REQUEST_STATE_INVALID`)
//!   nor see her task (`MCP_TASK_NOT_FOUND`) on either host;
//! - a task started on one host is polled and collected through both;
//! - a task whose host went away (its runtime dropped mid-call, the balancer no longer routing
//!   to it) reads `working` on the other host until its lease lapses on the stores' shared
//!   (manual) clock, then `failed` with `TOOL_EXECUTION_UNKNOWN`.
//!
//! Needs PostgreSQL (`DATABASE_URL` or `postgres://postgres@127.0.0.1:5432/test`) and the npm
//! peers (`npm ci` in examples/tests/mcp_node); scripts/test.sh provides both.

mod oauth_support;
mod wire;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use oauth_support::{AuthServers, registry};
use rmcp::transport::StreamableHttpServerConfig;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};
use tool_context_mcp::oauth::{MCP_TOKEN_INVALID, OAuthResourceServer};
use tool_context_mcp::request_state::{MCP_REQUEST_STATE_INVALID, MCP_REQUEST_STATE_REPLAYED};
use tool_context_mcp::tasks::{MCP_TASK_NOT_FOUND, TASK_LEASE};
use tool_context_mcp::{McpToolServer, RequestStateKey, streamable_http_service};
use tool_durable_operations::backend::postgres::PostgresBackend;
use tool_durable_operations::{Clock, DurableOperationStore, ManualClock, SystemClock};
use tool_protocol::codes::TOOL_EXECUTION_UNKNOWN;
use wire::{Wire, elicitation_client, poll_until_terminal, retry, task_client};

/// Everything alice (and mallory) may do.
const SCOPE: &str = "mcp:tools notes:read notes:write";

/// What both hosts are configured with.
#[derive(Clone)]
struct HostConfig {
    /// The public URL: the OAuth resource, the audience of every token.
    resource: String,
    issuer: String,
    table: String,
    key: RequestStateKey,
    clock: Arc<dyn Clock>,
}

/// One host "process": its own tokio runtime on its own thread. Stopping it drops the runtime,
/// so whatever it was running (a tool call, a task's lease renewals) stops mid-way.
struct Host {
    origin: String,
    writes: Arc<AtomicU64>,
    gate: Arc<Notify>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Host {
    async fn start(config: HostConfig) -> Self {
        let (writes, gate) = (Arc::<AtomicU64>::default(), Arc::<Notify>::default());
        let (ready, started) = oneshot::channel();
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let (writes, gate) = (writes.clone(), gate.clone());
            std::thread::spawn(move || run_host(&config, &writes, &gate, ready, stopped))
        };
        let origin = started
            .await
            .expect("the host started (see its panic above)");
        Self {
            origin,
            writes,
            gate,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Ends the host's runtime and waits until it is gone.
    async fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            tokio::task::spawn_blocking(move || thread.join())
                .await
                .unwrap()
                .expect("the host thread ends cleanly");
        }
    }
}

/// The body of a host's thread: serve until told to stop (or until the [`Host`] is dropped).
fn run_host(
    config: &HostConfig,
    writes: &Arc<AtomicU64>,
    gate: &Arc<Notify>,
    ready: oneshot::Sender<String>,
    stop: oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let app = host_app(config, writes, gate).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        ready.send(origin).unwrap();
        let _ = stop.await;
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
}

/// The notes tools behind the OAuth layer at `/mcp` (metadata at both well-known paths), on the
/// shared key and store, handing calls off to tasks after 50 ms.
async fn host_app(
    config: &HostConfig,
    writes: &Arc<AtomicU64>,
    gate: &Arc<Notify>,
) -> axum::Router {
    let oauth = OAuthResourceServer::builder(&config.resource, &config.issuer)
        .required_scopes(["mcp:tools"])
        .scope_tools("notes:read", ["notes.read", "notes.wait"])
        .scope_tools("notes:write", ["notes.*"])
        .build()
        .unwrap();
    let server = McpToolServer::new(registry(writes, gate))
        .with_request_state_key(config.key.clone())
        .with_durable_store(postgres_store(&config.table, config.clock.clone()).await)
        .with_task_after(Duration::from_millis(50));
    let service = streamable_http_service(&server, StreamableHttpServerConfig::default());
    let mut app = axum::Router::new().nest_service("/mcp", oauth.layer().wrap(service));
    for path in oauth.metadata_paths() {
        app = app.route_service(&path, oauth.metadata_service());
    }
    app
}

async fn postgres_store(table: &str, clock: Arc<dyn Clock>) -> Arc<DurableOperationStore> {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let backend = PostgresBackend::connect(&url, table, 4)
        .await
        .expect("PostgreSQL answers (DATABASE_URL or the local default)");
    backend.apply_schema().await.unwrap();
    Arc::new(DurableOperationStore::new(Arc::new(backend)).with_clock(clock))
}

/// A round-robin reverse proxy: each request goes to the next backend still in rotation.
struct Balancer {
    backends: Vec<String>,
    retired: Vec<AtomicBool>,
    next: AtomicUsize,
    served: Mutex<Vec<usize>>,
    http: reqwest::Client,
}

/// Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and `host`.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

impl Balancer {
    /// The next backend in rotation, logged as the one serving this request.
    fn pick(&self) -> usize {
        let index = loop {
            let index = self.next.fetch_add(1, Ordering::SeqCst) % self.backends.len();
            if !self.retired[index].load(Ordering::SeqCst) {
                break index;
            }
        };
        self.served.lock().unwrap().push(index);
        index
    }

    /// Which backend served each request so far, in order.
    fn served(&self) -> Vec<usize> {
        self.served.lock().unwrap().clone()
    }

    fn last_served(&self) -> usize {
        *self.served().last().expect("a request went through")
    }

    /// Takes a backend out of rotation (its health check failed).
    fn retire(&self, index: usize) {
        self.retired[index].store(true, Ordering::SeqCst);
        assert!(self.retired.iter().any(|r| !r.load(Ordering::SeqCst)));
    }
}

fn end_to_end(mut headers: HeaderMap) -> HeaderMap {
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
    headers
}

/// Forwards method, path, query, end-to-end headers and body; streams the answer back.
async fn forward(State(balancer): State<Arc<Balancer>>, request: Request) -> Response {
    let backend = balancer.pick();
    let (parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut headers = end_to_end(parts.headers);
    headers.remove("content-length");
    let upstream = balancer
        .http
        .request(
            parts.method,
            format!("{}{path}", balancer.backends[backend]),
        )
        .headers(headers)
        .body(body)
        .send()
        .await;
    match upstream {
        Ok(upstream) => relay(upstream),
        Err(error) => (StatusCode::BAD_GATEWAY, error.to_string()).into_response(),
    }
}

/// The backend's answer, its body streamed as it comes (JSON or `text/event-stream`).
fn relay(upstream: reqwest::Response) -> Response {
    let status = upstream.status();
    let headers = end_to_end(upstream.headers().clone());
    let mut response = Response::new(Body::from_stream(upstream.bytes_stream()));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// Serves the balancer on `listener` (bound first: its URL is the resource the hosts protect).
fn serve_balancer(listener: tokio::net::TcpListener, backends: Vec<String>) -> Arc<Balancer> {
    let balancer = Arc::new(Balancer {
        retired: backends.iter().map(|_| AtomicBool::new(false)).collect(),
        backends,
        next: AtomicUsize::new(0),
        served: Mutex::default(),
        http: reqwest::Client::new(),
    });
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(balancer.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    balancer
}

/// The authorization servers, hosts A and B, and the balancer in front of them.
struct Cluster {
    auth: AuthServers,
    public: String,
    hosts: Vec<Host>,
    balancer: Arc<Balancer>,
}

impl Cluster {
    async fn start(clock: Arc<dyn Clock>) -> Self {
        let auth = AuthServers::start().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let public = format!("http://{}/mcp", listener.local_addr().unwrap());
        let config = HostConfig {
            resource: public.clone(),
            issuer: auth.issuer.clone(),
            table: format!("mcp_hosts_{}", uuid::Uuid::new_v4().simple()),
            key: RequestStateKey::from_bytes(&[23; 32]).unwrap(),
            clock,
        };
        let mut hosts = Vec::new();
        for _ in 0..2 {
            hosts.push(Host::start(config.clone()).await);
        }
        let backends = hosts.iter().map(|host| host.origin.clone()).collect();
        let balancer = serve_balancer(listener, backends);
        Self {
            auth,
            public,
            hosts,
            balancer,
        }
    }

    /// alice through the balancer, with a token from the issuer's token endpoint.
    async fn alice(&self, capabilities: Value) -> Wire {
        let token = self.auth.token("alice", SCOPE, &self.public).await;
        Wire::new(&self.public, capabilities).with_bearer(&token)
    }

    /// mallory through the balancer: the same scopes and audience, another subject.
    async fn mallory(&self) -> Wire {
        let claims =
            json!({"issuer": "trusted", "sub": "mallory", "scope": SCOPE, "aud": self.public});
        let token = self.auth.mint(claims).await;
        Wire::new(&self.public, task_client()).with_bearer(&token)
    }

    /// Executions of `notes.write` per host.
    fn writes(&self) -> Vec<u64> {
        self.hosts
            .iter()
            .map(|host| host.writes.load(Ordering::SeqCst))
            .collect()
    }

    /// Takes a host out of rotation and ends it.
    async fn stop_host(&mut self, index: usize) {
        self.balancer.retire(index);
        self.hosts[index].stop().await;
    }

    fn assert_alternated(&self) {
        let served = self.balancer.served();
        assert!(
            served.windows(2).all(|pair| pair[0] != pair[1]),
            "the balancer alternates: {served:?}"
        );
    }
}

fn write_call(text: &str) -> Value {
    json!({"name": "notes.write", "arguments": {"text": text}})
}

fn wait_call() -> Value {
    json!({"name": "notes.wait", "arguments": {}})
}

/// Sends the same request once per host; each answer's `error.data.code`, and which hosts
/// answered.
async fn refused_by_each_host(
    wire: &Wire,
    balancer: &Balancer,
    method: &str,
    params: &Value,
) -> (Vec<String>, BTreeSet<usize>) {
    let mut codes = Vec::new();
    let mut hosts = BTreeSet::new();
    for _ in 0..2 {
        codes.push(wire.error_code(method, params.clone()).await);
        hosts.insert(balancer.last_served());
    }
    (codes, hosts)
}

async fn start_task(alice: &Wire) -> String {
    let handle = alice.result("tools/call", wait_call()).await;
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(handle["status"], "working", "{handle}");
    handle["taskId"].as_str().unwrap().to_owned()
}

/// A token for `aud`, with `claims` overriding the signed ones.
async fn token_for(auth: &AuthServers, aud: &str, claims: Value) -> String {
    let request =
        json!({"issuer": "trusted", "sub": "alice", "scope": SCOPE, "aud": aud, "claims": claims});
    auth.mint(request).await
}

/// `error.code` of a `tools/list` refused at the HTTP layer.
async fn refused_list(url: &str, token: &str) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let response = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", wire::VERSION)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["error"]["code"].as_str().unwrap_or("").to_owned(),
    )
}

#[tokio::test]
async fn both_hosts_protect_the_public_url_and_trust_only_its_issuer() {
    let cluster = Cluster::start(Arc::new(SystemClock)).await;
    let metadata_url = cluster
        .public
        .replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    for _ in 0..2 {
        let metadata: Value = reqwest::get(&metadata_url)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["resource"], cluster.public, "{metadata}");
        assert_eq!(
            metadata["authorization_servers"],
            json!([cluster.auth.issuer])
        );
    }
    let own_url = format!("{}/mcp", cluster.hosts[0].origin);
    let misaddressed = token_for(&cluster.auth, &own_url, json!({})).await;
    let foreign = json!({"iss": cluster.auth.other_issuer});
    let foreign = token_for(&cluster.auth, &cluster.public, foreign).await;
    for token in [misaddressed, foreign] {
        for _ in 0..2 {
            let refused = refused_list(&cluster.public, &token).await;
            assert_eq!(refused, (401, MCP_TOKEN_INVALID.to_owned()));
        }
    }
    let alice = cluster.alice(elicitation_client()).await;
    let listed = alice.result("tools/list", json!({})).await;
    assert_eq!(listed["tools"].as_array().unwrap().len(), 3, "{listed}");
    assert_eq!(
        BTreeSet::from_iter(cluster.balancer.served()),
        BTreeSet::from([0, 1])
    );
    cluster.assert_alternated();
}

#[tokio::test]
async fn an_approval_asked_on_one_host_runs_once_on_the_other_and_is_never_replayed() {
    let cluster = Cluster::start(Arc::new(SystemClock)).await;
    let alice = cluster.alice(elicitation_client()).await;
    let call = write_call("balanced");
    let asked = alice.result("tools/call", call.clone()).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let asking = cluster.balancer.last_served();
    let retry = retry(&call, &asked["requestState"], "accept");

    let done = alice.result("tools/call", retry.clone()).await;
    let running = cluster.balancer.last_served();
    assert_ne!(asking, running, "the answer went to the other host");
    assert_eq!(done["structuredContent"]["writes"], 1, "{done}");
    let mut expected = vec![0, 0];
    expected[running] = 1;
    assert_eq!(cluster.writes(), expected, "the answering host ran it");

    let (codes, hosts) =
        refused_by_each_host(&alice, &cluster.balancer, "tools/call", &retry).await;
    assert_eq!(codes, [MCP_REQUEST_STATE_REPLAYED; 2]);
    assert_eq!(hosts, BTreeSet::from([0, 1]), "refused by both hosts");
    assert_eq!(cluster.writes(), expected, "a replay never runs");
    cluster.assert_alternated();
}

#[tokio::test]
async fn another_principal_cannot_redeem_a_state_or_read_a_task_on_either_host() {
    let cluster = Cluster::start(Arc::new(SystemClock)).await;
    let alice = cluster.alice(elicitation_client()).await;
    let mallory = cluster.mallory().await;
    let call = write_call("mine");
    let asked = alice.result("tools/call", call.clone()).await;
    let retry = retry(&call, &asked["requestState"], "accept");

    let (codes, hosts) =
        refused_by_each_host(&mallory, &cluster.balancer, "tools/call", &retry).await;
    assert_eq!(codes, [MCP_REQUEST_STATE_INVALID; 2]);
    assert_eq!(hosts, BTreeSet::from([0, 1]));
    assert_eq!(cluster.writes(), [0, 0]);
    // mallory's attempts did not use alice's state up.
    let done = alice.result("tools/call", retry).await;
    assert_eq!(done["structuredContent"]["writes"], 1, "{done}");

    let alice = cluster.alice(task_client()).await;
    let task_id = start_task(&alice).await;
    let runner = cluster.balancer.last_served();
    let get = json!({"taskId": task_id});
    let (codes, hosts) = refused_by_each_host(&mallory, &cluster.balancer, "tasks/get", &get).await;
    assert_eq!(codes, [MCP_TASK_NOT_FOUND; 2]);
    assert_eq!(hosts, BTreeSet::from([0, 1]));
    let own = alice.result("tasks/get", get).await;
    assert_eq!(own["status"], "working", "{own}");
    cluster.hosts[runner].gate.notify_one();
    assert_eq!(
        poll_until_terminal(&alice, &task_id).await["status"],
        "completed"
    );
    cluster.assert_alternated();
}

#[tokio::test]
async fn a_task_started_on_one_host_is_polled_and_collected_through_both() {
    let cluster = Cluster::start(Arc::new(SystemClock)).await;
    let alice = cluster.alice(task_client()).await;
    let task_id = start_task(&alice).await;
    let runner = cluster.balancer.last_served();
    let get = json!({"taskId": task_id});

    let working = alice.result("tasks/get", get.clone()).await;
    assert_eq!(working["status"], "working", "{working}");
    assert_ne!(
        cluster.balancer.last_served(),
        runner,
        "the other host answered"
    );

    cluster.hosts[runner].gate.notify_one();
    let done = poll_until_terminal(&alice, &task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"], json!({"done": true}));
    let mut hosts = BTreeSet::new();
    for _ in 0..2 {
        let result = alice.result("tasks/result", get.clone()).await;
        assert_eq!(
            result["structuredContent"],
            json!({"done": true}),
            "{result}"
        );
        hosts.insert(cluster.balancer.last_served());
    }
    assert_eq!(
        hosts,
        BTreeSet::from([0, 1]),
        "collected through both hosts"
    );
    cluster.assert_alternated();
}

#[tokio::test]
async fn a_task_whose_host_went_away_fails_as_unknown_on_the_other_host() {
    let clock = ManualClock::new(SystemClock.now_ms());
    let mut cluster = Cluster::start(Arc::new(clock.clone())).await;
    let alice = cluster.alice(task_client()).await;
    let task_id = start_task(&alice).await;
    let runner = cluster.balancer.last_served();
    let survivor = 1 - runner;
    let get = json!({"taskId": task_id});

    cluster.stop_host(runner).await;
    let gone = reqwest::get(&cluster.hosts[runner].origin).await;
    assert!(
        gone.is_err(),
        "the stopped host no longer answers: {gone:?}"
    );
    // The record still holds the lost host's lease: working until it lapses.
    let held = alice.result("tasks/get", get.clone()).await;
    assert_eq!(held["status"], "working", "{held}");
    assert_eq!(cluster.balancer.last_served(), survivor);

    clock.advance(TASK_LEASE + Duration::from_secs(1));
    let lapsed = alice.result("tasks/get", get).await;
    assert_eq!(cluster.balancer.last_served(), survivor);
    assert_eq!(lapsed["status"], "failed", "{lapsed}");
    assert_eq!(
        lapsed["error"]["data"]["code"], TOOL_EXECUTION_UNKNOWN,
        "{lapsed}"
    );
}
