//! OpenRouter loop costs, each next to a plain baseline on the same bytes:
//! - `openrouter_decode`: checking a 12-tool-call chat completion (role, content, ids,
//!   duplicates, function records) against a bare `serde_json::from_str::<Value>` of the body.
//! - `openrouter_tool_message`: validating and serializing a structured tool result for the
//!   provider against a bare `serde_json::to_string` of its structured content.
//! - `openrouter_stream`: a streamed turn (200 text deltas, then a tool call in 120 argument
//!   fragments), decoded by `ChatStreamDecoder` as the loop decodes it:
//!   - `first_text_delta`: from the provider's first chunk to the first `TextDelta`, against a
//!     bare parse of that chunk's `data:` payload;
//!   - `tool_call_ready`: from the last chunk (`[DONE]`) to the `ToolCallReady` (assembled,
//!     parsed, schema-checked, digested), against a bare parse of the same arguments text;
//!   - `whole_stream`: every chunk, against a bare parse of every `data:` payload and of the
//!     arguments text.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use openrouter_tool_loop::tool_message::tool_message;
use openrouter_tool_loop::{
    ChatStreamDecoder, MAX_RESPONSE_BODY_BYTES, MAX_TOOL_CALLS, RunEvent, decode_response,
};
use serde_json::{Value, json};
use tool_protocol::{ToolCallResult, ToolDefinition};

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

fn stream_tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition::new(
        "workspace.writeFile",
        "Writes a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"], "additionalProperties": false}),
    )]
}

/// The arguments text of the streamed call (an HTML page of about 6 KB).
fn stream_arguments() -> String {
    let content: String = (0..120)
        .map(|i| format!("<p class=\"line\">Paragraph {i} of the page.</p>\n"))
        .collect();
    json!({"path": "index.html", "content": content}).to_string()
}

/// One `data:` chunk per delta, as OpenAI-compatible servers send them.
fn stream_chunks(arguments: &str) -> Vec<String> {
    let data = |payload: Value| format!("data: {payload}\n\n");
    let mut chunks: Vec<String> = (0..200)
        .map(|i| {
            data(json!({"choices": [{"index": 0, "delta": {"content": format!("word{i} ")}}]}))
        })
        .collect();
    chunks.push(data(
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
        "type": "function", "function": {"name": "workspace_writeFile", "arguments": ""}}]}}]}),
    ));
    let characters: Vec<char> = arguments.chars().collect();
    for fragment in characters.chunks(characters.len().div_ceil(120)) {
        let fragment: String = fragment.iter().collect();
        chunks.push(data(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": fragment}}]}}]}),
        ));
    }
    chunks.push(data(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 1800}}),
    ));
    chunks.push("data: [DONE]\n\n".to_owned());
    chunks
}

fn payload_of(chunk: &str) -> &str {
    chunk.trim_end().strip_prefix("data: ").unwrap_or(chunk)
}

fn stream(c: &mut Criterion) {
    let tools = stream_tools();
    let arguments = stream_arguments();
    let chunks = stream_chunks(&arguments);
    let (last, body) = chunks.split_last().unwrap();
    let mut group = c.benchmark_group("openrouter_stream");
    group.bench_function("first_text_delta/baseline_parse_payload", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(payload_of(&chunks[0]))).unwrap())
    });
    group.bench_function("first_text_delta/decoder", |b| {
        b.iter_batched_ref(
            || ChatStreamDecoder::new(&tools),
            |decoder| {
                let events = decoder.push(black_box(chunks[0].as_bytes())).unwrap();
                assert!(matches!(events[0], RunEvent::TextDelta { .. }));
                events
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("tool_call_ready/baseline_parse_arguments", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&arguments)).unwrap())
    });
    group.bench_function("tool_call_ready/decoder", |b| {
        b.iter_batched(
            || {
                let mut decoder = ChatStreamDecoder::new(&tools);
                for chunk in body {
                    decoder.push(chunk.as_bytes()).unwrap();
                }
                decoder
            },
            |mut decoder| {
                decoder.push(black_box(last.as_bytes())).unwrap();
                let (_, ready) = decoder.finish().unwrap();
                assert!(
                    matches!(&ready[0], RunEvent::ToolCallReady { issues, .. } if issues.is_empty())
                );
                ready
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("whole_stream/baseline_parse_payloads", |b| {
        b.iter(|| {
            for chunk in &chunks[..chunks.len() - 1] {
                black_box(serde_json::from_str::<Value>(payload_of(chunk)).unwrap());
            }
            serde_json::from_str::<Value>(black_box(&arguments)).unwrap()
        })
    });
    group.bench_function("whole_stream/decoder", |b| {
        b.iter_batched(
            || ChatStreamDecoder::new(&tools),
            |mut decoder| {
                for chunk in &chunks {
                    black_box(decoder.push(chunk.as_bytes()).unwrap());
                }
                decoder.finish().unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, decode, serialize, stream);
criterion_main!(benches);
