//! Every provider profile against a loopback fake that answers with that provider's real
//! response shapes: tool calls, a 200 body carrying an error, a streamed error, 429 with
//! `Retry-After`, a model without tool support, the key rule and the model catalog.

mod support;

use openrouter_tool_loop::codes::*;
use openrouter_tool_loop::{
    ApiKey, DataPolicy, OpenRouterClient, OpenRouterConfig, OpenRouterError, ProviderProfile,
    RunEvent, RunOptions, RunRequest,
};
use serde_json::{Value, json};
use support::{FakeOpenRouter, FakeTools, Reply, provider_name};
use tokio_util::sync::CancellationToken;

const LOCAL_PROFILES: [ProviderProfile; 3] = [
    ProviderProfile::OpenAiCompatible,
    ProviderProfile::LlamaCpp,
    ProviderProfile::Ollama,
];

/// A `math.add(2, 3)` tool call as each provider writes it.
fn tool_call_reply(profile: ProviderProfile) -> Reply {
    let name = provider_name("math.add");
    let arguments = r#"{"a":2,"b":3}"#;
    let body = match profile {
        ProviderProfile::OpenRouter => json!({
            "id": "gen-1747-abc", "provider": "OpenAI", "model": "openai/gpt-4o-mini",
            "object": "chat.completion", "created": 1747000000,
            "choices": [{"logprobs": null, "finish_reason": "tool_calls", "native_finish_reason": "tool_calls", "index": 0,
                "message": {"role": "assistant", "content": "", "refusal": null, "reasoning": null,
                    "tool_calls": [{"index": 0, "id": "call_or1", "type": "function", "function": {"name": name, "arguments": arguments}}]}}],
            "usage": {"prompt_tokens": 80, "completion_tokens": 18, "total_tokens": 98}
        }),
        ProviderProfile::OpenAiCompatible => json!({
            "id": "chatcmpl-B9x", "object": "chat.completion", "created": 1747000000, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_oa1", "type": "function", "function": {"name": name, "arguments": arguments}}],
                "refusal": null, "annotations": []}, "logprobs": null, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 80, "completion_tokens": 18, "total_tokens": 98}, "service_tier": "default",
            "system_fingerprint": "fp_1"
        }),
        ProviderProfile::LlamaCpp => json!({
            "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}, "id": "Wn3mXq0bJk"}]}}],
            "created": 1747000000, "model": "local-model", "system_fingerprint": "b5500-abc", "object": "chat.completion",
            "usage": {"completion_tokens": 18, "prompt_tokens": 80, "total_tokens": 98}, "id": "chatcmpl-llama",
            "timings": {"prompt_n": 80, "predicted_n": 18}
        }),
        ProviderProfile::Ollama => json!({
            "id": "chatcmpl-431", "object": "chat.completion", "created": 1747000000, "model": "local-model",
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "",
                "tool_calls": [{"id": "call_ol1", "index": 0, "type": "function", "function": {"name": name, "arguments": arguments}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 80, "completion_tokens": 18, "total_tokens": 98}
        }),
    };
    Reply::status(200, body)
}

/// A final text answer (the OpenAI shape every profile shares).
fn final_text() -> Reply {
    Reply::status(
        200,
        json!({"id": "chatcmpl-2", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "2 + 3 = 5."}, "finish_reason": "stop"}]}),
    )
}

/// The answer to tools sent to a model that cannot call them, as each provider writes it.
fn tools_unsupported_reply(profile: ProviderProfile) -> Reply {
    match profile {
        ProviderProfile::OpenRouter => Reply::status(
            404,
            json!({"error": {"message": "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing", "code": 404}}),
        ),
        ProviderProfile::OpenAiCompatible => Reply::status(
            400,
            json!({"error": {"message": "Unsupported parameter: 'tools' is not supported with this model.", "type": "invalid_request_error", "param": "tools", "code": "unsupported_parameter"}}),
        ),
        ProviderProfile::LlamaCpp => Reply::status(
            500,
            json!({"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}),
        ),
        ProviderProfile::Ollama => Reply::status(
            400,
            json!({"error": {"message": "registry.ollama.ai/library/gemma3:4b does not support tools", "type": "api_error", "param": null, "code": null}}),
        ),
    }
}

/// A 429 with `Retry-After: 0`, in each provider's error shape.
fn rate_limited(profile: ProviderProfile) -> Reply {
    let body = match profile {
        ProviderProfile::OpenRouter => {
            json!({"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min."}})
        }
        ProviderProfile::OpenAiCompatible => {
            json!({"error": {"message": "Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}})
        }
        ProviderProfile::LlamaCpp => {
            json!({"error": {"code": 429, "message": "too many requests", "type": "unavailable_error"}})
        }
        ProviderProfile::Ollama => {
            json!({"error": {"message": "server busy, please try again.  maximum pending requests exceeded", "type": "api_error", "param": null, "code": null}})
        }
    };
    Reply::Raw {
        status: 429,
        content_type: "application/json",
        body: body.to_string(),
        headers: vec![("retry-after", "0".to_owned())],
    }
}

fn client_for(fake: &FakeOpenRouter, profile: ProviderProfile) -> OpenRouterClient {
    match profile {
        ProviderProfile::OpenRouter => fake.client(),
        local => fake.profile_client(local, ""),
    }
}

async fn run(client: &OpenRouterClient) -> Result<String, OpenRouterError> {
    client
        .run(
            &FakeTools::default(),
            RunRequest::new("Add 2 and 3"),
            RunOptions::default(),
        )
        .await
        .map(|done| done.text)
        .map_err(|failure| failure.error)
}

#[tokio::test]
async fn every_profile_runs_a_tool_call_in_its_own_response_shape() {
    for profile in ProviderProfile::ALL {
        let fake = FakeOpenRouter::start(vec![tool_call_reply(profile), final_text()]).await;
        let tools = FakeTools::default();
        let done = client_for(&fake, profile)
            .run(
                &tools,
                RunRequest::new("Add 2 and 3"),
                RunOptions::default(),
            )
            .await
            .unwrap_or_else(|failure| panic!("{profile:?}: {}", failure.error));
        assert_eq!(done.text, "2 + 3 = 5.", "{profile:?}");
        assert_eq!(tools.names(), ["math.add"], "{profile:?}");
        let second = &fake.requests()[1].body;
        assert_eq!(second["messages"][2]["role"], "tool", "{profile:?}");
        assert_eq!(second["messages"][2]["content"], r#"{"sum":5.0}"#);
    }
}

#[tokio::test]
async fn local_profiles_need_no_key_and_send_no_openrouter_fields() {
    for profile in LOCAL_PROFILES {
        let fake = FakeOpenRouter::start(vec![final_text()]).await;
        let mut config =
            OpenRouterConfig::for_provider(profile, fake.local_base(), ApiKey::default())
                .with_model("local-model")
                .with_data_policy(DataPolicy::Zdr)
                .with_attribution("http://127.0.0.1", "Studio");
        config.retry.max_retries = 0;
        let text = run(&OpenRouterClient::new(config).unwrap()).await.unwrap();
        assert_eq!(text, "2 + 3 = 5.", "{profile:?}");
        let request = &fake.requests()[0];
        assert_eq!(request.uri.path(), "/v1/chat/completions");
        assert!(
            !request.headers.contains_key("authorization"),
            "{profile:?}"
        );
        assert!(!request.headers.contains_key("x-title"), "{profile:?}");
        assert!(!request.headers.contains_key("http-referer"), "{profile:?}");
        let body = request.body.as_object().unwrap();
        assert!(!body.contains_key("provider"), "{profile:?}: {body:?}");
        assert_eq!(body["model"], "local-model");
        assert_eq!(body["tool_choice"], "auto");
    }
    // OpenRouter still sends its routing preferences and attribution.
    let fake = FakeOpenRouter::start(vec![final_text()]).await;
    let config = fake
        .config()
        .with_data_policy(DataPolicy::Deny)
        .with_attribution("http://127.0.0.1", "Studio");
    run(&OpenRouterClient::new(config).unwrap()).await.unwrap();
    let request = &fake.requests()[0];
    assert_eq!(request.body["provider"], json!({"data_collection": "deny"}));
    assert_eq!(request.headers["x-title"], "Studio");
}

#[tokio::test]
async fn a_key_goes_only_to_https_or_loopback_and_is_required_where_the_profile_says() {
    let fake = FakeOpenRouter::start(vec![final_text()]).await;
    // A key given for a local server is sent there (loopback): Ollama ignores it, a proxy may not.
    let text = run(&fake.profile_client(ProviderProfile::Ollama, "local-secret"))
        .await
        .unwrap();
    assert_eq!(text, "2 + 3 = 5.");
    assert_eq!(
        fake.requests()[0].headers["authorization"],
        "Bearer local-secret"
    );
    // Plain http to a non-loopback host: refused before anything is sent, for every profile.
    for profile in ProviderProfile::ALL {
        let config =
            OpenRouterConfig::for_provider(profile, "http://192.0.2.7:8080/v1", ApiKey::new("k"))
                .with_model("m");
        let error = run(&OpenRouterClient::new(config).unwrap())
            .await
            .unwrap_err();
        assert_eq!(error.code, OPENROUTER_CONFIGURATION_ERROR, "{profile:?}");
        assert!(error.message.contains("https://"), "{}", error.message);
    }
    // A remote generic provider needs a key; OpenRouter always does.
    for profile in [
        ProviderProfile::OpenRouter,
        ProviderProfile::OpenAiCompatible,
    ] {
        let config =
            OpenRouterConfig::for_provider(profile, "https://api.example/v1", ApiKey::default())
                .with_model("m");
        let error = run(&OpenRouterClient::new(config).unwrap())
            .await
            .unwrap_err();
        assert_eq!(
            (error.code, error.message.as_str()),
            (OPENROUTER_CONFIGURATION_ERROR, "API key is not configured.")
        );
    }
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_200_body_carrying_an_error_is_a_coded_failure_for_every_profile() {
    let bodies = [
        // OpenRouter: an upstream failure after routing.
        json!({"error": {"code": 502, "message": "Provider returned error", "metadata": {"raw": "upstream", "provider_name": "Fireworks"}}, "user_id": "user_1"}),
        // OpenAI style: no numeric code.
        json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error", "param": null, "code": null}}),
        // llama.cpp: numeric code in the body.
        json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}),
        // Ollama's native form: the error is a string.
        json!({"error": "model requires more system memory (9.1 GiB) than is available (4.0 GiB)"}),
    ];
    for (profile, body) in ProviderProfile::ALL.into_iter().zip(bodies) {
        let fake = FakeOpenRouter::start(vec![
            Reply::status(200, body.clone()),
            Reply::status(200, body.clone()),
            Reply::status(200, body.clone()),
        ])
        .await;
        let error = run(&client_for(&fake, profile)).await.unwrap_err();
        assert_eq!(
            error.code, OPENROUTER_PROVIDER_ERROR,
            "{profile:?}: {error}"
        );
        assert!(error.retryable);
        let expected = body["error"]["message"]
            .as_str()
            .or(body["error"].as_str())
            .unwrap();
        assert_eq!(error.message, expected, "{profile:?}");
        assert_eq!(fake.request_count(), 3, "retried twice: {profile:?}");
    }
}

#[tokio::test]
async fn a_choice_that_finished_with_an_error_is_a_failure_not_an_empty_answer() {
    let choice_error = json!({"id": "gen-1", "object": "chat.completion", "choices": [{
        "index": 0, "finish_reason": "error", "native_finish_reason": "error",
        "error": {"code": 502, "message": "Upstream provider closed the connection"},
        "message": {"role": "assistant", "content": ""}}]});
    let fake =
        FakeOpenRouter::start(vec![Reply::status(200, choice_error.clone()), final_text()]).await;
    let done = fake
        .client()
        .run(
            &FakeTools::default(),
            RunRequest::new("hi"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(done.text, "2 + 3 = 5.", "the failed choice was retried");
    let retry_codes: Vec<&str> = done
        .trace
        .transcript
        .iter()
        .filter_map(|event| match event {
            RunEvent::RetryScheduled { code, .. } => Some(*code),
            _ => None,
        })
        .collect();
    assert_eq!(retry_codes, [OPENROUTER_PROVIDER_ERROR]);
}

#[tokio::test]
async fn a_streamed_error_is_read_as_a_coded_failure() {
    let stream = [
        ": OPENROUTER PROCESSING",
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"The"},"finish_reason":null}]}"#,
        r#"data: {"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error"}}"#,
        "data: [DONE]",
    ]
    .join("\n\n");
    let rate_stream =
        r#"data: {"error": {"code": 429, "message": "Rate limit exceeded upstream"}}"#;
    let fake = FakeOpenRouter::start(vec![
        Reply::raw(200, "text/event-stream", &stream),
        Reply::raw(200, "text/event-stream", rate_stream),
        Reply::raw(200, "text/event-stream", &stream),
    ])
    .await;
    let error = run(&fake.profile_client(ProviderProfile::OpenAiCompatible, ""))
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            OPENROUTER_PROVIDER_ERROR,
            "The server had an error while processing your request. Sorry about that!"
        )
    );
    assert_eq!(fake.request_count(), 3);
    // A provider that streams although the loop did not ask it to is read as a stream.
    let ok_stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";
    let fake = FakeOpenRouter::start(vec![Reply::raw(200, "text/event-stream", ok_stream)]).await;
    let text = run(&fake.profile_client(ProviderProfile::LlamaCpp, ""))
        .await
        .unwrap();
    assert_eq!(text, "hi");
}

#[tokio::test]
async fn a_429_with_retry_after_is_honoured_for_every_profile() {
    for profile in ProviderProfile::ALL {
        let fake = FakeOpenRouter::start(vec![rate_limited(profile), final_text()]).await;
        let done = client_for(&fake, profile)
            .run(
                &FakeTools::default(),
                RunRequest::new("hi"),
                RunOptions::default(),
            )
            .await
            .unwrap();
        let retries: Vec<(u64, &str)> = done
            .trace
            .transcript
            .iter()
            .filter_map(|event| match event {
                RunEvent::RetryScheduled { delay_ms, code, .. } => Some((*delay_ms, *code)),
                _ => None,
            })
            .collect();
        assert_eq!(
            retries,
            [(0, OPENROUTER_RATE_LIMITED)],
            "{profile:?}: Retry-After 0 replaces the 1 ms backoff"
        );
        let fake = FakeOpenRouter::start(vec![
            rate_limited(profile),
            rate_limited(profile),
            rate_limited(profile),
        ])
        .await;
        let error = run(&client_for(&fake, profile)).await.unwrap_err();
        assert_eq!(
            (error.code, error.status, error.retryable),
            (OPENROUTER_RATE_LIMITED, Some(429), true),
            "{profile:?}"
        );
    }
}

#[tokio::test]
async fn a_model_without_tool_support_is_one_coded_unretried_failure() {
    for profile in ProviderProfile::ALL {
        let fake = FakeOpenRouter::start(vec![
            tools_unsupported_reply(profile),
            tools_unsupported_reply(profile),
            tools_unsupported_reply(profile),
        ])
        .await;
        let error = run(&client_for(&fake, profile)).await.unwrap_err();
        assert_eq!(
            error.code, OPENROUTER_TOOLS_UNSUPPORTED,
            "{profile:?}: {error}"
        );
        assert!(!error.retryable);
        assert_eq!(fake.request_count(), 1, "not retried: {profile:?}");
        assert!(error.status.is_some());
    }
}

#[tokio::test]
async fn openai_and_llama_cpp_catalogs_list_every_model_by_id() {
    let openai = json!({"object": "list", "data": [
        {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
        {"id": "gpt-4.1", "object": "model", "created": 1744316542, "owned_by": "system"}
    ]});
    let llama = json!({
        "models": [{"name": "qwen2.5-7b-instruct-q4_k_m.gguf", "model": "qwen2.5-7b-instruct-q4_k_m.gguf", "modified_at": "", "size": "", "digest": "", "type": "model", "description": "", "tags": [""], "capabilities": ["completion"], "parameters": "", "details": {"parent_model": "", "format": "gguf", "family": "", "families": [""], "parameter_size": "", "quantization_level": ""}}],
        "object": "list",
        "data": [{"id": "qwen2.5-7b-instruct-q4_k_m.gguf", "object": "model", "created": 1747000000, "owned_by": "llamacpp", "meta": {"vocab_type": 2, "n_vocab": 152064, "n_ctx_train": 32768, "n_embd": 3584, "n_params": 7615616512u64, "size": 4677120000u64}}]
    });
    for (profile, body, ids) in [
        (
            ProviderProfile::OpenAiCompatible,
            openai,
            vec!["gpt-4o-mini", "gpt-4.1"],
        ),
        (
            ProviderProfile::LlamaCpp,
            llama,
            vec!["qwen2.5-7b-instruct-q4_k_m.gguf"],
        ),
    ] {
        let fake = FakeOpenRouter::start(vec![Reply::status(200, body)]).await;
        let models = fake
            .profile_client(profile, "")
            .list_models(&CancellationToken::new())
            .await
            .unwrap();
        let listed: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(listed, ids, "{profile:?}");
        assert_eq!(
            models[0].name, ids[0],
            "the id stands in for a missing name"
        );
        let request = &fake.requests()[0];
        assert_eq!(request.uri.path(), "/v1/models");
        assert_eq!(request.uri.query(), None, "no OpenRouter query");
    }
}

#[tokio::test]
async fn the_ollama_catalog_keeps_the_models_whose_capabilities_include_tools() {
    let fake = FakeOpenRouter::start(vec![Reply::status(
        200,
        json!({"object": "list", "data": [
            {"id": "qwen3:8b", "object": "model", "created": 1747000000, "owned_by": "library"},
            {"id": "gemma3:4b", "object": "model", "created": 1747000000, "owned_by": "library"},
            {"id": "old-server-model:latest", "object": "model", "created": 1747000000, "owned_by": "library"}
        ]}),
    )])
    .await;
    let show = |capabilities: Value| json!({"modelfile": "FROM x", "details": {"format": "gguf", "family": "qwen3"}, "model_info": {}, "capabilities": capabilities, "modified_at": "2025-05-01T00:00:00Z"});
    fake.set_show("qwen3:8b", show(json!(["completion", "tools", "thinking"])));
    fake.set_show("gemma3:4b", show(json!(["completion", "vision"])));
    fake.set_show(
        "old-server-model:latest",
        json!({"modelfile": "FROM y", "details": {}}),
    );
    let models = fake
        .profile_client(ProviderProfile::Ollama, "")
        .list_models(&CancellationToken::new())
        .await
        .unwrap();
    let listed: Vec<(&str, bool)> = models
        .iter()
        .map(|m| (m.id.as_str(), m.supports_tools()))
        .collect();
    assert_eq!(
        listed,
        [("qwen3:8b", true), ("old-server-model:latest", false)],
        "gemma3 says it has no tools; the old server says nothing, so its model stays"
    );
    assert_eq!(
        fake.show_requests(),
        ["gemma3:4b", "old-server-model:latest", "qwen3:8b"]
    );
}

#[tokio::test]
async fn an_unreachable_catalog_is_a_readable_coded_error() {
    // Nothing listens on this port once the listener is dropped.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = OpenRouterConfig::for_provider(
        ProviderProfile::LlamaCpp,
        format!("http://127.0.0.1:{port}/v1"),
        ApiKey::default(),
    );
    let error = OpenRouterClient::new(config)
        .unwrap()
        .list_models(&CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.code, OPENROUTER_NETWORK_ERROR);
    assert_eq!(
        error.message,
        format!(
            "Could not reach the model catalog at http://127.0.0.1:{port}/v1/models: the connection was refused (is the server running?)."
        )
    );
    let config = OpenRouterConfig::for_provider(
        ProviderProfile::OpenAiCompatible,
        "https://no-such-host.invalid/v1",
        ApiKey::new("k"),
    );
    let error = OpenRouterClient::new(config)
        .unwrap()
        .list_models(&CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.code, OPENROUTER_NETWORK_ERROR);
    assert_eq!(
        error.message,
        "Could not reach the model catalog at https://no-such-host.invalid/v1/models: the host name could not be resolved."
    );
}
