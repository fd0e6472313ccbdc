//! `#[tool]` on an `async fn` (feature `macros`): the listed definition (name, description,
//! closed input schema with parameter docs, hints) and calls through the registry pipeline.
//! The macro's compile errors are unit-tested in `tool-context-macros` on `syn` input.

use std::sync::Mutex;

use serde_json::{Value, json};
use tool_context::{AllowAll, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_protocol::{
    ToolCallError, ToolCallId, ToolCallRequest, ToolCallResult, ToolDefinition, codes,
};

/// A domain error that converts into a coded tool error.
#[derive(Debug)]
enum MathError {
    Overflow,
}

impl From<MathError> for ToolCallError {
    fn from(error: MathError) -> Self {
        match error {
            MathError::Overflow => {
                ToolCallError::new("MATH_OVERFLOW", "the sum does not fit in an i64")
                    .with_retryable(false)
            }
        }
    }
}

/// The calls `add` saw: (tool name, provider call id).
static SEEN: Mutex<Vec<(String, Option<ToolCallId>)>> = Mutex::new(Vec::new());

/// Adds two integers.
///
/// Both must be integers; the sum must fit in an `i64`.
#[tool_context::tool(read_only, name = "math.add")]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
    call: ToolInvocation,
) -> Result<i64, MathError> {
    SEEN.lock()
        .unwrap()
        .push((call.tool_name.clone(), call.tool_call_id.clone()));
    a.checked_add(b).ok_or(MathError::Overflow)
}

mod files {
    use serde::Serialize;
    use tool_context::tool;

    /// A private output type: the generated module reaches it through `use super::*`.
    #[derive(Serialize, schemars::JsonSchema)]
    pub(crate) struct Removed {
        pub(crate) path: String,
        pub(crate) recursive: bool,
    }

    /// Removes a path.
    #[tool(destructive, idempotent, open_world, title = "Remove")]
    pub(crate) async fn remove(
        /// What to remove.
        path: String,
        /// Remove a folder with its contents.
        #[serde(default)]
        recursive: bool,
        /// Called `type` on the wire.
        #[serde(rename = "type")]
        kind: Option<String>,
    ) -> Result<Removed, tool_protocol::ToolCallError> {
        let _ = kind;
        Ok(Removed { path, recursive })
    }

    /** Does nothing, offline. */
    #[tool(open_world = false)]
    pub(crate) async fn noop() -> Result<(), tool_protocol::ToolCallError> {
        Ok(())
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .tool(add::tool())
        .tool(files::remove::tool())
        .tool(files::noop::tool())
        .policy(AllowAll)
        .build()
        .unwrap()
}

fn definition(registry: &ToolRegistry, name: &str) -> ToolDefinition {
    registry.tool_definition(name).unwrap()
}

async fn call(registry: &ToolRegistry, name: &str, arguments: Value) -> ToolCallResult {
    registry
        .call_tool(
            ToolCallRequest::new(name, arguments.as_object().cloned().unwrap()).with_id("call-7"),
            ToolCallOptions::default(),
        )
        .await
}

#[test]
fn the_definition_comes_from_the_function() {
    let registry = registry();
    let mut names = registry.tool_names();
    names.sort();
    assert_eq!(names, ["math.add", "noop", "remove"]);

    let add = definition(&registry, "math.add");
    assert_eq!(
        add.description.as_deref(),
        Some("Adds two integers.\n\nBoth must be integers; the sum must fit in an `i64`.")
    );
    let schema = &add.input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["a"]["type"], "integer");
    assert_eq!(
        schema["properties"]["a"]["description"],
        "The first addend."
    );
    assert_eq!(
        schema["properties"]["b"]["description"],
        "The second addend."
    );
    // `ToolInvocation` is passed through, not an argument.
    assert!(schema["properties"].get("call").is_none());
    assert!(add.is_read_only());
    let hints = add.annotations.as_ref().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.destructive_hint, None);
    assert_eq!(hints.open_world_hint, None);
    // An integer output is not an object, so there is no output schema (as with `Tool::typed`).
    assert!(add.output_schema.is_none());
    assert!(add.title.is_none());
}

#[test]
fn options_set_title_hints_and_serde_attributes_reach_the_schema() {
    let registry = registry();
    let remove = definition(&registry, "remove");
    assert_eq!(remove.description.as_deref(), Some("Removes a path."));
    assert_eq!(remove.title.as_deref(), Some("Remove"));
    let hints = remove.annotations.as_ref().unwrap();
    assert_eq!(hints.destructive_hint, Some(true));
    assert_eq!(hints.read_only_hint, Some(false));
    assert_eq!(hints.idempotent_hint, Some(true));
    assert_eq!(hints.open_world_hint, Some(true));
    let schema = &remove.input_schema;
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["recursive"]["description"],
        "Remove a folder with its contents."
    );
    assert_eq!(
        schema["properties"]["type"]["description"],
        "Called `type` on the wire."
    );
    assert!(schema["properties"].get("kind").is_none());
    let output = remove.output_schema.as_ref().unwrap();
    assert_eq!(output["required"], json!(["path", "recursive"]));

    let noop = definition(&registry, "noop");
    assert_eq!(noop.description.as_deref(), Some("Does nothing, offline."));
    assert_eq!(
        noop.annotations.as_ref().unwrap().open_world_hint,
        Some(false)
    );
    // No arguments: a closed, empty object.
    assert_eq!(noop.input_schema["properties"], json!({}));
    assert_eq!(noop.input_schema["additionalProperties"], false);
    assert!(noop.output_schema.is_none());
}

#[tokio::test]
async fn a_call_runs_the_function_with_its_arguments_and_the_invocation() {
    let registry = registry();
    let result = call(&registry, "math.add", json!({"a": 2, "b": 40})).await;
    assert!(result.error.is_none(), "{result:?}");
    assert_eq!(result.structured_content, Some(json!(42)));
    assert!(
        SEEN.lock()
            .unwrap()
            .contains(&("math.add".to_owned(), Some(ToolCallId::from("call-7"))))
    );

    let removed = call(
        &registry,
        "remove",
        json!({"path": "a/b", "type": "folder"}),
    )
    .await;
    assert_eq!(
        removed.structured_content,
        Some(json!({"path": "a/b", "recursive": false}))
    );

    // `Result<(), E>` is an empty success.
    let empty = call(&registry, "noop", json!({})).await;
    assert!(empty.error.is_none(), "{empty:?}");
    assert!(empty.structured_content.is_none());
    let extra = call(&registry, "noop", json!({"x": 1})).await;
    assert_eq!(extra.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
}

#[tokio::test]
async fn a_handler_error_converts_into_its_coded_tool_error() {
    let registry = registry();
    let result = call(&registry, "math.add", json!({"a": i64::MAX, "b": 1})).await;
    assert_eq!(result.error_code(), Some("MATH_OVERFLOW"), "{result:?}");
    let error = result.error.unwrap();
    assert_eq!(error.message, "the sum does not fit in an i64");
    assert_eq!(error.retryable, Some(false));
}

#[tokio::test]
async fn strict_validation_refuses_unknown_and_missing_arguments() {
    let registry = registry();
    let unknown = call(&registry, "math.add", json!({"a": 1, "b": 2, "c": 3})).await;
    assert_eq!(
        unknown.error_code(),
        Some(codes::TOOL_VALIDATION_FAILED),
        "{unknown:?}"
    );
    let missing = call(&registry, "math.add", json!({"a": 1})).await;
    assert_eq!(missing.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
    let renamed_away = call(&registry, "remove", json!({"path": "a", "kind": "x"})).await;
    assert_eq!(
        renamed_away.error_code(),
        Some(codes::TOOL_VALIDATION_FAILED)
    );
}

#[tokio::test]
async fn the_function_stays_callable_as_written() {
    let removed = files::remove("x".to_owned(), true, None).await.unwrap();
    assert_eq!((removed.path.as_str(), removed.recursive), ("x", true));
    files::noop().await.unwrap();
    // `Args` is a plain public struct of the arguments.
    let args = add::Args { a: 1, b: 2 };
    assert_eq!(args.a + args.b, 3);
}
