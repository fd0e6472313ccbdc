//! Studio benchmarks, each reported next to a baseline measured in the same run:
//!
//! - `local_agent_visual_change`: one local-agent prompt end to end in-process (plan, the
//!   inspection preflight, the approval round trip answered by a task, the revision-guarded
//!   write through the registry, headless preview acknowledgement), against
//!   `baseline_manager_write`: the same stylesheet change written directly through the manager.
//! - `cold_start_to_first_page`: building the studio (SQLite workspace, registry, catalog) and
//!   serving its first page, against `baseline_axum_first_page`: a bare axum route on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::workspace::manager::WriteOptions;
use live_code_studio::agent::runner::{RunRequest, run_plan};
use live_code_studio::host::{self, StudioOptions, StudioState};
use live_code_studio::preview_edits::{Theme, set_theme};
use live_code_studio::surfaces::workspace::planner::{PlannerContext, plan};
use tokio_util::sync::CancellationToken;
use tool_context::ApprovalDecision;

fn approve_everything(state: &Arc<StudioState>) {
    let approvals = state.approvals.clone();
    let mut updates = approvals.subscribe();
    tokio::spawn(async move {
        while updates.changed().await.is_ok() {
            let pending = updates.borrow_and_update().clone();
            for snapshot in pending.iter() {
                approvals.resolve(&snapshot.id, ApprovalDecision::Allow);
            }
        }
    });
}

fn visual_change(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let options = StudioOptions::ephemeral(dir.path());
    let state = runtime.block_on(async {
        let state = host::build_state(&options, 0).await.expect("studio state");
        approve_everything(&state);
        state
    });
    let mut group = c.benchmark_group("studio");
    let turn = AtomicUsize::new(0);
    group.bench_function("local_agent_visual_change", |b| {
        b.to_async(&runtime).iter(|| async {
            let theme = Theme::ALL[turn.fetch_add(1, Ordering::Relaxed) % Theme::ALL.len()];
            let planned = plan(
                &format!("make it {}", theme.name()),
                &PlannerContext::default(),
            );
            let request = RunRequest {
                registry: &state.registry,
                run_id: "bench",
                session_id: "bench",
                cancellation: CancellationToken::new(),
                metadata: Default::default(),
                call_timeout_ms: None,
                events: None,
            };
            let report = run_plan(&planned, request).await;
            assert_eq!(report.outcome.status(), "completed");
        });
    });
    group.bench_function("baseline_manager_write", |b| {
        b.to_async(&runtime).iter(|| async {
            let theme = Theme::ALL[turn.fetch_add(1, Ordering::Relaxed) % Theme::ALL.len()];
            let current = state
                .workspace
                .manager()
                .read_file("styles.css")
                .await
                .expect("stylesheet");
            let updated = set_theme(&current.source, theme).expect("theme tokens");
            let options = WriteOptions::default()
                .with_expected_revision(Some(current.revision))
                .with_coalesce(false);
            state
                .workspace
                .manager()
                .write_file("styles.css", &updated, options)
                .await
                .expect("write");
        });
    });
    group.finish();
}

fn cold_start(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let http = reqwest::Client::new();
    let mut group = c.benchmark_group("studio");
    group.sample_size(20);
    group.bench_function("cold_start_to_first_page", |b| {
        b.to_async(&runtime).iter(|| async {
            let dir = tempfile::tempdir().expect("temp dir");
            let studio = host::start(StudioOptions::ephemeral(dir.path()))
                .await
                .expect("studio starts");
            let page = http.get(studio.url()).send().await.expect("first page");
            assert!(page.status().is_success());
            studio.shutdown().await;
        });
    });
    group.bench_function("baseline_axum_first_page", |b| {
        b.to_async(&runtime).iter(|| async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            let app = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
            let stop = CancellationToken::new();
            let guard = stop.clone();
            let server = tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move { guard.cancelled().await })
                    .await
            });
            let page = http
                .get(format!("http://{addr}/"))
                .send()
                .await
                .expect("first page");
            assert!(page.status().is_success());
            stop.cancel();
            let _ = server.await;
        });
    });
    group.finish();
}

criterion_group!(benches, visual_change, cold_start);
criterion_main!(benches);
