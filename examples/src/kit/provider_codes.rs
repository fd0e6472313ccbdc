//! Provider error codes as the person reads them. `openrouter-tool-loop` gives every provider's
//! failures one set of codes, `OPENROUTER_*`, so its callers handle one set; the studio shows
//! them under the provider kind in use (`LLAMACPP_NETWORK_ERROR` for a llama.cpp server,
//! `OPENAI_COMPATIBLE_CONFIGURATION_ERROR` for an OpenAI-compatible endpoint), and keeps
//! `OPENROUTER_*` for OpenRouter, where the contract lists them.

use openrouter_tool_loop::codes::OPENROUTER_ERROR_CODES;
use openrouter_tool_loop::{OpenRouterError, ProviderProfile};
use tool_protocol::ToolCallError;

use super::error::StudioError;

/// The crate's prefix, which OpenRouter keeps.
const LIBRARY_PREFIX: &str = "OPENROUTER_";

/// Every profile's prefix.
const PREFIXES: [(ProviderProfile, &str); 4] = [
    (ProviderProfile::OpenRouter, LIBRARY_PREFIX),
    (ProviderProfile::OpenAiCompatible, "OPENAI_COMPATIBLE_"),
    (ProviderProfile::LlamaCpp, "LLAMACPP_"),
    (ProviderProfile::Ollama, "OLLAMA_"),
];

fn prefix(profile: ProviderProfile) -> &'static str {
    PREFIXES
        .iter()
        .find(|(known, _)| *known == profile)
        .map_or(LIBRARY_PREFIX, |(_, prefix)| prefix)
}

/// `code` under `profile`'s name; codes that are not the crate's pass through unchanged.
pub(crate) fn for_provider(code: &str, profile: ProviderProfile) -> String {
    match library_kind(code) {
        Some(kind) => format!("{}{kind}", prefix(profile)),
        None => code.to_owned(),
    }
}

/// The failure kind of a crate code (`NETWORK_ERROR` of `OPENROUTER_NETWORK_ERROR`).
fn library_kind(code: &str) -> Option<&str> {
    let known = OPENROUTER_ERROR_CODES.iter().any(|info| info.code == code);
    known.then(|| &code[LIBRARY_PREFIX.len()..])
}

/// The failure kind of a provider code under any profile's name (`CANCELLED` of
/// `OLLAMA_CANCELLED`), `None` for every other code.
pub(crate) fn provider_kind(code: &str) -> Option<&str> {
    PREFIXES.iter().find_map(|(_, prefix)| {
        let kind = code.strip_prefix(prefix)?;
        library_kind(&format!("{LIBRARY_PREFIX}{kind}")).map(|_| kind)
    })
}

/// A provider failure as the page reads it: its code under `profile`'s name, its retryable
/// flag and message unchanged.
pub(crate) fn provider_error(error: &OpenRouterError, profile: ProviderProfile) -> ToolCallError {
    let mut error = error.to_tool_call_error();
    error.code = for_provider(&error.code, profile);
    error
}

/// [`provider_error`] as an HTTP answer: configuration errors are the request's fault (`400`),
/// anything else the provider's (`502`).
pub(crate) fn provider_failure(error: &OpenRouterError, profile: ProviderProfile) -> StudioError {
    let configuration = error.code == openrouter_tool_loop::codes::OPENROUTER_CONFIGURATION_ERROR;
    let error = provider_error(error, profile);
    if configuration {
        StudioError::BadRequest(error)
    } else {
        StudioError::BadGateway(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openrouter_tool_loop::codes;

    #[test]
    fn provider_codes_name_the_provider_in_use_and_keep_their_kind() {
        let network = codes::OPENROUTER_NETWORK_ERROR;
        assert_eq!(for_provider(network, ProviderProfile::OpenRouter), network);
        assert_eq!(
            for_provider(network, ProviderProfile::LlamaCpp),
            "LLAMACPP_NETWORK_ERROR"
        );
        assert_eq!(
            for_provider(
                codes::OPENROUTER_CONFIGURATION_ERROR,
                ProviderProfile::OpenAiCompatible
            ),
            "OPENAI_COMPATIBLE_CONFIGURATION_ERROR"
        );
        assert_eq!(
            for_provider("TOOL_POLICY_DENIED", ProviderProfile::Ollama),
            "TOOL_POLICY_DENIED"
        );
        assert_eq!(provider_kind("OLLAMA_CANCELLED"), Some("CANCELLED"));
        assert_eq!(
            provider_kind("OPENROUTER_RATE_LIMITED"),
            Some("RATE_LIMITED")
        );
        assert_eq!(provider_kind("OLLAMA_NOT_A_CODE"), None);
        assert_eq!(provider_kind("WORKSPACE_FILE_NOT_FOUND"), None);
        let failure = OpenRouterError::from_status(429, "slow down");
        let shown = provider_error(&failure, ProviderProfile::Ollama);
        assert_eq!(
            (shown.code.as_str(), shown.is_retryable()),
            ("OLLAMA_RATE_LIMITED", true)
        );
    }

    #[test]
    fn a_provider_failure_is_the_requests_fault_only_when_it_is_configuration() {
        let configuration = OpenRouterError::new(codes::OPENROUTER_CONFIGURATION_ERROR, "No key.");
        let answer = provider_failure(&configuration, ProviderProfile::OpenRouter);
        assert_eq!(answer.status().as_u16(), 400);
        let upstream = OpenRouterError::new(codes::OPENROUTER_PROVIDER_ERROR, "503");
        let answer = provider_failure(&upstream, ProviderProfile::LlamaCpp);
        assert_eq!(answer.status().as_u16(), 502);
        assert_eq!(answer.error().code, "LLAMACPP_PROVIDER_ERROR");
    }
}
