//! Client configuration: endpoint, model, API key, timeout, attribution, data policy.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::provider::{ProviderProfile, chat_completions_url, models_url};
use crate::retry::RetryPolicy;

/// OpenRouter's chat-completions endpoint.
pub const DEFAULT_CHAT_COMPLETIONS_URL: &str = "https://openrouter.ai/api/v1/chat/completions";
/// OpenRouter's model catalog endpoint.
pub const DEFAULT_MODELS_URL: &str = "https://openrouter.ai/api/v1/models";
/// Model used when none is configured.
pub const DEFAULT_MODEL: &str = "openai/gpt-4o-mini";
/// Timeout of one HTTP request, response body included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_millis(20_000);
/// `max_tokens` sent with every chat request.
pub const DEFAULT_MAX_TOKENS: u32 = 1_200;
/// `tool_choice` sent with every chat request.
pub const TOOL_CHOICE: &str = "auto";
/// Largest response body read from the provider; a larger 2xx body is an invalid response.
pub const MAX_RESPONSE_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Overall cap of one streamed response; [`OpenRouterConfig::request_timeout`] bounds the
/// silence between two chunks.
pub const STREAM_TIMEOUT: Duration = Duration::from_millis(300_000);
/// Tool calls of one response that run at the same time (read-only tools only; a mutation
/// always runs alone, in the provider's order).
pub const DEFAULT_MAX_PARALLEL_TOOL_CALLS: usize = 4;
/// Environment variable read by [`OpenRouterConfig::from_env`] for the key.
pub const API_KEY_ENV: &str = "OPENROUTER_API_KEY";
/// Environment variable read by [`OpenRouterConfig::from_env`] for the model.
pub const MODEL_ENV: &str = "OPENROUTER_MODEL";
/// Environment variable read by [`OpenRouterConfig::from_env`] for the endpoint.
pub const ENDPOINT_ENV: &str = "OPENROUTER_ENDPOINT";

/// An API key held in memory. `Debug` never shows it, and it is sent only as the bearer
/// header (marked sensitive so HTTP logging redacts it too).
///
/// ```
/// use openrouter_tool_loop::ApiKey;
/// let key = ApiKey::new("  sk-or-secret ");
/// assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
/// assert!(!key.is_empty());
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key; surrounding whitespace is trimmed.
    pub fn new(key: impl Into<String>) -> Self {
        let key = key.into();
        Self(key.trim().to_owned())
    }

    /// Whether no key is configured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The secret itself, for the `Authorization` header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() {
            "ApiKey(<empty>)"
        } else {
            "ApiKey(<redacted>)"
        })
    }
}

/// Which providers OpenRouter may route a request to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum DataPolicy {
    /// OpenRouter's default routing.
    #[default]
    Allow,
    /// Exclude providers that may collect or train on requests (`provider.data_collection: "deny"`).
    Deny,
    /// Zero-data-retention endpoints only (`provider.zdr: true`, plus `data_collection: "deny"`),
    /// and a ZDR-only model catalog.
    Zdr,
}

impl DataPolicy {
    /// The `provider` preferences object of a chat request, if the policy needs one.
    ///
    /// ```
    /// use openrouter_tool_loop::DataPolicy;
    /// use serde_json::json;
    /// assert_eq!(DataPolicy::Allow.provider_preferences(), None);
    /// assert_eq!(DataPolicy::Deny.provider_preferences(), Some(json!({"data_collection": "deny"})));
    /// assert_eq!(DataPolicy::Zdr.provider_preferences(), Some(json!({"data_collection": "deny", "zdr": true})));
    /// ```
    pub fn provider_preferences(self) -> Option<Value> {
        match self {
            Self::Allow => None,
            Self::Deny => Some(json!({ "data_collection": "deny" })),
            Self::Zdr => Some(json!({ "data_collection": "deny", "zdr": true })),
        }
    }

    /// Parses `allow`, `deny` or `zdr` (case-insensitive, trimmed).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            "zdr" => Some(Self::Zdr),
            _ => None,
        }
    }
}

/// App attribution headers OpenRouter documents: `HTTP-Referer` (your site) and `X-Title`
/// (your app's name). Both are optional; nothing is sent when unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attribution {
    /// Sent as `HTTP-Referer`.
    pub referer: Option<String>,
    /// Sent as `X-Title`.
    pub title: Option<String>,
}

/// Everything a client needs. Construct with [`OpenRouterConfig::new`] and adjust fields.
///
/// ```
/// use openrouter_tool_loop::{ApiKey, DataPolicy, OpenRouterConfig};
/// let config = OpenRouterConfig::new(ApiKey::new("sk-or-secret")).with_data_policy(DataPolicy::Zdr);
/// assert_eq!(config.model, "openai/gpt-4o-mini");
/// assert!(!format!("{config:?}").contains("sk-or-secret"));
/// ```
#[derive(Debug, Clone)]
pub struct OpenRouterConfig {
    /// Chat-completions URL.
    pub endpoint: String,
    /// Model catalog URL.
    pub models_endpoint: String,
    /// Model id, e.g. `openai/gpt-4o-mini`.
    pub model: String,
    /// The API key.
    pub api_key: ApiKey,
    /// Timeout of each HTTP request (body included); when streaming, the longest silence
    /// between two chunks.
    pub request_timeout: Duration,
    /// Whether responses are streamed (`stream: true`): text and tool-call arguments arrive
    /// as [`RunEvent`](crate::RunEvent) deltas. A provider that answers with one JSON body
    /// anyway is read as such. Off by default.
    pub streaming: bool,
    /// Overall cap of one streamed response.
    pub stream_timeout: Duration,
    /// Read-only tool calls of one response run concurrently up to this many (at least 1).
    pub max_parallel_tool_calls: usize,
    /// Transient retry policy.
    pub retry: RetryPolicy,
    /// App attribution headers.
    pub attribution: Attribution,
    /// Provider data policy.
    pub data_policy: DataPolicy,
    /// `max_tokens` of each chat request.
    pub max_tokens: u32,
    /// Largest response body read.
    pub max_response_bytes: usize,
    /// The provider profile: whether a key is needed and which OpenRouter-only request parts
    /// (`provider` preferences, attribution headers, catalog query) are sent.
    pub provider: ProviderProfile,
}

impl OpenRouterConfig {
    /// The defaults with this key.
    pub fn new(api_key: ApiKey) -> Self {
        Self {
            endpoint: DEFAULT_CHAT_COMPLETIONS_URL.to_owned(),
            models_endpoint: DEFAULT_MODELS_URL.to_owned(),
            model: DEFAULT_MODEL.to_owned(),
            api_key,
            request_timeout: REQUEST_TIMEOUT,
            streaming: false,
            stream_timeout: STREAM_TIMEOUT,
            max_parallel_tool_calls: DEFAULT_MAX_PARALLEL_TOOL_CALLS,
            retry: RetryPolicy::default(),
            attribution: Attribution::default(),
            data_policy: DataPolicy::default(),
            max_tokens: DEFAULT_MAX_TOKENS,
            max_response_bytes: MAX_RESPONSE_BODY_BYTES,
            provider: ProviderProfile::OpenRouter,
        }
    }

    /// The defaults of a provider at `base_url` (`{base}/chat/completions`, `{base}/models`).
    /// Only OpenRouter gets a default model; a local server's model ids come from its catalog.
    ///
    /// ```
    /// use openrouter_tool_loop::{ApiKey, OpenRouterConfig, ProviderProfile};
    /// let config = OpenRouterConfig::for_provider(ProviderProfile::Ollama, "http://127.0.0.1:11434/v1", ApiKey::default())
    ///     .with_model("qwen3:8b");
    /// assert_eq!(config.endpoint, "http://127.0.0.1:11434/v1/chat/completions");
    /// assert_eq!(config.models_endpoint, "http://127.0.0.1:11434/v1/models");
    /// ```
    pub fn for_provider(
        provider: ProviderProfile,
        base_url: impl Into<String>,
        api_key: ApiKey,
    ) -> Self {
        let mut config = Self::new(api_key)
            .with_provider(provider)
            .with_base_url(base_url);
        if !provider.is_openrouter() {
            config.model = String::new();
        }
        config
    }

    /// The defaults with the key, model and endpoint from `OPENROUTER_API_KEY`,
    /// `OPENROUTER_MODEL` and `OPENROUTER_ENDPOINT` (blank values are ignored). `None` when
    /// no key is set.
    pub fn from_env() -> Option<Self> {
        let read = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|value| value.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let mut config = Self::new(ApiKey::new(read(API_KEY_ENV)?));
        if let Some(model) = read(MODEL_ENV) {
            config.model = model;
        }
        if let Some(endpoint) = read(ENDPOINT_ENV) {
            config.endpoint = endpoint;
        }
        Some(config)
    }

    /// Sets the chat-completions endpoint (trimmed).
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = endpoint.into().trim().to_owned();
        self
    }

    /// Sets the model catalog endpoint (trimmed).
    #[must_use]
    pub fn with_models_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.models_endpoint = endpoint.into().trim().to_owned();
        self
    }

    /// Sets the model (trimmed).
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into().trim().to_owned();
        self
    }

    /// Sets the per-request timeout.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Streams responses (`stream: true`) or asks for one JSON body (`false`, the default).
    #[must_use]
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Sets the overall cap of one streamed response.
    #[must_use]
    pub fn with_stream_timeout(mut self, timeout: Duration) -> Self {
        self.stream_timeout = timeout;
        self
    }

    /// Sets how many read-only tool calls of one response run at once (0 is taken as 1).
    #[must_use]
    pub fn with_max_parallel_tool_calls(mut self, cap: usize) -> Self {
        self.max_parallel_tool_calls = cap.max(1);
        self
    }

    /// Sets the retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the attribution headers.
    #[must_use]
    pub fn with_attribution(
        mut self,
        referer: impl Into<String>,
        title: impl Into<String>,
    ) -> Self {
        self.attribution = Attribution {
            referer: Some(referer.into()),
            title: Some(title.into()),
        };
        self
    }

    /// Sets the provider profile (endpoints and model stay as they are).
    #[must_use]
    pub fn with_provider(mut self, provider: ProviderProfile) -> Self {
        self.provider = provider;
        self
    }

    /// Sets both endpoints from a base URL: `{base}/chat/completions` and `{base}/models`.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        let base_url = base_url.into();
        self.endpoint = chat_completions_url(&base_url);
        self.models_endpoint = models_url(&base_url);
        self
    }

    /// Sets the data policy.
    #[must_use]
    pub fn with_data_policy(mut self, policy: DataPolicy) -> Self {
        self.data_policy = policy;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let config = OpenRouterConfig::new(ApiKey::new("sk-or-v1-abcdef"));
        let debug = format!("{config:?}");
        assert!(!debug.contains("abcdef"));
        assert!(debug.contains("ApiKey(<redacted>)"));
        assert_eq!(format!("{:?}", ApiKey::new("   ")), "ApiKey(<empty>)");
        assert!(ApiKey::new(" \t").is_empty());
    }

    #[test]
    fn defaults_match_the_contract() {
        let config = OpenRouterConfig::new(ApiKey::default());
        assert_eq!(config.endpoint, DEFAULT_CHAT_COMPLETIONS_URL);
        assert_eq!(config.request_timeout, Duration::from_secs(20));
        assert_eq!(config.max_tokens, 1_200);
        assert_eq!(config.data_policy, DataPolicy::Allow);
        assert_eq!(config.retry, RetryPolicy::default());
        let trimmed = config.with_model("  m/x  ").with_endpoint(" http://e ");
        assert_eq!(
            (trimmed.model.as_str(), trimmed.endpoint.as_str()),
            ("m/x", "http://e")
        );
    }

    #[test]
    fn data_policies_parse() {
        assert_eq!(DataPolicy::parse(" ZDR "), Some(DataPolicy::Zdr));
        assert_eq!(DataPolicy::parse("deny"), Some(DataPolicy::Deny));
        assert_eq!(DataPolicy::parse("allow"), Some(DataPolicy::Allow));
        assert_eq!(DataPolicy::parse("maybe"), None);
    }
}
