//! OpenRouter loop costs, each next to a plain baseline on the same bytes:
//! - `openrouter_decode`: checking a 12-tool-call chat completion (role, content, ids,
//!   duplicates, function records) against a bare `serde_json::from_str::<Value>` of the body.
//! - `openrouter_tool_message`: validating and serializing a structured tool result for the
//!   provider against a bare `serde_json::to_string` of its structured content.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use openrouter_tool_loop::tool_message::tool_message;
use openrouter_tool_loop::{MAX_RESPONSE_BODY_BYTES, MAX_TOOL_CALLS, decode_response};
use serde_json::{Value, json};
use tool_protocol::ToolCallResult;

fn completion_body() -> String {
    let calls: Vec<Value> = (0..MAX_TOOL_CALLS)
        .map(|i| {
            json!({"id": format!("call_{i}"), "type": "function", "function": {
                "name": "workspace_applyPatch",
                "arguments": json!({"path": format!("src/file{i}.js"), "search": "alpha", "replace": "beta", "expectedRevision": i}).to_string()
            }})
        })
        .collect();
    json!({"id": "gen-1", "model": "openai/gpt-4o-mini", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 300}})
    .to_string()
}

fn decode(c: &mut Criterion) {
    let body = completion_body();
    let mut group = c.benchmark_group("openrouter_decode");
    group.bench_function("baseline_serde_value", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&body)).unwrap())
    });
    group.bench_function("decode_response", |b| {
        b.iter(|| decode_response(200, black_box(&body), false, MAX_RESPONSE_BODY_BYTES).unwrap())
    });
    group.finish();
}

fn serialize(c: &mut Criterion) {
    let structured = json!({
        "path": "index.html",
        "revision": 42,
        "files": (0..50).map(|i| json!({"path": format!("src/file{i}.js"), "bytes": i * 100, "dirty": i % 2 == 0})).collect::<Vec<_>>()
    });
    let result = ToolCallResult::success(structured.clone());
    let mut group = c.benchmark_group("openrouter_tool_message");
    group.bench_function("baseline_to_string", |b| {
        b.iter(|| serde_json::to_string(black_box(&structured)).unwrap())
    });
    group.bench_function("tool_message", |b| {
        b.iter(|| tool_message(black_box(&result)))
    });
    group.finish();
}

criterion_group!(benches, decode, serialize);
criterion_main!(benches);
