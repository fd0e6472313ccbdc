//! Provider profiles: what differs between OpenAI-compatible chat-completions providers (base
//! URL, whether a key is needed, OpenRouter-only request fields, how the catalog reports tool
//! support). Everything else (decoding, retries, budgets, error codes) is shared.

use serde::Serialize;

use crate::endpoint::is_loopback_endpoint;

/// An OpenAI-compatible chat-completions provider.
///
/// ```
/// use openrouter_tool_loop::ProviderProfile;
/// let ollama = ProviderProfile::parse("ollama").unwrap();
/// assert_eq!(ollama.default_base_url(), "http://127.0.0.1:11434/v1");
/// assert!(!ollama.needs_key("http://127.0.0.1:11434/v1/chat/completions"));
/// assert!(ProviderProfile::OpenRouter.needs_key("https://openrouter.ai/api/v1/chat/completions"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderProfile {
    /// OpenRouter: key required; `provider` routing and data policy, attribution headers and
    /// the tool-filtered catalog query are sent.
    #[default]
    OpenRouter,
    /// Any OpenAI-compatible endpoint (OpenAI, LM Studio, vLLM, ...): key required unless the
    /// endpoint is on loopback; only the standard request fields are sent.
    #[serde(rename = "openai")]
    OpenAiCompatible,
    /// A llama.cpp `llama-server` (start it with `--jinja` for tool calls): no key.
    #[serde(rename = "llamacpp")]
    LlamaCpp,
    /// Ollama's OpenAI-compatible API (`/v1`): no key; tool support read from `/api/show`.
    Ollama,
}

impl ProviderProfile {
    /// Every profile, in the order a picker shows them.
    pub const ALL: [Self; 4] = [
        Self::OpenRouter,
        Self::OpenAiCompatible,
        Self::LlamaCpp,
        Self::Ollama,
    ];

    /// The stable id: `openrouter`, `openai`, `llamacpp` or `ollama`.
    pub fn id(self) -> &'static str {
        match self {
            Self::OpenRouter => "openrouter",
            Self::OpenAiCompatible => "openai",
            Self::LlamaCpp => "llamacpp",
            Self::Ollama => "ollama",
        }
    }

    /// Parses an id (case-insensitive, trimmed).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|profile| profile.id() == value)
    }

    /// A display name.
    pub fn label(self) -> &'static str {
        match self {
            Self::OpenRouter => "OpenRouter",
            Self::OpenAiCompatible => "OpenAI-compatible",
            Self::LlamaCpp => "llama.cpp server",
            Self::Ollama => "Ollama",
        }
    }

    /// The base URL a fresh configuration uses (`{base}/chat/completions`, `{base}/models`).
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenRouter => "https://openrouter.ai/api/v1",
            Self::OpenAiCompatible => "https://api.openai.com/v1",
            Self::LlamaCpp => "http://127.0.0.1:8080/v1",
            Self::Ollama => "http://127.0.0.1:11434/v1",
        }
    }

    /// Whether a request to `endpoint` needs an API key: always for OpenRouter, for a generic
    /// provider unless the endpoint is on loopback, never for llama.cpp and Ollama.
    pub fn needs_key(self, endpoint: &str) -> bool {
        match self {
            Self::OpenRouter => true,
            Self::OpenAiCompatible => !is_loopback_endpoint(endpoint),
            Self::LlamaCpp | Self::Ollama => false,
        }
    }

    /// Whether OpenRouter's own request parts are sent: the `provider` preferences (data
    /// policy), the attribution headers and the catalog's tool/ZDR query.
    pub fn is_openrouter(self) -> bool {
        self == Self::OpenRouter
    }
}

/// `{base}/chat/completions` (a trailing slash on `base` is ignored).
pub fn chat_completions_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim().trim_end_matches('/'))
}

/// `{base}/models` (a trailing slash on `base` is ignored).
pub fn models_url(base_url: &str) -> String {
    format!("{}/models", base_url.trim().trim_end_matches('/'))
}

/// The base URL of a chat-completions endpoint: `…/chat/completions` without that suffix,
/// otherwise the endpoint itself.
pub fn base_url_of(endpoint: &str) -> String {
    let trimmed = endpoint.trim().trim_end_matches('/');
    trimmed
        .strip_suffix("/chat/completions")
        .unwrap_or(trimmed)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_urls_join() {
        for profile in ProviderProfile::ALL {
            assert_eq!(ProviderProfile::parse(profile.id()), Some(profile));
            assert_eq!(
                serde_json::to_value(profile).unwrap(),
                serde_json::json!(profile.id())
            );
        }
        assert_eq!(
            ProviderProfile::parse(" LlamaCpp "),
            Some(ProviderProfile::LlamaCpp)
        );
        assert_eq!(ProviderProfile::parse("anthropic"), None);
        assert_eq!(
            chat_completions_url("http://127.0.0.1:8080/v1/"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            models_url("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434/v1/models"
        );
        assert_eq!(
            base_url_of("https://openrouter.ai/api/v1/chat/completions"),
            "https://openrouter.ai/api/v1"
        );
        assert_eq!(base_url_of("http://127.0.0.1:9/x/"), "http://127.0.0.1:9/x");
    }

    #[test]
    fn key_rules_per_profile() {
        let local = "http://127.0.0.1:1234/v1/chat/completions";
        let remote = "https://api.example/v1/chat/completions";
        assert!(ProviderProfile::OpenRouter.needs_key(local));
        assert!(ProviderProfile::OpenAiCompatible.needs_key(remote));
        assert!(!ProviderProfile::OpenAiCompatible.needs_key(local));
        assert!(!ProviderProfile::LlamaCpp.needs_key(remote));
        assert!(!ProviderProfile::Ollama.needs_key(local));
    }
}
