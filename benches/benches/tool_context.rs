//! tool-context costs, each next to a baseline measured in the same process:
//! - `tool_context_pipeline`: one full `call_tool` (strict validation, allow policy, observer,
//!   event provenance) of a trivial tool, against calling the same handler after validating the
//!   arguments with a precompiled `jsonschema` validator directly.
//! - `tool_context_fast_path`: the same keyed-less call with no observer (the pipeline's fast
//!   path: no event is built and the handler is polled in place, no task spawned), against the
//!   same baseline; then a handler that waits once (one scheduler turn) through the pipeline
//!   against the same handler after the same direct validation.
//!
//! Each ratio is printed before criterion runs, from the fastest of interleaved rounds.
//! - `tool_context_idempotency`: claiming and settling distinct keys in the in-memory
//!   idempotency registry; after 100,000 distinct keys the registry must hold exactly its bound
//!   of 1,000 entries (checked and printed).

use std::future::Future;
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
const RATIO_ROUNDS: u32 = 15;
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

/// The same handler after waiting one scheduler turn.
async fn waiting_handler(arguments: Value) -> Result<Value, ToolCallError> {
    tokio::task::yield_now().await;
    handler(arguments).await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn tools() -> [Tool; 2] {
    [
        Tool::new(
            ToolDefinition::new("workspace.read", "Reads.", schema()),
            |arguments: Value, _: ToolInvocation| handler(arguments),
        ),
        Tool::new(
            ToolDefinition::new("workspace.read_waiting", "Reads after a turn.", schema()),
            |arguments: Value, _: ToolInvocation| waiting_handler(arguments),
        ),
    ]
}

/// Strict validation and the allow policy, with a counting observer when `events` is set.
fn registry(events: Option<&Arc<AtomicU64>>) -> ToolRegistry {
    let builder = ToolRegistry::builder().tools(tools()).policy(AllowAll);
    let builder = match events {
        Some(events) => {
            let events = events.clone();
            builder.observer(move |_: &ToolCallEvent| {
                events.fetch_add(1, Ordering::Relaxed);
            })
        }
        None => builder,
    };
    builder.build().expect("a valid registry")
}

fn call_request(name: &str) -> ToolCallRequest {
    let arguments = json!({"path": "src/app.js", "revision": 3});
    ToolCallRequest::new(name, arguments.as_object().cloned().unwrap_or_default()).with_id("call_1")
}

/// The handler after validating the same arguments with a validator compiled once.
async fn baseline(validator: &jsonschema::Validator, request: &ToolCallRequest) -> ToolCallResult {
    let arguments = validated_arguments(validator, request);
    let value = handler(arguments).await.expect("the handler succeeds");
    ToolCallResult::success(value).with_tool_call_id(request.id.clone())
}

/// The waiting handler after the same direct validation.
async fn waiting_baseline(
    validator: &jsonschema::Validator,
    request: &ToolCallRequest,
) -> ToolCallResult {
    let arguments = validated_arguments(validator, request);
    let value = waiting_handler(arguments)
        .await
        .expect("the handler succeeds");
    ToolCallResult::success(value).with_tool_call_id(request.id.clone())
}

fn validated_arguments(validator: &jsonschema::Validator, request: &ToolCallRequest) -> Value {
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    assert!(validator.is_valid(&arguments));
    arguments
}

/// Mean time per call of `run` over `RATIO_ITERATIONS` calls awaited in one `block_on`, as
/// criterion's async iterations run them.
fn time_per_call<F: Future<Output = ToolCallResult>>(
    runtime: &tokio::runtime::Runtime,
    run: &impl Fn() -> F,
) -> Duration {
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..RATIO_ITERATIONS {
            let result = run().await;
            assert!(!result.is_error(), "{result:?}");
            black_box(result);
        }
        started.elapsed() / RATIO_ITERATIONS
    })
}

/// The fastest of `RATIO_ROUNDS` interleaved rounds of each: other load on the machine only
/// ever adds time, and interleaving exposes both to the same load.
fn fastest_of_rounds<B, P>(
    runtime: &tokio::runtime::Runtime,
    baseline: impl Fn() -> B,
    pipeline: impl Fn() -> P,
) -> (Duration, Duration)
where
    B: Future<Output = ToolCallResult>,
    P: Future<Output = ToolCallResult>,
{
    (0..RATIO_ROUNDS).fold((Duration::MAX, Duration::MAX), |(direct, full), _| {
        (
            direct.min(time_per_call(runtime, &baseline)),
            full.min(time_per_call(runtime, &pipeline)),
        )
    })
}

fn print_ratio(group: &str, (direct, pipeline): (Duration, Duration)) {
    println!(
        "{group}: baseline {direct:?}/call, pipeline {pipeline:?}/call, ratio {:.2}x",
        pipeline.as_secs_f64() / direct.as_secs_f64()
    );
}

fn call(
    registry: &ToolRegistry,
    request: &ToolCallRequest,
) -> impl Future<Output = ToolCallResult> {
    registry.call_tool(request.clone(), ToolCallOptions::default())
}

fn pipeline(c: &mut Criterion) {
    let runtime = runtime();
    let events = Arc::new(AtomicU64::new(0));
    let registry = registry(Some(&events));
    let validator = jsonschema::validator_for(&schema()).expect("a valid schema");
    let request = call_request("workspace.read");
    print_ratio(
        "tool_context_pipeline",
        fastest_of_rounds(
            &runtime,
            || baseline(&validator, &request),
            || call(&registry, &request),
        ),
    );
    let mut group = c.benchmark_group("tool_context_pipeline");
    group.bench_function("baseline_handler_plus_jsonschema", |b| {
        b.to_async(&runtime)
            .iter(|| baseline(&validator, black_box(&request)));
    });
    group.bench_function("registry_call_tool", |b| {
        b.to_async(&runtime)
            .iter(|| call(&registry, black_box(&request)));
    });
    group.finish();
    assert!(
        events.load(Ordering::Relaxed) > 0,
        "the observer saw the calls"
    );
}

fn fast_path(c: &mut Criterion) {
    let runtime = runtime();
    let registry = registry(None);
    let validator = jsonschema::validator_for(&schema()).expect("a valid schema");
    let request = call_request("workspace.read");
    let waiting = call_request("workspace.read_waiting");
    print_ratio(
        "tool_context_fast_path",
        fastest_of_rounds(
            &runtime,
            || baseline(&validator, &request),
            || call(&registry, &request),
        ),
    );
    print_ratio(
        "tool_context_fast_path (waiting handler)",
        fastest_of_rounds(
            &runtime,
            || waiting_baseline(&validator, &waiting),
            || call(&registry, &waiting),
        ),
    );
    let mut group = c.benchmark_group("tool_context_fast_path");
    group.bench_function("baseline_handler_plus_jsonschema", |b| {
        b.to_async(&runtime)
            .iter(|| baseline(&validator, black_box(&request)));
    });
    group.bench_function("registry_call_tool_no_observer", |b| {
        b.to_async(&runtime)
            .iter(|| call(&registry, black_box(&request)));
    });
    group.bench_function("baseline_waiting_handler", |b| {
        b.to_async(&runtime)
            .iter(|| waiting_baseline(&validator, black_box(&waiting)));
    });
    group.bench_function("registry_call_tool_waiting_handler", |b| {
        b.to_async(&runtime)
            .iter(|| call(&registry, black_box(&waiting)));
    });
    group.finish();
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
    targets = pipeline, fast_path, idempotency
}
criterion_main!(benches);
