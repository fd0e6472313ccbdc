//! The model catalog of the configured provider: tool-capable models where the provider says
//! which those are, the free filter and display labels.

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::attempt::TransportFailure;
use crate::client::{ChatClient, abortable};
use crate::codes::{
    OPENROUTER_CONFIGURATION_ERROR, OPENROUTER_INVALID_RESPONSE, OPENROUTER_NETWORK_ERROR,
    OPENROUTER_TIMEOUT,
};
use crate::config::DataPolicy;
use crate::error::OpenRouterError;
use crate::provider::ProviderProfile;

/// Query of every catalog request: text output and tool support.
pub const CATALOG_QUERY: [(&str, &str); 2] = [
    ("output_modalities", "text"),
    ("supported_parameters", "tools"),
];

/// One catalog entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    /// Model id, e.g. `openai/gpt-4o-mini` or `meta-llama/llama-3.3-70b-instruct:free`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Prompt price per token, as the catalog writes it.
    pub prompt_price: Option<String>,
    /// Completion price per token, as the catalog writes it.
    pub completion_price: Option<String>,
    /// Request parameters the model supports.
    pub supported_parameters: Vec<String>,
    /// Context window in tokens.
    pub context_length: Option<u64>,
}

impl ModelInfo {
    /// Free: the id ends with `:free`, or both prices parse to zero.
    ///
    /// ```
    /// use openrouter_tool_loop::ModelInfo;
    /// let model = ModelInfo { id: "x/y:free".into(), name: "Y".into(), prompt_price: None,
    ///     completion_price: None, supported_parameters: vec!["tools".into()], context_length: None };
    /// assert!(model.is_free());
    /// assert_eq!(model.label(), "Y (x/y:free) · free");
    /// ```
    pub fn is_free(&self) -> bool {
        let zero = |price: &Option<String>| {
            price.as_deref().and_then(|p| p.trim().parse::<f64>().ok()) == Some(0.0)
        };
        self.id.ends_with(":free") || (zero(&self.prompt_price) && zero(&self.completion_price))
    }

    /// Whether the model accepts the `tools` parameter.
    pub fn supports_tools(&self) -> bool {
        self.supported_parameters
            .iter()
            .any(|parameter| parameter == "tools")
    }

    /// `"<name> (<id>)"`, with `" · free"` for free models.
    pub fn label(&self) -> String {
        let label = format!("{} ({})", self.name, self.id);
        if self.is_free() {
            format!("{label} · free")
        } else {
            label
        }
    }
}

/// The free models of a catalog, in catalog order.
pub fn free_models(models: &[ModelInfo]) -> Vec<&ModelInfo> {
    models.iter().filter(|model| model.is_free()).collect()
}

/// Most models whose Ollama capabilities are looked up (`/api/show`) per catalog request; the
/// rest are listed with unknown tool support.
pub const MAX_CAPABILITY_LOOKUPS: usize = 64;

impl ChatClient {
    /// Fetches the configured provider's model catalog (`GET {base}/models`), narrowed to
    /// tool-capable models where the provider says which those are: OpenRouter filters
    /// server-side (text output, `tools`, and zero-data-retention endpoints under
    /// [`DataPolicy::Zdr`]); Ollama's `/api/show` capabilities drop models without `tools`
    /// (and add `tools` to the kept ones' `supported_parameters`); a generic provider and
    /// llama.cpp do not say, so every model is listed. Sends the key when one is configured
    /// (only to `https://` or loopback); honours the request timeout and `cancel`; not retried.
    /// An unreachable catalog is an [`OPENROUTER_NETWORK_ERROR`] that names the URL and why.
    pub async fn list_models(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<ModelInfo>, OpenRouterError> {
        let profile = self.config().provider;
        let url = self.catalog_url()?;
        self.check_key_destination(url.as_str())?;
        let request = self.http().get(url).headers(self.headers(true)?);
        let response = abortable(cancel, self.send(request))
            .await?
            .map_err(|failure| self.catalog_transport_error(failure))?;
        if !(200..300).contains(&response.status) {
            return Err(OpenRouterError::from_status(
                response.status,
                format!(
                    "{} model catalog request failed (HTTP {}).",
                    profile.label(),
                    response.status
                ),
            ));
        }
        let models =
            parse_provider_catalog(profile, response.status, &response.body, response.truncated)?;
        if profile == ProviderProfile::Ollama {
            return Ok(self.ollama_tool_models(models, cancel).await);
        }
        Ok(models)
    }

    /// The catalog URL; OpenRouter's gets the tool/text filter, plus `zdr=true` under
    /// [`DataPolicy::Zdr`].
    fn catalog_url(&self) -> Result<reqwest::Url, OpenRouterError> {
        let mut url = reqwest::Url::parse(&self.config().models_endpoint).map_err(|error| {
            OpenRouterError::new(
                OPENROUTER_CONFIGURATION_ERROR,
                format!("Model catalog endpoint is not a valid URL: {error}"),
            )
        })?;
        if !self.config().provider.is_openrouter() {
            return Ok(url);
        }
        url.query_pairs_mut().extend_pairs(CATALOG_QUERY);
        if self.config().data_policy == DataPolicy::Zdr {
            url.query_pairs_mut().append_pair("zdr", "true");
        }
        Ok(url)
    }

    /// A catalog request that produced no response, as a readable coded error.
    fn catalog_transport_error(&self, failure: TransportFailure) -> OpenRouterError {
        let config = self.config();
        match failure {
            TransportFailure::Timeout => OpenRouterError::new(
                OPENROUTER_TIMEOUT,
                format!(
                    "{} model catalog request timed out after {}ms.",
                    config.provider.label(),
                    config.request_timeout.as_millis()
                ),
            ),
            TransportFailure::Network(message) => OpenRouterError::new(
                OPENROUTER_NETWORK_ERROR,
                format!(
                    "Could not reach the model catalog at {}: {}.",
                    config.models_endpoint,
                    readable_network_reason(&message)
                ),
            ),
        }
    }

    /// Ollama's catalog narrowed by each model's `/api/show` capabilities: a model whose
    /// capabilities lack `tools` is dropped; one without a capability list (an older server, a
    /// failed lookup, past [`MAX_CAPABILITY_LOOKUPS`]) is kept with unknown support.
    async fn ollama_tool_models(
        &self,
        models: Vec<ModelInfo>,
        cancel: &CancellationToken,
    ) -> Vec<ModelInfo> {
        let Some(show_url) = ollama_show_url(&self.config().models_endpoint) else {
            return models;
        };
        let lookups = models
            .iter()
            .take(MAX_CAPABILITY_LOOKUPS)
            .map(|model| self.ollama_capabilities(&show_url, &model.id, cancel));
        let capabilities = futures::future::join_all(lookups).await;
        let mut kept = Vec::with_capacity(models.len());
        for (index, mut model) in models.into_iter().enumerate() {
            match capabilities.get(index).cloned().flatten() {
                Some(list) if list.iter().any(|c| c == "tools") => {
                    model.supported_parameters.push("tools".into());
                    kept.push(model);
                }
                Some(_) => {}
                None => kept.push(model),
            }
        }
        kept
    }

    /// One model's `capabilities` from Ollama's `POST /api/show`, `None` when not known.
    async fn ollama_capabilities(
        &self,
        show_url: &str,
        model: &str,
        cancel: &CancellationToken,
    ) -> Option<Vec<String>> {
        let headers = self.headers(true).ok()?;
        let request = self
            .http()
            .post(show_url)
            .headers(headers)
            .json(&serde_json::json!({ "model": model }));
        let response = abortable(cancel, self.send(request)).await.ok()?.ok()?;
        if !(200..300).contains(&response.status) || response.truncated {
            return None;
        }
        let show: Value = serde_json::from_str(&response.body).ok()?;
        let list = show.get("capabilities")?.as_array()?;
        Some(
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        )
    }
}

/// `…/api/show` beside an Ollama `…/v1/models` catalog.
fn ollama_show_url(models_endpoint: &str) -> Option<String> {
    let root = models_endpoint
        .trim()
        .trim_end_matches('/')
        .strip_suffix("/v1/models")?;
    Some(format!("{root}/api/show"))
}

/// Why a request could not be sent, in words a person acts on rather than a resolver's
/// error chain.
fn readable_network_reason(chain: &str) -> String {
    let lower = chain.to_ascii_lowercase();
    let reason = if lower.contains("dns error") || lower.contains("failed to lookup address") {
        "the host name could not be resolved"
    } else if lower.contains("connection refused") {
        "the connection was refused (is the server running?)"
    } else if lower.contains("certificate") {
        "the server's TLS certificate was not accepted"
    } else if lower.contains("connection reset") || lower.contains("connection closed") {
        "the server closed the connection"
    } else {
        return chain.rsplit(": ").next().unwrap_or(chain).trim().to_owned();
    };
    reason.to_owned()
}

/// Parses an OpenRouter catalog body: `data` must be an array to list anything; entries need
/// string `id` and `name`.
pub fn parse_catalog(
    status: u16,
    body: &str,
    truncated: bool,
) -> Result<Vec<ModelInfo>, OpenRouterError> {
    parse_provider_catalog(ProviderProfile::OpenRouter, status, body, truncated)
}

/// Parses a provider's `GET /models` body (`{"data": [{"id", ...}]}`): OpenRouter entries need
/// string `id` and `name`; other providers' entries (OpenAI, llama.cpp, Ollama write no
/// `name`) need an `id`, which stands in for the name.
pub fn parse_provider_catalog(
    profile: ProviderProfile,
    status: u16,
    body: &str,
    truncated: bool,
) -> Result<Vec<ModelInfo>, OpenRouterError> {
    let invalid = || {
        OpenRouterError::new(
            OPENROUTER_INVALID_RESPONSE,
            format!(
                "{} model catalog returned invalid JSON (HTTP {status}).",
                profile.label()
            ),
        )
    };
    if truncated {
        return Err(invalid());
    }
    let payload: Value = serde_json::from_str(body).map_err(|_| invalid())?;
    let Some(entries) = payload.get("data").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let named_by_id = !profile.is_openrouter();
    Ok(entries
        .iter()
        .filter_map(|entry| model_info(entry, named_by_id))
        .collect())
}

fn model_info(entry: &Value, named_by_id: bool) -> Option<ModelInfo> {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let pricing = entry.get("pricing");
    let id = text(entry.get("id"))?;
    let name = match text(entry.get("name")) {
        Some(name) => name,
        None if named_by_id => id.clone(),
        None => return None,
    };
    Some(ModelInfo {
        id,
        name,
        prompt_price: text(pricing.and_then(|p| p.get("prompt"))),
        completion_price: text(pricing.and_then(|p| p.get("completion"))),
        supported_parameters: entry
            .get("supported_parameters")
            .and_then(Value::as_array)
            .map(|parameters| {
                parameters
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        context_length: entry.get("context_length").and_then(Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_entries_with_id_and_name() {
        let body = json!({"data": [
            {"id": "a/paid", "name": "Paid", "pricing": {"prompt": "0.000001", "completion": "0.000002"}, "supported_parameters": ["tools", "tool_choice"], "context_length": 128000},
            {"id": "b/zero", "name": "Zero", "pricing": {"prompt": "0", "completion": "0.0"}},
            {"id": "c/x:free", "name": "C"},
            {"id": "d/half", "name": "Half", "pricing": {"prompt": "0", "completion": "0.1"}},
            {"id": 3, "name": "bad id"},
            {"id": "e/no-name"}
        ]})
        .to_string();
        let models = parse_catalog(200, &body, false).unwrap();
        assert_eq!(
            models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            ["a/paid", "b/zero", "c/x:free", "d/half"]
        );
        assert!(models[0].supports_tools());
        assert_eq!(models[0].context_length, Some(128_000));
        assert!(!models[1].supports_tools());
        let free: Vec<_> = free_models(&models).iter().map(|m| m.label()).collect();
        assert_eq!(free, ["Zero (b/zero) · free", "C (c/x:free) · free"]);
        assert_eq!(models[0].label(), "Paid (a/paid)");
    }

    #[test]
    fn bad_catalogs_are_coded_errors_or_empty() {
        assert_eq!(
            parse_catalog(200, r#"{"data": {}}"#, false).unwrap(),
            vec![]
        );
        let error = parse_catalog(200, "<html>", false).unwrap_err();
        assert_eq!(error.code, OPENROUTER_INVALID_RESPONSE);
        assert_eq!(
            error.message,
            "OpenRouter model catalog returned invalid JSON (HTTP 200)."
        );
        assert_eq!(
            parse_catalog(200, "{}", true).unwrap_err().code,
            OPENROUTER_INVALID_RESPONSE
        );
    }
}
