//! Agent lifecycle on a real loopback studio: the exact state sequences a WebSocket client sees
//! for local runs (completed, approved, denied, cancelled mid-approval), the `agent.request`
//! trace rows, an OpenRouter run against a loopback fake provider, and an MCP call registered
//! as a run whose transitions reach the MCP client as progress notifications.

use std::time::Duration;

use futures::StreamExt;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::mcp::{Person, call, connect, error, read};

/// Upper bound on how long a test waits for an event before failing (not a timing assertion:
/// it only keeps a broken build from hanging).
const EVENT_DEADLINE: Duration = Duration::from_secs(20);
const FINAL: &[&str] = &["completed", "denied", "failed", "cancelled"];

struct Studio {
    studio: RunningStudio,
    _data: tempfile::TempDir,
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
            _data: data,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.studio.addr.port())
    }

    async fn get(&self, path: &str) -> Value {
        let response = self.http.get(self.url(path)).send().await.unwrap();
        response.json().await.unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("x-studio-token", self.studio.token())
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .put(self.url(path))
            .header("x-studio-token", self.studio.token())
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn run(&self, prompt: &str) -> Value {
        let (status, run) = self
            .post("/api/agent/runs", json!({"prompt": prompt}))
            .await;
        assert_eq!(status, 200, "{run}");
        run
    }

    /// The live event stream, as a client that renders no preview (acks stay headless).
    async fn events(&self) -> Events {
        let url = format!(
            "ws://127.0.0.1:{}/api/events?token={}",
            self.studio.addr.port(),
            self.studio.token()
        );
        let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let (sender, receiver) = mpsc::unbounded_channel();
        let hello = socket.next().await.unwrap().unwrap();
        assert!(hello.to_text().unwrap().contains("\"hello\""));
        tokio::spawn(async move {
            while let Some(Ok(message)) = socket.next().await {
                let Ok(text) = message.to_text() else {
                    continue;
                };
                let Ok(event) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                if event["type"] == "agent" && sender.send(event["run"].clone()).is_err() {
                    break;
                }
            }
        });
        Events {
            receiver,
            seen: Vec::new(),
        }
    }

    /// The `agent.request` trace row of `run`.
    async fn agent_row(&self, run: &Value) -> Value {
        let session = run["sessionId"].as_str().unwrap();
        let trace = self.get(&format!("/api/trace?session={session}")).await;
        trace["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["kind"] == "agent.request" && row["traceId"] == run["runId"])
            .cloned()
            .unwrap_or_else(|| panic!("no agent.request row for {run}: {trace}"))
    }

    /// Resolves the pending approval of `session` with `decision`.
    async fn decide(&self, session: &str, decision: &str) {
        let pending = self.get("/api/approvals").await;
        let approval = pending
            .as_array()
            .unwrap()
            .iter()
            .find(|approval| approval["sessionId"] == session)
            .unwrap_or_else(|| panic!("no approval for {session}: {pending}"));
        let id = approval["id"].as_str().unwrap();
        let (status, body) = self
            .post(
                &format!("/api/approvals/{id}"),
                json!({ "decision": decision }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
}

/// `agent` events (run views) in arrival order.
struct Events {
    receiver: mpsc::UnboundedReceiver<Value>,
    seen: Vec<Value>,
}

impl Events {
    fn states(&self, run_id: &str) -> Vec<String> {
        self.seen
            .iter()
            .filter(|run| run["runId"] == run_id)
            .map(|run| run["state"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Reads events until `done` holds for the seen events.
    async fn until(&mut self, done: impl Fn(&[Value]) -> bool) {
        while !done(&self.seen) {
            let next = tokio::time::timeout(EVENT_DEADLINE, self.receiver.recv()).await;
            let run = next
                .expect("an agent event arrives")
                .expect("the stream stays open");
            self.seen.push(run);
        }
    }

    /// Waits until run `run_id` is in `state`.
    async fn reach(&mut self, run_id: &str, state: &str) {
        self.until(|seen| {
            seen.iter()
                .any(|run| run["runId"] == run_id && run["state"] == state)
        })
        .await;
    }

    /// Waits for the run's final state and returns every state it went through.
    async fn finished(&mut self, run_id: &str) -> Vec<String> {
        self.until(|seen| {
            seen.iter().any(|run| {
                run["runId"] == run_id && FINAL.contains(&run["state"].as_str().unwrap_or(""))
            })
        })
        .await;
        self.states(run_id)
    }

    /// The first run another agent (`mcp`) started.
    async fn first_of(&mut self, agent: &str) -> Value {
        self.until(|seen| seen.iter().any(|run| run["agent"] == agent))
            .await;
        self.seen
            .iter()
            .find(|run| run["agent"] == agent)
            .cloned()
            .unwrap()
    }

    fn detail(&self, run_id: &str, state: &str) -> String {
        self.seen
            .iter()
            .find(|run| run["runId"] == run_id && run["state"] == state)
            .and_then(|run| run["detail"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

#[tokio::test]
async fn a_read_only_local_run_goes_from_started_to_completed() {
    let studio = Studio::start().await;
    let mut events = studio.events().await;
    let run = studio.run("show the workspace status").await;
    let run_id = run["runId"].as_str().unwrap();
    assert_eq!(run["state"], "started");
    assert_eq!(events.finished(run_id).await, ["started", "completed"]);
    let row = studio.agent_row(&run).await;
    assert_eq!(row["status"], "completed");
    assert_eq!(row["source"], "model");
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn an_approved_mutation_waits_for_the_person_then_for_the_preview() {
    let studio = Studio::start().await;
    let mut events = studio.events().await;
    let run = studio.run("make it emerald").await;
    let run_id = run["runId"].as_str().unwrap();
    events.reach(run_id, "approval").await;
    assert_eq!(
        events.detail(run_id, "approval"),
        "waiting on a person for preview.setTheme"
    );
    let row = studio.agent_row(&run).await;
    assert_eq!(
        row["status"], "running",
        "the trace row is open while it waits"
    );
    studio
        .decide(run["sessionId"].as_str().unwrap(), "allow")
        .await;
    assert_eq!(
        events.finished(run_id).await,
        [
            "started",
            "approval",
            "started",
            "waiting",
            "started",
            "completed"
        ]
    );
    assert!(
        events
            .detail(run_id, "waiting")
            .starts_with("preview acknowledgement of revision "),
        "{}",
        events.detail(run_id, "waiting")
    );
    assert_eq!(studio.agent_row(&run).await["status"], "completed");
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn a_denied_call_ends_the_run_denied() {
    let studio = Studio::start().await;
    let mut events = studio.events().await;
    let run = studio.run("make it emerald").await;
    let run_id = run["runId"].as_str().unwrap();
    events.reach(run_id, "approval").await;
    studio
        .decide(run["sessionId"].as_str().unwrap(), "deny")
        .await;
    assert_eq!(
        events.finished(run_id).await,
        ["started", "approval", "denied"]
    );
    let row = studio.agent_row(&run).await;
    assert_eq!(row["status"], "failed");
    assert_eq!(row["errorCode"], "TOOL_POLICY_DENIED");
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn cancelling_mid_approval_ends_the_run_cancelled() {
    let studio = Studio::start().await;
    let mut events = studio.events().await;
    let run = studio.run("make it emerald").await;
    let run_id = run["runId"].as_str().unwrap();
    events.reach(run_id, "approval").await;
    let (status, body) = studio
        .post(&format!("/api/agent/runs/{run_id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        events.finished(run_id).await,
        ["started", "approval", "cancelled"]
    );
    assert_eq!(studio.agent_row(&run).await["status"], "cancelled");
    assert!(
        studio
            .get("/api/approvals")
            .await
            .as_array()
            .unwrap()
            .is_empty(),
        "the withdrawn approval left the queue"
    );
    studio.studio.shutdown().await;
}

/// The lifecycle notes among the progress messages (heartbeats and the route note are not).
fn lifecycle_notes(person: &Person) -> Vec<String> {
    let states = [
        "started",
        "waiting",
        "approval",
        "completed",
        "denied",
        "failed",
        "cancelled",
    ];
    person
        .progress
        .lock()
        .unwrap()
        .iter()
        .filter(|message| {
            message
                .split_once(": ")
                .is_some_and(|(state, _)| states.contains(&state))
        })
        .cloned()
        .collect()
}

/// Waits until the client has received a final lifecycle note (progress may arrive after the
/// result, as notifications are handled on their own task).
async fn final_note(person: &Person) -> Vec<String> {
    let ended = |notes: &[String]| {
        notes.iter().any(|note| {
            FINAL
                .iter()
                .any(|state| note.starts_with(&format!("{state}: ")))
        })
    };
    tokio::time::timeout(EVENT_DEADLINE, async {
        while !ended(&lifecycle_notes(person)) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the final lifecycle note arrives");
    lifecycle_notes(person)
}

#[tokio::test]
async fn an_mcp_call_is_a_run_and_its_transitions_are_progress_notifications() {
    let studio = Studio::start().await;
    let mut events = studio.events().await;
    let person = Person::approving();
    let client = connect(&studio.studio, person.clone()).await;
    let (revision, _) = read(&client, "styles.css").await;
    person.progress.lock().unwrap().clear();
    let result = call(
        &client,
        "workspace.writeFile",
        json!({"path": "styles.css", "source": "body{}", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(result["isError"], false, "{result}");
    let written = result["structuredContent"]["revision"].as_u64().unwrap();
    assert_eq!(
        final_note(&person).await,
        [
            "started: workspace.writeFile".to_owned(),
            "approval: waiting on a person for workspace.writeFile".to_owned(),
            "started: approved; running workspace.writeFile".to_owned(),
            format!("waiting: preview acknowledgement of revision {written}"),
            "started: workspace.writeFile finished".to_owned(),
            "completed: workspace.writeFile".to_owned(),
        ]
    );
    // The page sees the same call as a run of agent `mcp` in the MCP session. (The read
    // before it was a run too; the write is the last one.)
    events
        .until(|seen| {
            seen.iter().any(|run| {
                run["agent"] == "mcp"
                    && run["state"] == "completed"
                    && run["report"]["toolNames"][0] == "workspace.writeFile"
            })
        })
        .await;
    let first = events.first_of("mcp").await;
    assert!(first["sessionId"].as_str().unwrap().starts_with("mcp-"));
    let write = events
        .seen
        .iter()
        .rev()
        .find(|run| run["agent"] == "mcp" && run["state"] == "completed")
        .cloned()
        .unwrap();
    let write_id = write["runId"].as_str().unwrap();
    assert_eq!(
        events.states(write_id),
        [
            "started",
            "approval",
            "started",
            "waiting",
            "started",
            "completed"
        ]
    );
    assert_eq!(write["sessionId"], first["sessionId"]);
    let row = studio.agent_row(&write).await;
    assert_eq!(
        (&row["status"], &row["source"]),
        (&json!("completed"), &json!("mcp"))
    );
    client.cancel().await.unwrap();
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn an_mcp_call_nobody_can_approve_ends_denied() {
    let studio = Studio::start().await;
    let person = Person::absent();
    let client = connect(&studio.studio, person.clone()).await;
    let (revision, _) = read(&client, "index.html").await;
    person.progress.lock().unwrap().clear();
    let result = call(
        &client,
        "workspace.writeFile",
        json!({"path": "index.html", "source": "x", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(error(&result)["code"], "TOOL_POLICY_DENIED");
    assert_eq!(
        final_note(&person).await,
        [
            "started: workspace.writeFile",
            "denied: workspace.writeFile (TOOL_POLICY_DENIED)"
        ]
    );
    client.cancel().await.unwrap();
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn the_page_cancels_an_mcp_call_waiting_for_its_approval() {
    let studio = Studio::start().await;
    let _page = studio.studio.state.pages.attach();
    let mut events = studio.events().await;
    let person = Person::approving();
    let client = connect(&studio.studio, person.clone()).await;
    let (revision, _) = read(&client, "index.html").await;
    person.progress.lock().unwrap().clear();
    let pending = {
        let peer = client.peer().clone();
        let arguments = json!({"path": "index.html", "source": "x", "expectedRevision": revision});
        let params = CallToolRequestParams::new("workspace.writeFile")
            .with_arguments(arguments.as_object().cloned().unwrap());
        tokio::spawn(
            async move { serde_json::to_value(peer.call_tool(params).await.unwrap()).unwrap() },
        )
    };
    events
        .until(|seen| {
            seen.iter()
                .any(|run| run["agent"] == "mcp" && run["state"] == "approval")
        })
        .await;
    let waiting = events
        .seen
        .iter()
        .find(|run| run["agent"] == "mcp" && run["state"] == "approval")
        .cloned()
        .unwrap();
    let run_id = waiting["runId"].as_str().unwrap();
    let (status, body) = studio
        .post(&format!("/api/agent/runs/{run_id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let result = pending.await.unwrap();
    assert_eq!(error(&result)["code"], "TOOL_CANCELLED");
    assert_eq!(
        events.finished(run_id).await,
        ["started", "approval", "cancelled"]
    );
    assert_eq!(
        final_note(&person).await,
        [
            "started: workspace.writeFile",
            "approval: waiting on a person for workspace.writeFile",
            "cancelled: workspace.writeFile (TOOL_CANCELLED)"
        ]
    );
    assert!(
        person.asked.lock().unwrap().is_empty(),
        "the page's queue was asked, not the client"
    );
    client.cancel().await.unwrap();
    studio.studio.shutdown().await;
}

/// A loopback chat-completions endpoint: the first turn asks for `workspace.getStatus` (by
/// whatever provider name the request listed it under), the second answers in text.
async fn fake_provider() -> String {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let turns = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(request): axum::Json<Value>| {
            let turn = turns.fetch_add(1, Ordering::SeqCst);
            async move {
                if turn > 0 {
                    let message = json!({"role": "assistant", "content": "The workspace is fine."});
                    return axum::Json(json!({"choices": [{"message": message}]}));
                }
                let status_tool = request["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                    .find(|name| name.contains("getStatus"))
                    .expect("workspace.getStatus is offered");
                let call = json!({"id": "call-1", "type": "function",
                    "function": {"name": status_tool, "arguments": "{}"}});
                let message = json!({"role": "assistant", "content": null, "tool_calls": [call]});
                axum::Json(json!({"choices": [{"message": message}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1/chat/completions",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn an_openrouter_run_waits_for_the_provider_on_each_turn() {
    let endpoint = fake_provider().await;
    let studio = Studio::start().await;
    let (status, body) = studio
        .put(
            "/api/settings",
            json!({"endpoint": endpoint, "apiKey": "test-key"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut events = studio.events().await;
    let (status, run) = studio
        .post(
            "/api/agent/runs",
            json!({"prompt": "how is the workspace?", "agent": "openrouter"}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    let run_id = run["runId"].as_str().unwrap();
    assert_eq!(
        events.finished(run_id).await,
        [
            "started",
            "waiting",
            "started",
            "waiting",
            "started",
            "completed"
        ]
    );
    assert_eq!(
        events.detail(run_id, "waiting"),
        "waiting for the provider (turn 1)"
    );
    assert_eq!(studio.agent_row(&run).await["status"], "completed");
    studio.studio.shutdown().await;
}
