//! MCP servers in the studio over its HTTP API (issue 36): a configuration pointing at the
//! Python test server (`tool-context-mcp/tests/peers/python_misbehaving_server.py normal`) is
//! saved, the server becomes ready and its tools join the registry as `py.*`; the env secret is
//! masked in every view (the API, the events, the settings routes, status messages) and kept
//! only in `settings.json`; a model's call of `py.echo` (an OpenAI-compatible agent run against
//! a loopback fake provider) asks a person first and shows in the trace; a trusted server's
//! tools run without asking; bad configurations and a failed settings write are coded and
//! change nothing.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use live_code_studio::host::mcp_servers::McpConfigRefusal;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};
use tool_context::ToolCallOptions;
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallRequest, ToolCallSource};

use crate::support;
use crate::support::mcp::PYTHON_TEST_SERVER;

/// The env value every view must mask.
const SECRET: &str = "sk-mcp-secret-4f1c9e";
const MASK: &str = tool_context_mcp::client::MASK;
/// Upper bound on any wait here (it only keeps a broken build from hanging).
const DEADLINE: Duration = Duration::from_secs(60);

fn python_server() -> Value {
    json!({"command": "python3", "args": [PYTHON_TEST_SERVER, "normal"], "env": {"PEER_SECRET": SECRET}})
}

struct Studio {
    studio: RunningStudio,
    data: tempfile::TempDir,
    http: reqwest::Client,
}

impl Studio {
    async fn start() -> Self {
        let data = tempfile::tempdir().unwrap();
        let studio = host::start(StudioOptions::ephemeral(data.path()))
            .await
            .unwrap();
        Self {
            studio,
            data,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.studio.addr.port())
    }

    async fn get(&self, path: &str) -> (u16, String) {
        let response = self
            .http
            .get(self.url(path))
            .header("x-studio-token", self.studio.token())
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn get_json(&self, path: &str) -> Value {
        let (status, text) = self.get(path).await;
        assert_eq!(status, 200, "{path}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .request(method, self.url(path))
            .header("x-studio-token", self.studio.token())
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn put_servers(&self, config: Value) -> (u16, Value) {
        self.send(reqwest::Method::PUT, "/api/mcp/servers", config)
            .await
    }

    /// Polls `GET /api/mcp/servers` until `done` holds for the server `name`'s status.
    async fn wait_server(&self, name: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let view = self.get_json("/api/mcp/servers").await;
            let status = view["servers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|server| server["name"] == name)
                .cloned()
                .unwrap_or(Value::Null);
            if done(&status) {
                return status;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{name} never became {what}: {view}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn wait_approval(&self) -> Value {
        let started = Instant::now();
        loop {
            let (_, text) = self.get("/api/approvals").await;
            let pending: Value = serde_json::from_str(&text).unwrap();
            if let Some(first) = pending.as_array().and_then(|list| list.first()) {
                return first.clone();
            }
            assert!(started.elapsed() < DEADLINE, "no approval appeared");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn wait_run(&self, run_id: &str) -> Value {
        let started = Instant::now();
        loop {
            let run = self.get_json(&format!("/api/agent/runs/{run_id}")).await;
            if run.get("report").is_some() {
                return run;
            }
            assert!(started.elapsed() < DEADLINE, "run {run_id} did not finish");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Every event text the socket carries from now on.
    async fn record_events(&self) -> Arc<Mutex<Vec<String>>> {
        let url = format!(
            "ws://127.0.0.1:{}/api/events?token={}",
            self.studio.addr.port(),
            self.studio.token()
        );
        let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        tokio::spawn(async move {
            while let Some(Ok(message)) = socket.next().await {
                if let Ok(text) = message.to_text() {
                    kept.lock().unwrap().push(text.to_owned());
                }
            }
        });
        seen
    }

    /// A call of `name` as a model makes it (agent mode): it asks a person unless the tool's
    /// own default allows it.
    async fn model_call(&self, name: &str, arguments: Value) -> tool_protocol::ToolCallResult {
        let context = ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent)
            .with_session("model-session");
        let request = ToolCallRequest::new(name, arguments.as_object().unwrap().clone());
        self.studio
            .state
            .registry
            .call_tool(request, ToolCallOptions::default().with_context(context))
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_config_mounts_the_server_masks_its_secret_and_model_calls_ask_first() {
    let studio = Studio::start().await;
    let events = studio.record_events().await;

    // Nothing configured: an empty view; reading it needs the token.
    let empty = studio.get_json("/api/mcp/servers").await;
    assert_eq!(
        (&empty["config"], &empty["servers"]),
        (&json!({"mcpServers": {}}), &json!([]))
    );
    assert!(empty["generation"].is_u64(), "{empty}");
    let anonymous = studio
        .http
        .get(studio.url("/api/mcp/servers"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);

    // Claude Desktop's shape, with a secret in env.
    let (status, saved) = studio
        .put_servers(json!({"mcpServers": {"py": python_server()}}))
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(
        saved["config"]["mcpServers"]["py"]["env"]["PEER_SECRET"],
        MASK
    );
    assert!(!saved.to_string().contains(SECRET), "{saved}");

    let ready = studio
        .wait_server("py", "ready", |status| status["state"] == "ready")
        .await;
    let tools: Vec<&str> = ready["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool.as_str().unwrap())
        .collect();
    for tool in [
        "py.echo",
        "py.add",
        "py.write_note",
        "py.read_only",
        "py.fail",
    ] {
        assert!(tools.contains(&tool), "{tool} is mounted: {ready}");
    }
    assert_eq!(ready["transport"], "stdio");
    assert!(
        ready["serverInfo"]
            .as_str()
            .unwrap()
            .starts_with("python-misbehaving-server"),
        "{ready}"
    );

    // The catalog lists the remote tools; an untrusted server's read-only claim is dropped.
    let catalog = studio.get_json("/api/tools").await;
    let read_only = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "py.read_only")
        .expect("py.read_only is listed")
        .clone();
    assert_ne!(
        read_only["annotations"]["readOnlyHint"], true,
        "{read_only}"
    );

    // A person's direct call runs without asking.
    let (_, direct) = studio
        .send(
            reqwest::Method::POST,
            "/api/tools/call",
            json!({"method": "tools/call", "params": {"name": "py.echo", "arguments": {"text": "direct"}}}),
        )
        .await;
    assert_eq!(
        direct["structuredContent"],
        json!({"text": "direct"}),
        "{direct}"
    );

    // An agent (OpenAI-compatible loop against a fake provider) is offered py.echo, and its
    // call waits for a person's approval.
    let (base, requests) =
        support::echo_provider::serve("hi from the model", "The server echoed it.").await;
    let (status, settings) = studio
        .send(
            reqwest::Method::PUT,
            "/api/settings",
            json!({"provider": "llamacpp", "baseUrl": base, "model": "smol"}),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    let (status, run) = studio
        .send(
            reqwest::Method::POST,
            "/api/agent/runs",
            json!({"prompt": "echo something", "agent": "openrouter"}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    let approval = studio.wait_approval().await;
    assert_eq!(approval["name"], "py.echo", "{approval}");
    assert_eq!(approval["source"], "model", "{approval}");
    // No workspace diff stands for a remote call: the page is told where it runs instead.
    let review = studio
        .get_json(&format!(
            "/api/approvals/{}/diff",
            approval["id"].as_str().unwrap()
        ))
        .await;
    assert!(review["diff"].is_null(), "{review}");
    assert!(
        review["note"]
            .as_str()
            .unwrap()
            .contains("MCP server \"py\""),
        "{review}"
    );
    let (status, _) = studio
        .send(
            reqwest::Method::POST,
            &format!("/api/approvals/{}", approval["id"].as_str().unwrap()),
            json!({"decision": "allow"}),
        )
        .await;
    assert_eq!(status, 200);
    let finished = studio.wait_run(run["runId"].as_str().unwrap()).await;
    assert_eq!(finished["state"], "completed", "{finished}");
    assert_eq!(finished["report"]["toolNames"], json!(["py.echo"]));
    let second_turn = requests.lock().unwrap()[1].to_string();
    assert!(
        second_turn.contains("hi from the model"),
        "the tool result went back: {second_turn}"
    );
    // The trace shows the remote call like any other.
    let trace = studio.get_json("/api/trace").await;
    let row = trace["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| {
            row["kind"] == "tools/call" && row["name"] == "py.echo" && row["source"] == "model"
        })
        .unwrap_or_else(|| panic!("the remote call is traced: {trace}"))
        .clone();
    assert_eq!(row["status"], "completed", "{row}");

    // A model's call (no page, no approver answering) of an untrusted tool asks; trusting the
    // server (an edit of the masked view: the secret is kept) lets it run at once.
    {
        let asking = studio.model_call("py.echo", json!({"text": "ask me"}));
        tokio::pin!(asking);
        let approval = tokio::select! {
            approval = studio.wait_approval() => approval,
            result = &mut asking => panic!("an untrusted remote tool ran without asking: {result:?}"),
        };
        assert_eq!(approval["name"], "py.echo");
        studio
            .send(
                reqwest::Method::POST,
                &format!("/api/approvals/{}", approval["id"].as_str().unwrap()),
                json!({"decision": "deny"}),
            )
            .await;
        let denied = asking.await;
        assert_eq!(
            denied.error.as_ref().map(|error| error.code.as_str()),
            Some("TOOL_POLICY_DENIED"),
            "{denied:?}"
        );
    }
    let mut trusted = studio.get_json("/api/mcp/servers").await["config"].clone();
    trusted["mcpServers"]["py"]["trusted"] = json!(true);
    let (status, saved) = studio.put_servers(trusted).await;
    assert_eq!(status, 200, "{saved}");
    let on_disk = std::fs::read_to_string(studio.data.path().join("settings.json")).unwrap();
    assert!(
        on_disk.contains(SECRET),
        "the masked value kept the secret: {on_disk}"
    );
    // Re-mounted with the server's hints believed.
    let started = Instant::now();
    while studio
        .studio
        .state
        .registry
        .tool_definition("py.read_only")
        .is_none_or(|tool| !tool.is_read_only())
    {
        assert!(
            started.elapsed() < DEADLINE,
            "py was never re-mounted as trusted"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        studio.model_call("py.echo", json!({"text": "trusted"})),
    )
    .await
    .expect("a trusted server's tool runs without asking");
    assert_eq!(result.structured_content, Some(json!({"text": "trusted"})));

    // Secrets: nowhere in the API or the events; in settings.json only.
    for path in [
        "/api/mcp/servers",
        "/api/settings",
        "/api/state",
        "/api/tools",
        "/api/trace",
        "/api/approvals",
    ] {
        let (_, text) = studio.get(path).await;
        assert!(!text.contains(SECRET), "{path} shows the secret: {text}");
    }
    let seen = events.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|event| event.contains("\"mcpServers\"") && event.contains("\"ready\"")),
        "the states reach the pages live"
    );
    for event in &seen {
        assert!(
            !event.contains(SECRET),
            "an event shows the secret: {event}"
        );
    }
    let state = studio.studio.state.clone();
    assert!(!format!("{:?}", state.mcp_servers).contains(SECRET));
    let on_disk: Value = serde_json::from_str(
        &std::fs::read_to_string(studio.data.path().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk["mcpServers"]["py"]["env"]["PEER_SECRET"], SECRET);
    assert_eq!(
        on_disk["model"], "smol",
        "the provider settings are kept beside it"
    );

    // Stopping the studio stops the server and takes its tools out.
    studio.studio.shutdown().await;
    assert!(state.registry.mounted_tool_names("py").is_empty());
    // A change asked while (or after) it stops starts nothing.
    assert!(matches!(
        state
            .mcp_servers
            .update(&json!({"mcpServers": {"py": python_server()}})),
        Err(McpConfigRefusal::Stopping)
    ));
    assert!(state.registry.mounted_tool_names("py").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configurations_and_a_failed_write_are_coded_and_change_nothing() {
    let studio = Studio::start().await;
    let (status, _) = studio
        .put_servers(json!({"mcpServers": {"py": python_server()}}))
        .await;
    assert_eq!(status, 200);
    studio
        .wait_server("py", "ready", |status| status["state"] == "ready")
        .await;

    for (config, path) in [
        (
            json!({"mcpServers": {"py": {"command": "python3", "args": [1]}}}),
            "/mcpServers/py/args/0",
        ),
        (
            json!({"mcpServers": {"web": {"command": "python3"}}}),
            "/mcpServers/web",
        ),
        (
            json!({"mcpServers": {"new": {"command": "x", "env": {"K": MASK}}}}),
            "/mcpServers/new/env/K",
        ),
        (
            json!({"mcpServers": {"a.b": {"command": "x"}}}),
            "/mcpServers/a.b",
        ),
        (json!({"mcpServers": []}), "/mcpServers"),
    ] {
        let (status, body) = studio.put_servers(config.clone()).await;
        assert_eq!(status, 400, "{config}: {body}");
        assert_eq!(body["error"]["code"], "STUDIO_INVALID_MCP_CONFIG", "{body}");
        assert_eq!(body["error"]["details"]["path"], path, "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().starts_with(path),
            "{body}"
        );
    }
    // Not JSON, and too large: coded like every route's body.
    let response = studio
        .http
        .put(studio.url("/api/mcp/servers"))
        .header("x-studio-token", studio.studio.token())
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["code"]
            .as_str()
            .unwrap()
            .starts_with("STUDIO_"),
        "{body}"
    );
    let huge = json!({"mcpServers": {"py": {"command": "x", "args": ["a".repeat(300 * 1024)]}}});
    let (status, body) = studio.put_servers(huge).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (413, &json!("STUDIO_BODY_TOO_LARGE")),
        "{body}"
    );
    // Without the token: refused before anything is read.
    let response = studio
        .http
        .put(studio.url("/api/mcp/servers"))
        .json(&json!({"mcpServers": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);

    // A settings file that cannot be written: a coded failure, and the running set stays.
    let file = studio.data.path().join("settings.json");
    let kept = studio.data.path().join("settings.kept");
    std::fs::rename(&file, &kept).unwrap();
    std::fs::create_dir_all(file.join("in-the-way")).unwrap();
    let mut disabled = studio.get_json("/api/mcp/servers").await["config"].clone();
    disabled["mcpServers"]["py"]["disabled"] = json!(true);
    let (status, body) = studio.put_servers(disabled.clone()).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["error"]["code"], "STUDIO_SETTINGS_NOT_SAVED", "{body}");
    let view = studio.get_json("/api/mcp/servers").await;
    assert_eq!(view["servers"][0]["state"], "ready", "{view}");
    assert!(
        view["config"]["mcpServers"]["py"].get("disabled").is_none(),
        "{view}"
    );
    assert!(
        studio
            .studio
            .state
            .registry
            .tool_definition("py.echo")
            .is_some()
    );
    std::fs::remove_dir_all(&file).unwrap();
    std::fs::rename(&kept, &file).unwrap();

    // Written this time: disabled, its tools gone.
    let (status, body) = studio.put_servers(disabled).await;
    assert_eq!(status, 200, "{body}");
    studio
        .wait_server("py", "disabled", |status| status["state"] == "disabled")
        .await;
    assert!(
        studio
            .studio
            .state
            .registry
            .tool_definition("py.echo")
            .is_none()
    );

    // A server that fails prints its secret on stderr: the status masks it.
    let leaky = json!({"mcpServers": {"leaky": {
        "command": "python3",
        "args": ["-c", "import os, sys; sys.stderr.write('refusing token ' + os.environ['PEER_SECRET'] + '\\n'); sys.exit(1)"],
        "env": {"PEER_SECRET": SECRET}
    }}});
    let (status, body) = studio.put_servers(leaky).await;
    assert_eq!(status, 200, "{body}");
    // The first failure may come before the server's stderr was read; a later attempt's quotes it.
    let failed = studio
        .wait_server("leaky", "failed with its stderr", |status| {
            status["state"] == "failed"
                && status["message"]
                    .as_str()
                    .is_some_and(|message| message.contains("refusing token"))
        })
        .await;
    // A local command that did not start is no remote failure (issue 55, E12).
    assert_eq!(failed["code"], "MCP_SERVER_START_FAILED", "{failed}");
    let message = failed["message"].as_str().unwrap();
    assert!(!message.contains(SECRET), "{message}");
    assert!(
        message.contains(&format!("refusing token {MASK}")),
        "{message}"
    );
    studio.studio.shutdown().await;
}
