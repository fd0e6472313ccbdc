//! tool-context costs, each next to a baseline measured in the same process:
//! - `tool_context_pipeline`: one full `call_tool` (strict validation, allow policy, observer,
//!   event provenance) of a trivial tool, against calling the same handler after validating the
//!   arguments with a precompiled `jsonschema` validator directly. The ratio of the two is
//!   printed before criterion runs.
//! - `tool_context_idempotency`: claiming and settling distinct keys in the in-memory
//!   idempotency registry; after 100,000 distinct keys the registry must hold exactly its bound
//!   of 1,000 entries (checked and printed).

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_context::idempotency::DEFAULT_IDEMPOTENCY_MAX_ENTRIES;
use tool_context::{
    AllowAll, IdempotencyClaim, IdempotencyRegistry, Tool, ToolCallOptions, ToolInvocation,
    ToolRegistry,
};
use tool_protocol::{
    ToolCallError, ToolCallEvent, ToolCallRequest, ToolCallResult, ToolDefinition,
};

const RATIO_ITERATIONS: u32 = 20_000;
const DISTINCT_KEYS: usize = 100_000;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string", "minLength": 1}, "revision": {"type": "integer", "minimum": 0}},
        "required": ["path"],
        "additionalProperties": false
    })
}

async fn handler(arguments: Value) -> Result<Value, ToolCallError> {
    Ok(json!({"path": arguments["path"], "ok": true}))
}

fn registry(events: &Arc<AtomicU64>) -> ToolRegistry {
    let events = events.clone();
    ToolRegistry::builder()
        .tool(Tool::new(
            ToolDefinition::new("workspace.read", "Reads.", schema()),
            |arguments: Value, _: ToolInvocation| handler(arguments),
        ))
        .policy(AllowAll)
        .observer(move |_: &ToolCallEvent| {
            events.fetch_add(1, Ordering::Relaxed);
        })
        .build()
        .expect("a valid registry")
}

fn call_request() -> ToolCallRequest {
    let arguments = json!({"path": "src/app.js", "revision": 3});
    ToolCallRequest::new(
        "workspace.read",
        arguments.as_object().cloned().unwrap_or_default(),
    )
    .with_id("call_1")
}

async fn baseline(validator: &jsonschema::Validator, request: &ToolCallRequest) -> ToolCallResult {
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    assert!(validator.is_valid(&arguments));
    let value = handler(arguments).await.expect("the handler succeeds");
    ToolCallResult::success(value).with_tool_call_id(request.id.clone())
}

fn print_ratio(
    runtime: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    validator: &jsonschema::Validator,
) {
    let request = call_request();
    let time = |run: &dyn Fn() -> ToolCallResult| {
        let started = Instant::now();
        for _ in 0..RATIO_ITERATIONS {
            black_box(run());
        }
        started.elapsed() / RATIO_ITERATIONS
    };
    let direct = time(&|| runtime.block_on(baseline(validator, &request)));
    let pipeline =
        time(&|| runtime.block_on(registry.call_tool(request.clone(), ToolCallOptions::default())));
    println!(
        "tool_context_pipeline: baseline {direct:?}/call, pipeline {pipeline:?}/call, ratio {:.1}x",
        pipeline.as_secs_f64() / direct.as_secs_f64()
    );
}

fn pipeline(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let events = Arc::new(AtomicU64::new(0));
    let registry = registry(&events);
    let validator = jsonschema::validator_for(&schema()).expect("a valid schema");
    print_ratio(&runtime, &registry, &validator);
    let request = call_request();
    let mut group = c.benchmark_group("tool_context_pipeline");
    group.bench_function("baseline_handler_plus_jsonschema", |b| {
        b.to_async(&runtime)
            .iter(|| baseline(&validator, black_box(&request)));
    });
    group.bench_function("registry_call_tool", |b| {
        b.to_async(&runtime)
            .iter(|| registry.call_tool(black_box(request.clone()), ToolCallOptions::default()));
    });
    group.finish();
    assert!(
        events.load(Ordering::Relaxed) > 0,
        "the observer saw the calls"
    );
}

fn claim_and_settle(registry: &IdempotencyRegistry, key: &str) {
    match registry
        .claim(key, "sha256:fingerprint")
        .expect("a valid key")
    {
        IdempotencyClaim::Owner(ticket) => ticket.settle(ToolCallResult::empty_success()),
        other => panic!("a distinct key must be owned, got {other:?}"),
    }
}

fn idempotency(c: &mut Criterion) {
    let registry = IdempotencyRegistry::default();
    let started = Instant::now();
    for n in 0..DISTINCT_KEYS {
        claim_and_settle(&registry, &format!("[\"default\",\"charge\",\"key-{n}\"]"));
    }
    let held = registry.len();
    println!(
        "tool_context_idempotency: {DISTINCT_KEYS} distinct keys in {:?}, {held} entries held (bound {DEFAULT_IDEMPOTENCY_MAX_ENTRIES})",
        started.elapsed()
    );
    assert_eq!(
        held, DEFAULT_IDEMPOTENCY_MAX_ENTRIES,
        "the registry stays at its bound"
    );
    let mut group = c.benchmark_group("tool_context_idempotency");
    let mut next = 0u64;
    group.bench_function("claim_settle_distinct_key_at_bound", |b| {
        b.iter(|| {
            next += 1;
            claim_and_settle(&registry, &format!("bench-{next}"));
        });
    });
    group.finish();
    assert_eq!(registry.len(), DEFAULT_IDEMPOTENCY_MAX_ENTRIES);
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = pipeline, idempotency
}
criterion_main!(benches);
