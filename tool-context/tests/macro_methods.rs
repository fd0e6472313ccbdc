//! `#[tools]` on an impl block (feature `macros`): each `#[tool]` method is a tool sharing the
//! value's state, with the function form's description, closed schema and hints; the block's
//! other methods stay as written. The compile errors are unit-tested in `tool-context-macros`.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_context::{AllowAll, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolCallResult};

/// Notes kept in memory: the state every tool of the block shares.
#[derive(Default)]
struct Notes {
    lines: Mutex<Vec<String>>,
}

#[tool_context::tools]
impl Notes {
    /// Appends a line to the notes.
    #[tool(name = "notes.append", destructive, title = "Append a note")]
    async fn append(
        &self,
        /// The line to add.
        text: String,
        call: ToolInvocation,
    ) -> Result<Value, ToolCallError> {
        let count = self.push(text);
        Ok(json!({"count": count, "tool": call.tool_name}))
    }

    /// Reads every line.
    #[tool(name = "notes.read", read_only)]
    async fn read(&self) -> Result<Vec<String>, ToolCallError> {
        Ok(self.lines.lock().unwrap().clone())
    }

    /// Clears the notes; refuses when they are already empty.
    #[tool_context::tool(name = "notes.clear", destructive, idempotent)]
    async fn clear(&self) -> Result<(), ToolCallError> {
        let mut lines = self.lines.lock().unwrap();
        if lines.is_empty() {
            return Err(ToolCallError::new(
                "NOTES_EMPTY",
                "there is nothing to clear",
            ));
        }
        lines.clear();
        Ok(())
    }

    /// Not a tool: stays a plain method.
    fn push(&self, line: String) -> usize {
        let mut lines = self.lines.lock().unwrap();
        lines.push(line);
        lines.len()
    }
}

fn registry(notes: &Arc<Notes>) -> ToolRegistry {
    ToolRegistry::builder()
        .tools(notes.tools())
        .policy(AllowAll)
        .build()
        .unwrap()
}

async fn call(registry: &ToolRegistry, name: &str, arguments: Value) -> ToolCallResult {
    registry
        .call_tool(
            ToolCallRequest::new(name, arguments.as_object().cloned().unwrap()),
            ToolCallOptions::default(),
        )
        .await
}

#[test]
fn each_marked_method_is_a_tool_with_its_doc_schema_and_hints() {
    let notes = Arc::new(Notes::default());
    let tools = notes.tools();
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool.definition().name.as_str())
        .collect();
    assert_eq!(names, ["notes.append", "notes.read", "notes.clear"]);
    let append = tools[0].definition();
    assert_eq!(
        append.description.as_deref(),
        Some("Appends a line to the notes.")
    );
    assert_eq!(append.title.as_deref(), Some("Append a note"));
    assert_eq!(append.input_schema["required"], json!(["text"]));
    assert_eq!(append.input_schema["additionalProperties"], json!(false));
    assert_eq!(
        append.input_schema["properties"]["text"]["description"],
        "The line to add."
    );
    assert!(!append.is_read_only());
    assert!(tools[1].definition().is_read_only());
    assert_eq!(
        tools[1].definition().input_schema["additionalProperties"],
        json!(false),
        "a method without arguments takes a closed, empty object"
    );
    let clear = tools[2].definition().annotations.clone().unwrap();
    assert_eq!(clear.destructive_hint, Some(true));
    assert_eq!(clear.idempotent_hint, Some(true));
}

#[tokio::test]
async fn the_tools_share_the_value_they_were_made_from() {
    let notes = Arc::new(Notes::default());
    let registry = registry(&notes);
    let appended = call(&registry, "notes.append", json!({"text": "first"})).await;
    assert_eq!(
        appended.structured_content,
        Some(json!({"count": 1, "tool": "notes.append"})),
        "{appended:?}"
    );
    call(&registry, "notes.append", json!({"text": "second"})).await;
    // The same value the caller holds: a plain method sees what the tools did.
    assert_eq!(notes.push("third".into()), 3);
    let read = call(&registry, "notes.read", json!({})).await;
    assert_eq!(
        read.structured_content,
        Some(json!(["first", "second", "third"])),
        "{read:?}"
    );
    let cleared = call(&registry, "notes.clear", json!({})).await;
    assert!(!cleared.is_error(), "{cleared:?}");
    assert!(notes.lines.lock().unwrap().is_empty());
    let again = call(&registry, "notes.clear", json!({})).await;
    assert_eq!(
        again.error.as_ref().map(|error| error.code.as_str()),
        Some("NOTES_EMPTY")
    );
    let refused = call(&registry, "notes.append", json!({"text": 3})).await;
    assert!(refused.is_error(), "arguments are validated: {refused:?}");
}
