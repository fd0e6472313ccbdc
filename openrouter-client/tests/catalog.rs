//! The model catalog against the fake server: query, key, ZDR filter, free models, errors.

mod support;

use std::time::Duration;

use openrouter_tool_loop::codes::*;
use openrouter_tool_loop::{ApiKey, DataPolicy, OpenRouterClient, free_models};
use serde_json::json;
use support::{FakeOpenRouter, Reply};
use tokio_util::sync::CancellationToken;

fn catalog() -> Reply {
    Reply::status(
        200,
        json!({"data": [
            {"id": "openai/gpt-4o-mini", "name": "GPT-4o mini", "pricing": {"prompt": "0.00000015", "completion": "0.0000006"}, "supported_parameters": ["tools", "tool_choice"]},
            {"id": "meta-llama/llama-3.3-70b-instruct:free", "name": "Llama 3.3 70B", "pricing": {"prompt": "0", "completion": "0"}, "supported_parameters": ["tools"]},
            {"name": "no id"}
        ]}),
    )
}

#[tokio::test]
async fn lists_tool_capable_models_with_the_key_and_filters_free_ones() {
    let fake = FakeOpenRouter::start(vec![catalog()]).await;
    let models = fake
        .client()
        .list_models(&CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(models.len(), 2);
    assert!(models.iter().all(|model| model.supports_tools()));
    let free: Vec<String> = free_models(&models)
        .iter()
        .map(|model| model.label())
        .collect();
    assert_eq!(
        free,
        ["Llama 3.3 70B (meta-llama/llama-3.3-70b-instruct:free) · free"]
    );
    let request = &fake.requests()[0];
    assert_eq!(
        request.uri.query(),
        Some("output_modalities=text&supported_parameters=tools")
    );
    assert_eq!(
        request.headers["authorization"],
        format!("Bearer {}", support::TEST_KEY)
    );
}

#[tokio::test]
async fn the_zdr_policy_asks_for_a_zdr_only_catalog_and_no_key_sends_no_header() {
    let fake = FakeOpenRouter::start(vec![catalog()]).await;
    let mut config = fake.config().with_data_policy(DataPolicy::Zdr);
    config.api_key = ApiKey::default();
    let models = OpenRouterClient::new(config)
        .unwrap()
        .list_models(&CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(models.len(), 2);
    let request = &fake.requests()[0];
    assert_eq!(
        request.uri.query(),
        Some("output_modalities=text&supported_parameters=tools&zdr=true")
    );
    assert!(!request.headers.contains_key("authorization"));
}

#[tokio::test]
async fn catalog_failures_are_coded() {
    let fake = FakeOpenRouter::start(vec![
        Reply::status(401, json!({"error": {"message": "bad key"}})),
        Reply::raw(200, "text/html", "<html>"),
        Reply::Hang,
    ])
    .await;
    let cancel = CancellationToken::new();
    let client = OpenRouterClient::new(
        fake.config()
            .with_request_timeout(Duration::from_millis(1_000)),
    )
    .unwrap();
    let error = client.list_models(&cancel).await.unwrap_err();
    assert_eq!(
        (error.code, error.status),
        (OPENROUTER_AUTHENTICATION_FAILED, Some(401))
    );
    assert_eq!(
        error.message,
        "OpenRouter model catalog request failed (HTTP 401)."
    );
    let error = client.list_models(&cancel).await.unwrap_err();
    assert_eq!(error.code, OPENROUTER_INVALID_RESPONSE);
    assert_eq!(
        error.message,
        "OpenRouter model catalog returned invalid JSON (HTTP 200)."
    );
    let error = client.list_models(&cancel).await.unwrap_err();
    assert_eq!(error.code, OPENROUTER_TIMEOUT);
    assert_eq!(fake.request_count(), 3, "the catalog is never retried");
    cancel.cancel();
    assert_eq!(
        client.list_models(&cancel).await.unwrap_err().code,
        OPENROUTER_CANCELLED
    );
    assert_eq!(fake.request_count(), 3);
}
