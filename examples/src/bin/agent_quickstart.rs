//! The getting-started agent in one file (walked through in GETTING_STARTED.md): typed tools,
//! a person's approval with its own timeout, exactly-once keyed calls on SQLite (a second
//! process replays), the provider loop on any OpenAI-compatible server, stdio MCP, tracing.
//!
//! ```text
//! agent_quickstart DIR append KEY TEXT    # asks on stderr (y on stdin approves); once per KEY
//! agent_quickstart DIR ask URL MODEL TEXT # the model may call the tools (same approvals)
//! agent_quickstart DIR serve              # MCP over stdio: stdout is the protocol
//! ```
use std::{io::BufRead, path::PathBuf, sync::Arc, sync::OnceLock, time::Duration};

use openrouter_tool_loop::{ApiKey, ChatClient, OpenRouterConfig, ProviderProfile};
use openrouter_tool_loop::{RegistryExecutor, RunOptions, RunRequest};
use tool_context::prelude::*;
use tool_context::tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_context_mcp::{McpToolServer, serve_stdio};

static NOTES: OnceLock<PathBuf> = OnceLock::new();

/// Appends a line to the notes and returns how many lines they have.
#[tool(destructive, name = "notes.append")]
async fn append(
    /// The line to append.
    text: String,
) -> Result<usize, ToolCallError> {
    let notes = format!("{}{text}\n", read().await?);
    let written = tokio::fs::write(NOTES.get().expect("set by main"), &notes).await;
    written.map_err(|error| ToolCallError::new("NOTES_WRITE_FAILED", error.to_string()))?;
    Ok(notes.lines().count())
}

/// Reads the notes.
#[tool(read_only, name = "notes.read")]
async fn read() -> Result<String, ToolCallError> {
    let path = NOTES.get().expect("set by main");
    Ok(tokio::fs::read_to_string(path).await.unwrap_or_default())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: over stdio MCP, stdout is the protocol channel.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, command, rest @ ..] = args.as_slice() else {
        return Err("usage: agent_quickstart DIR (append KEY TEXT | ask URL MODEL TEXT | serve)")?;
    };
    NOTES.set(PathBuf::from(dir).join("notes.txt")).ok();
    let backend = SqliteBackend::open(PathBuf::from(dir).join("operations.db")).await?;
    let approvals = ApprovalQueue::new();
    let registry = ToolRegistry::builder()
        .tool(append::tool())
        .tool(read::tool())
        .interaction(approvals.clone())
        .approval_timeout(Duration::from_secs(60))
        .durable_store(Arc::new(DurableOperationStore::new(Arc::new(backend))))
        .build()?;
    match (command.as_str(), rest) {
        ("append", [key, text]) => {
            tokio::spawn(answer_on_stdin(approvals));
            let arguments = serde_json::json!({ "text": text }).as_object().cloned();
            let call = ModelToolCall::new("cli-1", "notes.append", arguments.unwrap_or_default());
            let options = ToolCallOptions::default().with_idempotency_key(key);
            let result = registry
                .execute_model_tool_call(call, options.with_timeout_ms(5_000))
                .await;
            println!("{}", serde_json::to_string(&result)?);
        }
        ("ask", [url, model, text]) => {
            tokio::spawn(answer_on_stdin(approvals));
            let profile = ProviderProfile::OpenAiCompatible;
            let config = OpenRouterConfig::for_provider(profile, url, ApiKey::default());
            let client = ChatClient::new(config.with_model(model))?;
            let (tools, request) = (RegistryExecutor::new(registry), RunRequest::new(text));
            let done = client.run(&tools, request, RunOptions::default()).await?;
            println!("{}", done.text);
        }
        ("serve", []) => serve_stdio(&McpToolServer::new(registry)).await?,
        _ => return Err(format!("unknown command {command} {rest:?}"))?,
    }
    Ok(())
}

/// Answers each approval from a line of stdin: `y` approves, anything else (or EOF) denies.
async fn answer_on_stdin(approvals: ApprovalQueue) {
    while let Some(pending) = approvals.next_pending().await {
        eprintln!("approve {} ({})? [y/N]", pending.name, pending.id);
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).map(|_| line)
        });
        let approved = matches!(line.await, Ok(Ok(line)) if line.trim() == "y");
        let decision = [ApprovalDecision::Deny, ApprovalDecision::Allow][usize::from(approved)];
        approvals.resolve(&pending.id, decision);
    }
}
