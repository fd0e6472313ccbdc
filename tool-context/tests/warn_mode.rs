//! `ValidationMode::Warn` with typed tools: schema issues are logged and the handler runs, as
//! long as the arguments still decode into the handler's input type (issue 19).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry, ValidationMode};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolCallResult, codes};

#[derive(Deserialize, JsonSchema)]
struct RenameInput {
    #[schemars(length(min = 1))]
    path: String,
    #[schemars(range(min = 1))]
    count: u32,
}

#[derive(Serialize, JsonSchema)]
struct RenameOutput {
    path: String,
    count: u32,
}

fn registry(mode: ValidationMode, runs: &Arc<AtomicUsize>) -> ToolRegistry {
    let runs = Arc::clone(runs);
    let rename = move |input: RenameInput, _call: ToolInvocation| {
        runs.fetch_add(1, Ordering::SeqCst);
        async move {
            Ok::<_, ToolCallError>(RenameOutput {
                path: input.path,
                count: input.count,
            })
        }
    };
    ToolRegistry::builder()
        .tool(Tool::typed("fs.rename", "Renames.", rename))
        .validation_mode(mode)
        .policy(AllowAll)
        .build()
        .unwrap()
}

async fn call(registry: &ToolRegistry, arguments: serde_json::Value) -> ToolCallResult {
    let arguments = arguments.as_object().cloned().unwrap();
    registry
        .call_tool(
            ToolCallRequest::new("fs.rename", arguments),
            ToolCallOptions::default(),
        )
        .await
}

#[tokio::test]
async fn warn_mode_runs_a_typed_handler_on_input_that_fails_the_schema_but_decodes() {
    let runs = Arc::default();
    let registry = registry(ValidationMode::Warn, &runs);
    let result = call(&registry, json!({"path": "", "count": 0})).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"path": "", "count": 0}))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Strict mode refuses the same input before the handler.
    let strict = registry_strict();
    let refused = call(&strict, json!({"path": "", "count": 0})).await;
    assert_eq!(refused.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
}

fn registry_strict() -> ToolRegistry {
    registry(ValidationMode::Strict, &Arc::default())
}

#[tokio::test]
async fn warn_mode_says_when_a_typed_handler_cannot_decode_the_input() {
    let runs = Arc::default();
    let registry = registry(ValidationMode::Warn, &runs);
    let result = call(&registry, json!({"path": 5})).await;
    let error = result.error.expect("an error");
    assert_eq!(error.code, codes::TOOL_VALIDATION_FAILED);
    assert_eq!(
        error.message,
        "Tool \"fs.rename\" arguments could not be decoded in warn mode: warn mode runs a typed handler only on arguments that decode into its input type"
    );
    let issues = &error.details.unwrap()["issues"];
    assert!(
        issues.as_array().is_some_and(|issues| !issues.is_empty()),
        "{issues}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
