//! tool-protocol costs, each next to a plain baseline on the same bytes:
//! - `protocol_tools_call`: validating a typical tools/call request (parse the bytes, then
//!   `parse_tool_call_request`, and the typed `serde_json::from_str::<ToolCallRequest>` that
//!   goes through the same validator) against a bare `serde_json::from_str::<Value>`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_protocol::{ToolCallRequest, parse_tool_call_request};

/// A workspace patch call as a model sends it: id, name and a handful of arguments.
fn typical_request() -> String {
    json!({
        "jsonrpc": "2.0",
        "id": "call_7f3a9c",
        "method": "tools/call",
        "params": {
            "name": "workspace.applyPatch",
            "arguments": {
                "path": "src/app.js",
                "expectedRevision": 12,
                "search": "const title = 'Hello';",
                "replace": "const title = 'Hello, world';",
                "options": {"occurrence": 1, "caseSensitive": true},
                "tags": ["agent", "patch"]
            }
        }
    })
    .to_string()
}

fn tools_call(c: &mut Criterion) {
    let bytes = typical_request();
    let mut group = c.benchmark_group("protocol_tools_call");
    group.bench_function("baseline_serde_value", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&bytes)).unwrap())
    });
    group.bench_function("parse_and_validate", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(&bytes)).unwrap();
            parse_tool_call_request(&value).unwrap()
        })
    });
    group.bench_function("typed_from_str", |b| {
        b.iter(|| serde_json::from_str::<ToolCallRequest>(black_box(&bytes)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, tools_call);
criterion_main!(benches);
