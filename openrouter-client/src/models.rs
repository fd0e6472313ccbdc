//! The model catalog: tool-capable text models, the free filter and display labels.

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::{OpenRouterClient, TransportFailure, abortable};
use crate::codes::{
    OPENROUTER_CONFIGURATION_ERROR, OPENROUTER_INVALID_RESPONSE, OPENROUTER_NETWORK_ERROR,
    OPENROUTER_TIMEOUT,
};
use crate::config::DataPolicy;
use crate::error::OpenRouterError;

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

impl OpenRouterClient {
    /// Fetches the tool-capable text models (zero-data-retention endpoints only when the
    /// data policy is [`DataPolicy::Zdr`]). Sends the key when one is configured; honours
    /// the request timeout and `cancel`; not retried.
    pub async fn list_models(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<ModelInfo>, OpenRouterError> {
        let request = self
            .http()
            .get(self.catalog_url()?)
            .headers(self.headers(true)?);
        let response =
            abortable(cancel, self.send(request))
                .await?
                .map_err(|failure| match failure {
                    TransportFailure::Timeout => OpenRouterError::new(
                        OPENROUTER_TIMEOUT,
                        format!(
                            "OpenRouter model catalog request timed out after {}ms.",
                            self.config().request_timeout.as_millis()
                        ),
                    ),
                    TransportFailure::Network(message) => OpenRouterError::new(
                        OPENROUTER_NETWORK_ERROR,
                        format!("Network request failed: {message}"),
                    ),
                })?;
        if !(200..300).contains(&response.status) {
            return Err(OpenRouterError::from_status(
                response.status,
                format!(
                    "OpenRouter model catalog request failed (HTTP {}).",
                    response.status
                ),
            ));
        }
        parse_catalog(response.status, &response.body, response.truncated)
    }
}

impl OpenRouterClient {
    /// The catalog URL with the tool/text filter, plus `zdr=true` under [`DataPolicy::Zdr`].
    fn catalog_url(&self) -> Result<reqwest::Url, OpenRouterError> {
        let mut url = reqwest::Url::parse(&self.config().models_endpoint).map_err(|error| {
            OpenRouterError::new(
                OPENROUTER_CONFIGURATION_ERROR,
                format!("Model catalog endpoint is not a valid URL: {error}"),
            )
        })?;
        url.query_pairs_mut().extend_pairs(CATALOG_QUERY);
        if self.config().data_policy == DataPolicy::Zdr {
            url.query_pairs_mut().append_pair("zdr", "true");
        }
        Ok(url)
    }
}

/// Parses a catalog body: `data` must be an array to list anything; entries need string
/// `id` and `name`.
pub fn parse_catalog(
    status: u16,
    body: &str,
    truncated: bool,
) -> Result<Vec<ModelInfo>, OpenRouterError> {
    let invalid = || {
        OpenRouterError::new(
            OPENROUTER_INVALID_RESPONSE,
            format!("OpenRouter model catalog returned invalid JSON (HTTP {status})."),
        )
    };
    if truncated {
        return Err(invalid());
    }
    let payload: Value = serde_json::from_str(body).map_err(|_| invalid())?;
    let Some(entries) = payload.get("data").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    Ok(entries.iter().filter_map(model_info).collect())
}

fn model_info(entry: &Value) -> Option<ModelInfo> {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let pricing = entry.get("pricing");
    Some(ModelInfo {
        id: text(entry.get("id"))?,
        name: text(entry.get("name"))?,
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
