//! Three tools, their OpenAI and MCP exports, and a model call that the policy sends to the
//! approval queue, approved by a person (here: a task).
//!
//! Run with `cargo run -p tool-context --example registry`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{
    ApprovalDecision, ApprovalQueue, ApprovalQueueConfig, ReadOnlyOrDirectLocal, Tool,
    ToolCallOptions, ToolInvocation, ToolRegistry,
};
use tool_protocol::export::OpenAiExportOptions;
use tool_protocol::{ModelToolCall, ToolCallError, ToolCallEvent, ToolDefinition};

type Notes = Arc<Mutex<BTreeMap<String, String>>>;

#[derive(Deserialize, JsonSchema)]
struct ListInput {}

#[derive(Serialize, JsonSchema)]
struct ListOutput {
    titles: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
struct AddInput {
    /// Title of the note.
    title: String,
    /// Body of the note.
    body: String,
}

#[derive(Serialize, JsonSchema)]
struct AddOutput {
    title: String,
    count: usize,
}

fn tools(notes: &Notes) -> Vec<Tool> {
    let list = {
        let notes = notes.clone();
        Tool::typed(
            "notes.list",
            "Lists note titles.",
            move |_: ListInput, _: ToolInvocation| {
                let titles = notes.lock().unwrap().keys().cloned().collect();
                async move { Ok::<_, ToolCallError>(ListOutput { titles }) }
            },
        )
        .read_only()
    };
    let add = {
        let notes = notes.clone();
        Tool::typed(
            "notes.add",
            "Adds a note.",
            move |input: AddInput, _: ToolInvocation| {
                let mut notes = notes.lock().unwrap();
                notes.insert(input.title.clone(), input.body);
                let output = AddOutput {
                    title: input.title,
                    count: notes.len(),
                };
                async move { Ok::<_, ToolCallError>(output) }
            },
        )
    };
    let delete = {
        let notes = notes.clone();
        let schema = json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1}}, "required": ["title"]});
        Tool::new(
            ToolDefinition::new("notes.delete", "Deletes a note.", schema),
            move |arguments: Value, _: ToolInvocation| {
                let removed = notes
                    .lock()
                    .unwrap()
                    .remove(arguments["title"].as_str().unwrap_or_default())
                    .is_some();
                async move {
                    if removed {
                        Ok(json!({"deleted": true}))
                    } else {
                        Err(
                            ToolCallError::new("NOTE_NOT_FOUND", "No note has that title.")
                                .with_retryable(false),
                        )
                    }
                }
            },
        )
        .destructive()
    };
    vec![list, add, delete]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let notes: Notes = Arc::default();
    let queue = ApprovalQueue::with_config(ApprovalQueueConfig {
        safe_argument_names: vec!["title".into()],
        ..ApprovalQueueConfig::default()
    });
    let registry = ToolRegistry::builder()
        .tools(tools(&notes))
        .policy(ReadOnlyOrDirectLocal)
        .interaction(queue.clone())
        .observer(|event: &ToolCallEvent| {
            println!(
                "event: {:?} {} ({:?})",
                event.event_type, event.name, event.provenance.state
            );
        })
        .build()?;

    println!(
        "OpenAI tools:\n{}",
        serde_json::to_string_pretty(&registry.to_openai_tools(&OpenAiExportOptions::default()))?
    );
    println!(
        "MCP tools:\n{}",
        serde_json::to_string_pretty(&registry.to_mcp_tools())?
    );

    // A person watches the approval queue and approves what they see.
    let approver = {
        let queue = queue.clone();
        tokio::spawn(async move {
            let mut updates = queue.subscribe();
            let pending = updates
                .wait_for(|pending| !pending.is_empty())
                .await
                .expect("the queue is alive")
                .clone();
            let request = &pending[0];
            println!(
                "approval requested: {} {} [{}]",
                request.id,
                request.name,
                request.safe_argument_preview.as_deref().unwrap_or("")
            );
            queue.resolve(&request.id, ApprovalDecision::Allow);
        })
    };
    let call: ModelToolCall = serde_json::from_value(
        json!({"id": "call_1", "name": "notes.add", "arguments": {"title": "groceries", "body": "eggs"}}),
    )?;
    let options = ToolCallOptions::default()
        .with_timeout_ms(30_000)
        .with_cancellation(CancellationToken::new());
    let result = registry.execute_model_tool_call(call, options).await;
    approver.await?;
    println!("notes.add result: {}", serde_json::to_string(&result)?);

    let list: ModelToolCall =
        serde_json::from_value(json!({"id": "call_2", "name": "notes.list"}))?;
    let listed = registry
        .execute_model_tool_call(list, ToolCallOptions::default())
        .await;
    println!("notes.list result: {}", serde_json::to_string(&listed)?);
    Ok(())
}
