//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tool_context::{Tool, ToolCallObserver, ToolInvocation};
use tool_protocol::{
    ToolCallError, ToolCallEvent, ToolCallEventType, ToolCallRequest, ToolDefinition,
};

/// Collects every event.
#[derive(Clone, Default)]
pub struct Recorder(pub Arc<Mutex<Vec<ToolCallEvent>>>);

impl Recorder {
    pub fn events(&self) -> Vec<ToolCallEvent> {
        self.0.lock().unwrap().clone()
    }
    pub fn types(&self) -> Vec<ToolCallEventType> {
        self.events().iter().map(|event| event.event_type).collect()
    }
}

impl ToolCallObserver for Recorder {
    fn on_event(&self, event: &ToolCallEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

/// A counter shared with a handler.
#[derive(Clone, Default)]
pub struct Counter(pub Arc<AtomicUsize>);

impl Counter {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    pub fn bump(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
}

pub fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("a JSON object")
}

pub fn request(name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest::new(name, object(arguments))
}

/// `{path: string (required), count?: integer >= 1}`.
pub fn path_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string", "minLength": 1}, "count": {"type": "integer", "minimum": 1}},
        "required": ["path"],
        "additionalProperties": false
    })
}

/// A tool that counts its calls and echoes its arguments.
pub fn echo_tool(name: &str, counter: &Counter) -> Tool {
    let counter = counter.clone();
    Tool::new(
        ToolDefinition::new(name, "Echoes its arguments.", path_schema()),
        move |arguments: Value, _call: ToolInvocation| {
            let counter = counter.clone();
            async move {
                counter.bump();
                Ok::<_, ToolCallError>(arguments)
            }
        },
    )
}
