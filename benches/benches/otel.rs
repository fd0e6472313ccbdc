//! The cost of the call's `execute_tool` span when it is exported, in one process: the
//! `tool_context` fast path (a keyed-less call of a handler that returns at once, strict
//! validation, allow policy, no observer) under three configurations:
//! - `no_subscriber`: no tracing subscriber, so the span is disabled (the baseline: today's
//!   fast path);
//! - `otel_layer_no_exporter`: `tracing_subscriber::registry()` with
//!   `tracing_opentelemetry::layer()` as the studio installs it (no source locations, thread
//!   ids or busy/idle clocks) over an `SdkTracerProvider` with no span
//!   processor: the span is built, its fields become OpenTelemetry attributes, and the finished
//!   span goes nowhere;
//! - `otel_layer_null_exporter`: the same over a provider with the SDK's `BatchSpanProcessor`
//!   (default configuration) and an exporter that counts each batch and drops it: the whole
//!   export path short of encoding and the wire. The batch thread's own work runs on another
//!   thread and is not in the per-call time.
//!
//! A subscriber is the thread's default (`tracing::subscriber::set_default`) only while its
//! configuration runs, on a current-thread runtime, so the calls' spans see it; when it is
//! dropped the callsites' interest is rebuilt, so `no_subscriber` sees what a process without a
//! subscriber sees. Before anything is timed, each configuration is checked: without a
//! subscriber the span is disabled; under both layers the handler runs inside a sampled
//! OpenTelemetry span; and the null exporter has received `execute_tool workspace.read` spans.
//!
//! Per-call times are printed before criterion runs, from the fastest of interleaved rounds,
//! with each layer's overhead over the baseline, and the spans the exporter received against
//! the calls made (the batch queue drops spans when it is full).

use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{Value, json};
use tool_context::{Tool, ToolCallOptions, ToolInvocation, ToolRegistry, tool_call_span};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolCallResult, ToolDefinition};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

const RATIO_ITERATIONS: u32 = 20_000;
const RATIO_ROUNDS: u32 = 15;
/// The exported name of the measured call's span (`otel.name`).
const SPAN_NAME: &str = "execute_tool workspace.read";
/// Calls made under each layer before anything is timed.
const CHECK_CALLS: u64 = 100;

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

/// The span the handler runs in: its name, and whether it is a sampled OpenTelemetry span.
async fn probe_handler() -> Result<Value, ToolCallError> {
    let span = tracing::Span::current();
    let context = span.context();
    let otel = context.span();
    let otel = otel.span_context();
    Ok(json!({
        "span": span.metadata().map(|metadata| metadata.name()),
        "valid": otel.is_valid(),
        "sampled": otel.is_sampled(),
    }))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Strict validation and the allow policy, no observer.
fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .tools([
            Tool::new(
                ToolDefinition::new("workspace.read", "Reads.", schema()),
                |arguments: Value, _: ToolInvocation| handler(arguments),
            ),
            Tool::new(
                ToolDefinition::new("workspace.probe", "Reports its span.", schema()),
                |_: Value, _: ToolInvocation| probe_handler(),
            ),
        ])
        .policy(tool_context::AllowAll)
        .build()
        .expect("a valid registry")
}

fn call_request(name: &str) -> ToolCallRequest {
    let arguments = json!({"path": "src/app.js", "revision": 3});
    ToolCallRequest::new(name, arguments.as_object().cloned().unwrap_or_default()).with_id("call_1")
}

fn call(
    registry: &ToolRegistry,
    request: &ToolCallRequest,
) -> impl Future<Output = ToolCallResult> {
    registry.call_tool(request.clone(), ToolCallOptions::default())
}

/// Counts the spans it is handed, and those named [`SPAN_NAME`], and drops them.
#[derive(Debug, Clone, Default)]
struct NullExporter {
    spans: Arc<AtomicU64>,
    named: Arc<AtomicU64>,
}

impl SpanExporter for NullExporter {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        let named = batch.iter().filter(|span| span.name == SPAN_NAME).count();
        self.spans.fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.named.fetch_add(named as u64, Ordering::Relaxed);
        std::future::ready(Ok(()))
    }
}

#[derive(Clone, Copy, Debug)]
enum Config {
    NoSubscriber,
    OtelLayerNoExporter,
    OtelLayerNullExporter,
}

impl Config {
    const ALL: [Config; 3] = [
        Config::NoSubscriber,
        Config::OtelLayerNoExporter,
        Config::OtelLayerNullExporter,
    ];

    fn name(self) -> &'static str {
        match self {
            Config::NoSubscriber => "no_subscriber",
            Config::OtelLayerNoExporter => "otel_layer_no_exporter",
            Config::OtelLayerNullExporter => "otel_layer_null_exporter",
        }
    }
}

/// The two tracer providers and the null exporter's counts.
struct Telemetry {
    no_exporter: SdkTracerProvider,
    null_exporter: SdkTracerProvider,
    exported: NullExporter,
}

impl Telemetry {
    fn new() -> Self {
        let exported = NullExporter::default();
        Self {
            no_exporter: SdkTracerProvider::builder().build(),
            null_exporter: SdkTracerProvider::builder()
                .with_batch_exporter(exported.clone())
                .build(),
            exported,
        }
    }

    fn tracer(&self, config: Config) -> Option<SdkTracer> {
        let provider = match config {
            Config::NoSubscriber => return None,
            Config::OtelLayerNoExporter => &self.no_exporter,
            Config::OtelLayerNullExporter => &self.null_exporter,
        };
        Some(provider.tracer("workspace-benches"))
    }

    /// Runs `run` with `config`'s subscriber as this thread's default. A new subscriber each
    /// time: a dropped one leaves the callsites' cached interest and the maximum level as it
    /// set them, so they are rebuilt after it, from the subscribers still alive (none).
    fn with<R>(&self, config: Config, run: impl FnOnce() -> R) -> R {
        let Some(tracer) = self.tracer(config) else {
            return run();
        };
        let subscriber = tracing_subscriber::registry().with(
            tracing_opentelemetry::layer()
                .with_location(false)
                .with_threads(false)
                .with_tracked_inactivity(false)
                .with_tracer(tracer),
        );
        let result = {
            let _default = tracing::subscriber::set_default(subscriber);
            run()
        };
        tracing::callsite::rebuild_interest_cache();
        result
    }

    /// The spans the null exporter has received, all batches flushed.
    fn exported(&self) -> (u64, u64) {
        self.null_exporter.force_flush().expect("a flush");
        (
            self.exported.spans.load(Ordering::Relaxed),
            self.exported.named.load(Ordering::Relaxed),
        )
    }
}

/// Each configuration does what it claims before anything is timed.
fn check(
    telemetry: &Telemetry,
    runtime: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    request: &ToolCallRequest,
) {
    let probe = call_request("workspace.probe");
    for config in Config::ALL {
        let seen = telemetry.with(config, || {
            let disabled = tool_call_span!(SPAN_NAME, "internal").is_disabled();
            let seen = runtime.block_on(call(registry, &probe));
            (
                disabled,
                seen.structured_content.expect("the probe's report"),
            )
        });
        match config {
            Config::NoSubscriber => assert!(seen.0, "{config:?}: the span is disabled"),
            _ => assert_eq!(
                seen,
                (
                    false,
                    json!({"span": "execute_tool", "valid": true, "sampled": true})
                ),
                "{config:?}: the handler runs in a sampled OpenTelemetry span",
            ),
        }
    }
    let before = telemetry.exported();
    telemetry.with(Config::OtelLayerNullExporter, || {
        runtime.block_on(async {
            for _ in 0..CHECK_CALLS {
                assert!(!call(registry, request).await.is_error());
            }
        });
    });
    let after = telemetry.exported();
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (CHECK_CALLS, CHECK_CALLS),
        "the null exporter received one `{SPAN_NAME}` span per call"
    );
}

/// Mean time per call over `RATIO_ITERATIONS` calls awaited in one `block_on`, as criterion's
/// async iterations run them.
fn time_per_call(
    runtime: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    request: &ToolCallRequest,
) -> Duration {
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..RATIO_ITERATIONS {
            let result = call(registry, request).await;
            assert!(!result.is_error(), "{result:?}");
            black_box(result);
        }
        started.elapsed() / RATIO_ITERATIONS
    })
}

/// The fastest of `RATIO_ROUNDS` interleaved rounds of each configuration: other load on the
/// machine only ever adds time, and interleaving exposes all three to the same load. The batch
/// queue is flushed after each of its rounds, outside the timing, so its thread's backlog does
/// not run into the next configuration's round.
fn fastest_of_rounds(
    telemetry: &Telemetry,
    runtime: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    request: &ToolCallRequest,
) -> [Duration; 3] {
    let mut fastest = [Duration::MAX; 3];
    for _ in 0..RATIO_ROUNDS {
        for (config, fastest) in Config::ALL.into_iter().zip(&mut fastest) {
            let time = telemetry.with(config, || time_per_call(runtime, registry, request));
            *fastest = (*fastest).min(time);
            if let Config::OtelLayerNullExporter = config {
                telemetry.exported();
            }
        }
    }
    fastest
}

fn print_overheads(times: [Duration; 3]) {
    let baseline = times[0];
    eprintln!("otel {}: {baseline:?}/call", Config::NoSubscriber.name());
    for (config, time) in Config::ALL.into_iter().zip(times).skip(1) {
        let overhead = time.as_nanos() as i128 - baseline.as_nanos() as i128;
        eprintln!(
            "otel {}: {time:?}/call, overhead {overhead} ns/call, ratio {:.2}x",
            config.name(),
            time.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}

fn otel(c: &mut Criterion) {
    let runtime = runtime();
    let registry = registry();
    let request = call_request("workspace.read");
    let telemetry = Telemetry::new();
    check(&telemetry, &runtime, &registry, &request);

    let (spans_before, _) = telemetry.exported();
    print_overheads(fastest_of_rounds(&telemetry, &runtime, &registry, &request));
    let (spans_after, named) = telemetry.exported();
    let calls = u64::from(RATIO_ITERATIONS * RATIO_ROUNDS);
    eprintln!(
        "otel null exporter: {} spans received for {calls} calls in the rounds ({} `{SPAN_NAME}` in all)",
        spans_after - spans_before,
        named
    );

    let mut group = c.benchmark_group("otel");
    for config in Config::ALL {
        group.bench_function(config.name(), |b| {
            telemetry.with(config, || {
                b.to_async(&runtime)
                    .iter(|| call(&registry, black_box(&request)));
            });
        });
    }
    group.finish();
    telemetry
        .null_exporter
        .shutdown()
        .expect("the batch processor shuts down");
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = otel
}
criterion_main!(benches);
