//! One real OpenRouter prompt against two small demo tools.
//!
//! ```text
//! OPENROUTER_API_KEY=sk-or-... cargo run -p live-code-studio --bin openrouter-demo
//! ```
//!
//! Optional: `OPENROUTER_MODEL` (default `openai/gpt-4o-mini`), `OPENROUTER_ENDPOINT`, and
//! `OPENROUTER_DATA_POLICY` = `allow` | `deny` | `zdr`. Without a key it explains what it needs
//! and exits successfully. The key stays in memory and is never printed.

use std::process::ExitCode;

use openrouter_tool_loop::{
    API_KEY_ENV, DataPolicy, OpenRouterClient, OpenRouterConfig, RunEvent, RunOptions, RunRequest,
    ToolExecutor, async_trait,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallResult, ToolDefinition, codes,
};

const PROMPT: &str = "What is 1234.5 plus 8765.25? And how many words are in the sentence \
                      'safe tool calling keeps every mutation bounded'? Use the tools, then answer in one sentence.";

/// Two demo tools: `math.add` and `text.countWords`.
struct DemoTools;

#[async_trait]
impl ToolExecutor for DemoTools {
    async fn list_tools(&self) -> Vec<ToolDefinition> {
        vec![
            ToolDefinition::new(
                "math.add",
                "Adds two numbers and returns their sum.",
                json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"], "additionalProperties": false}),
            ),
            ToolDefinition::new(
                "text.countWords",
                "Counts the whitespace-separated words of a text.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}),
            ),
        ]
    }

    async fn call_tool(
        &self,
        call: ModelToolCall,
        _context: ToolCallContext,
        _cancel: CancellationToken,
    ) -> ToolCallResult {
        let arguments = call.arguments.unwrap_or_default();
        let result = match call.name.as_str() {
            "math.add" => match (
                arguments.get("a").and_then(Value::as_f64),
                arguments.get("b").and_then(Value::as_f64),
            ) {
                (Some(a), Some(b)) => Ok(json!({"sum": a + b})),
                _ => Err(invalid_arguments("math.add needs numbers a and b.")),
            },
            "text.countWords" => match arguments.get("text").and_then(Value::as_str) {
                Some(text) => Ok(json!({"words": text.split_whitespace().count()})),
                None => Err(invalid_arguments("text.countWords needs a string text.")),
            },
            other => Err(ToolCallError::new(
                codes::TOOL_NOT_FOUND,
                format!("Tool \"{other}\" not found in registry"),
            )),
        };
        match result {
            Ok(value) => ToolCallResult::success(value),
            Err(error) => ToolCallResult::failure(error),
        }
    }
}

fn invalid_arguments(message: &str) -> ToolCallError {
    ToolCallError::new(codes::TOOL_VALIDATION_FAILED, message).with_retryable(false)
}

fn describe(event: &RunEvent) -> Option<String> {
    Some(match event {
        RunEvent::RunStarted { session_id, model } => format!("run {session_id} with {model}"),
        RunEvent::ToolsListed { count } => format!("{count} tools listed"),
        RunEvent::RequestSent { turn, attempt } => {
            format!("turn {turn}: request (attempt {attempt})")
        }
        RunEvent::RetryScheduled {
            attempt,
            max_attempts,
            delay_ms,
            reason,
            code,
            ..
        } => {
            format!("retry {attempt}/{max_attempts} in {delay_ms} ms ({reason:?}, {code})")
        }
        RunEvent::ToolCallStarted {
            name,
            provider_name,
            ..
        } => format!("calling {name} (as {provider_name})"),
        RunEvent::ToolCallFinished {
            name,
            status,
            code,
            duration_ms,
            ..
        } => {
            format!(
                "{name}: {status:?}{} in {duration_ms} ms",
                code.as_deref().map(|c| format!(" {c}")).unwrap_or_default()
            )
        }
        _ => return None,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(mut config) = OpenRouterConfig::from_env() else {
        println!("openrouter-demo needs an OpenRouter API key to run a real prompt.");
        println!("Set {API_KEY_ENV} (create one at openrouter.ai/keys), then run again:");
        println!("  {API_KEY_ENV}=sk-or-... cargo run -p live-code-studio --bin openrouter-demo");
        println!(
            "Optional: OPENROUTER_MODEL, OPENROUTER_ENDPOINT, OPENROUTER_DATA_POLICY=allow|deny|zdr."
        );
        println!("Nothing was sent.");
        return ExitCode::SUCCESS;
    };
    if let Ok(policy) = std::env::var("OPENROUTER_DATA_POLICY") {
        match DataPolicy::parse(&policy) {
            Some(policy) => config.data_policy = policy,
            None => {
                eprintln!("OPENROUTER_DATA_POLICY must be allow, deny or zdr.");
                return ExitCode::FAILURE;
            }
        }
    }
    config = config.with_attribution(
        "https://github.com/context-action/tool-calling-rs",
        "tool-calling-rs openrouter-demo",
    );
    let client = match OpenRouterClient::new(config) {
        Ok(client) => client,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let options = RunOptions::with_cancel(cancel).on_event(|event| {
        if let Some(line) = describe(event) {
            println!("· {line}");
        }
    });
    println!("prompt: {PROMPT}");
    match client
        .run(&DemoTools, RunRequest::new(PROMPT), options)
        .await
    {
        Ok(done) => {
            println!("\nanswer: {}", done.text);
            println!("tools called: {}", done.trace.tool_names.join(", "));
            ExitCode::SUCCESS
        }
        Err(failure) => {
            let hint = if failure.error.retryable {
                "retryable"
            } else {
                "not retryable"
            };
            eprintln!("\nrun failed ({hint}): {}", failure.error);
            ExitCode::FAILURE
        }
    }
}
