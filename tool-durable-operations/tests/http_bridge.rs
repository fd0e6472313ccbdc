//! HTTP bridge smoke fixture: an ephemeral loopback provider (axum) and the real reqwest
//! transport prove Idempotency-Key replay without a second mutation, an ambiguous
//! acknowledgement kept unknown, and status-query reconciliation that never re-sends.
#![cfg(feature = "http")]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tool_durable_operations::side_effect::http::{HttpAcknowledgement, run_http_side_effect};
use tool_durable_operations::{
    BoxError, DurableOperationBackend, DurableOperationStore, MemoryBackend, OperationState,
    SideEffectOutcome, SideEffectRecovery, SideEffectRequest, SideEffectResolution,
    SideEffectResult, SideEffectRunner,
};

/// The provider: charges keyed by Idempotency-Key, a mutation counter, and a mode that
/// performs the charge but answers 504 (an ambiguous acknowledgement).
#[derive(Default)]
struct Provider {
    charges: Mutex<HashMap<String, Value>>,
    mutations: AtomicUsize,
    requests: AtomicUsize,
}

async fn charge(
    State(provider): State<Arc<Provider>>,
    Path(mode): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    provider.requests.fetch_add(1, Ordering::SeqCst);
    let Some(key) = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "missing Idempotency-Key"})),
        );
    };
    let mut charges = provider.charges.lock().unwrap();
    if let Some(existing) = charges.get(&key) {
        return (StatusCode::OK, Json(existing.clone()));
    }
    provider.mutations.fetch_add(1, Ordering::SeqCst);
    let record = json!({"id": format!("ch_{}", charges.len() + 1), "amount": body["amount"]});
    charges.insert(key, record.clone());
    match mode.as_str() {
        "ambiguous" => (
            StatusCode::GATEWAY_TIMEOUT,
            Json(json!({"error": "upstream timeout"})),
        ),
        _ => (StatusCode::CREATED, Json(record)),
    }
}

async fn status(
    State(provider): State<Arc<Provider>>,
    Path(key): Path<String>,
) -> (StatusCode, Json<Value>) {
    match provider.charges.lock().unwrap().get(&key) {
        Some(record) => (StatusCode::OK, Json(record.clone())),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "no such charge"})),
        ),
    }
}

async fn serve() -> (String, Arc<Provider>) {
    let provider = Arc::new(Provider::default());
    let app = axum::Router::new()
        .route("/charges/{mode}", post(charge))
        .route("/status/{key}", get(status))
        .with_state(provider.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, provider)
}

/// Completed only on an authoritative 200/201 with a charge id; everything else is unknown.
fn classify(ack: HttpAcknowledgement) -> SideEffectOutcome {
    match (ack.status, ack.json()) {
        (200 | 201, Some(body)) if body.get("id").is_some() => SideEffectOutcome::completed(body),
        (status, body) => {
            let outcome = SideEffectOutcome::unknown(format!(
                "provider answered {status} without an authoritative acknowledgement"
            ));
            match body {
                Some(body) => outcome.with_diagnostic(body),
                None => outcome,
            }
        }
    }
}

fn runners() -> (SideEffectRunner, SideEffectRunner) {
    let backend: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
    (
        SideEffectRunner::new(DurableOperationStore::new(backend.clone()), "host-a").unwrap(),
        SideEffectRunner::new(DurableOperationStore::new(backend), "host-b").unwrap(),
    )
}

#[tokio::test]
async fn idempotency_key_is_sent_and_a_retry_replays_without_a_second_mutation() {
    let (base, provider) = serve().await;
    let client = reqwest::Client::new();
    let (a, b) = runners();
    let url = format!("{base}/charges/ok");
    let send = |client: &reqwest::Client| {
        let request = client.post(&url).json(&json!({"amount": 500}));
        move |_: &tool_durable_operations::SideEffectContext| request
    };
    let first = run_http_side_effect(
        &a,
        SideEffectRequest::new("charge-1", "fp"),
        send(&client),
        classify,
    )
    .await
    .unwrap();
    let SideEffectResult::Completed { result, .. } = first else {
        panic!("{first:?}")
    };
    assert_eq!(result, json!({"id": "ch_1", "amount": 500}));
    assert_eq!(
        provider.charges.lock().unwrap().keys().collect::<Vec<_>>(),
        ["charge-1"]
    );
    let again = run_http_side_effect(
        &b,
        SideEffectRequest::new("charge-1", "fp"),
        send(&client),
        classify,
    )
    .await
    .unwrap();
    assert!(
        matches!(again, SideEffectResult::Replayed { result: Some(ref r), .. } if r["id"] == "ch_1")
    );
    assert_eq!(
        provider.requests.load(Ordering::SeqCst),
        1,
        "the replay never reached the provider"
    );
    assert_eq!(provider.mutations.load(Ordering::SeqCst), 1);
    let bad_key = run_http_side_effect(
        &a,
        SideEffectRequest::new("bad\nkey", "fp"),
        send(&client),
        classify,
    )
    .await;
    assert_eq!(
        bad_key.unwrap_err().code(),
        "DURABLE_OPERATION_INVALID_INPUT"
    );
    assert_eq!(
        a.store().get("bad\nkey").await.unwrap(),
        None,
        "nothing claimed for an unsendable key"
    );
}

#[tokio::test]
async fn ambiguous_acknowledgement_stays_unknown_and_status_query_reconciles_without_resending() {
    let (base, provider) = serve().await;
    let client = reqwest::Client::new();
    let (a, b) = runners();
    let url = format!("{base}/charges/ambiguous");
    let send = |client: &reqwest::Client| {
        let request = client.post(&url).json(&json!({"amount": 700}));
        move |_: &tool_durable_operations::SideEffectContext| request
    };
    let first = run_http_side_effect(
        &a,
        SideEffectRequest::new("charge-2", "fp"),
        send(&client),
        classify,
    )
    .await
    .unwrap();
    let SideEffectResult::Unknown {
        reason,
        diagnostic,
        operation,
    } = first
    else {
        panic!("{first:?}")
    };
    assert_eq!(
        reason,
        "provider answered 504 without an authoritative acknowledgement"
    );
    assert_eq!(diagnostic, Some(json!({"error": "upstream timeout"})));
    assert_eq!(operation.state, OperationState::Unknown);
    let blocked = run_http_side_effect(
        &b,
        SideEffectRequest::new("charge-2", "fp"),
        send(&client),
        classify,
    )
    .await
    .unwrap();
    assert!(matches!(blocked, SideEffectResult::Unknown { .. }));
    assert_eq!(
        provider.requests.load(Ordering::SeqCst),
        1,
        "blocked retry sent nothing"
    );

    let status_url = format!("{base}/status/charge-2");
    let status_client = client.clone();
    let recovered = b
        .recover("charge-2", None, None, move |_record| async move {
            let response = status_client.get(&status_url).send().await?;
            match response.status().as_u16() {
                200 => Ok(SideEffectResolution::completed(response.json().await?)),
                404 => Ok(SideEffectResolution::failed("provider has no such charge")),
                other => Err(BoxError::from(format!("status query answered {other}"))),
            }
        })
        .await
        .unwrap();
    let SideEffectRecovery::Resolved {
        operation, result, ..
    } = recovered
    else {
        panic!("{recovered:?}")
    };
    assert_eq!(result, Some(json!({"id": "ch_1", "amount": 700})));
    assert_eq!(operation.reconciled_by.as_deref(), Some("host-b"));
    assert_eq!(
        provider.requests.load(Ordering::SeqCst),
        1,
        "recovery never re-sent the charge"
    );
    let replay = run_http_side_effect(
        &a,
        SideEffectRequest::new("charge-2", "fp"),
        send(&client),
        classify,
    )
    .await
    .unwrap();
    assert!(matches!(replay, SideEffectResult::Replayed { .. }));
    assert_eq!(provider.mutations.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn transport_errors_are_unknown_without_status_inference() {
    // A port with nothing listening: the error alone does not prove the charge was not made.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/charges/ok", listener.local_addr().unwrap());
    drop(listener);
    let (a, _) = runners();
    let client = reqwest::Client::new();
    let request = client.post(&url).json(&json!({"amount": 1}));
    let result = run_http_side_effect(
        &a,
        SideEffectRequest::new("charge-3", "fp"),
        move |_| request,
        classify,
    )
    .await
    .unwrap();
    let SideEffectResult::Unknown { operation, .. } = result else {
        panic!("{result:?}")
    };
    assert_eq!(operation.state, OperationState::Unknown);
}
