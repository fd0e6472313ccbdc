//! An rmcp test client shared by the studio's MCP tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use live_code_studio::host::RunningStudio;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

/// The Python MCP test server the MCP-server tests mount (its argument `normal` makes it
/// well behaved).
pub const PYTHON_TEST_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tool-context-mcp/tests/peers/python_misbehaving_server.py"
);

/// A client that accepts every confirmation (with `{}`) or does not support elicitation.
#[derive(Clone)]
pub struct Person {
    /// Whether the client supports elicitation (and accepts every request).
    pub elicits: bool,
    /// The messages of the elicitation requests it got.
    pub asked: Arc<Mutex<Vec<String>>>,
    /// The messages of the progress notifications it got.
    pub progress: Arc<Mutex<Vec<String>>>,
}

impl Person {
    /// A person at the client who accepts every confirmation.
    pub fn approving() -> Self {
        Self {
            elicits: true,
            asked: Arc::default(),
            progress: Arc::default(),
        }
    }

    /// A client without elicitation: nobody there to ask.
    pub fn absent() -> Self {
        Self {
            elicits: false,
            asked: Arc::default(),
            progress: Arc::default(),
        }
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicits {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("studio-mcp-tests", "0.0.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({}));
        Ok(result)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

/// A connected rmcp client acting as a [`Person`].
pub type Client = RunningService<RoleClient, Person>;

/// Connects `person` to the studio's `/mcp` over streamable HTTP, with the studio's token.
pub async fn connect(studio: &RunningStudio, person: Person) -> Client {
    let headers = HashMap::from([(
        HeaderName::from_static("x-studio-token"),
        HeaderValue::from_str(studio.token()).unwrap(),
    )]);
    let url = format!("http://127.0.0.1:{}/mcp", studio.addr.port());
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    person.serve(transport).await.unwrap()
}

/// Calls `name` and returns the MCP result as JSON.
pub async fn call(client: &Client, name: &str, arguments: Value) -> Value {
    let params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap());
    serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap()
}

/// The coded error of an error result.
pub fn error(result: &Value) -> &Value {
    assert_eq!(result["isError"], true, "{result}");
    &result["_meta"]["tool-context/error"]
}

/// The current workspace revision and `path`'s source, read through MCP.
pub async fn read(client: &Client, path: &str) -> (u64, String) {
    let result = call(client, "workspace.readFile", json!({"path": path})).await;
    assert_eq!(result["isError"], false, "{result}");
    let file = &result["structuredContent"];
    (
        file["revision"].as_u64().unwrap(),
        file["source"].as_str().unwrap().to_owned(),
    )
}
