//! Where an API key may be sent: `https://` to any host, plain `http://` only to a loopback
//! host. One rule for the library and the studio, so a key never crosses a network in clear text.

use crate::codes::OPENROUTER_CONFIGURATION_ERROR;
use crate::error::OpenRouterError;

/// Message of an endpoint that breaks the rule (no URL, wrong scheme, non-loopback `http`).
pub const ENDPOINT_RULE: &str = "The endpoint must be an https:// URL, or http:// to a loopback address (127.0.0.1, [::1], localhost).";

/// Parses an endpoint a key may be sent to: `https://` to any host, plain `http://` only to a
/// literal loopback address or `localhost`; never with userinfo (`http://127.0.0.1@evil`), which
/// hides the real host. Failures are [`OPENROUTER_CONFIGURATION_ERROR`]s.
///
/// ```
/// use openrouter_tool_loop::check_endpoint;
/// assert!(check_endpoint("https://openrouter.ai/api/v1/chat/completions").is_ok());
/// assert!(check_endpoint("http://127.0.0.1:8080/v1/chat/completions").is_ok());
/// assert!(check_endpoint("http://127.0.0.1.evil.example/v1").is_err());
/// assert!(check_endpoint("http://10.0.0.1/v1").is_err());
/// ```
pub fn check_endpoint(raw: &str) -> Result<reqwest::Url, OpenRouterError> {
    let refuse = |message: String| OpenRouterError::new(OPENROUTER_CONFIGURATION_ERROR, message);
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|error| refuse(format!("The endpoint is not a URL ({error}).")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse(
            "The endpoint must not carry a user name or password.".into(),
        ));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(refuse(ENDPOINT_RULE.into())),
    }
}

/// Whether a URL names a loopback host: a literal loopback IP (`127.0.0.0/8`, `[::1]`) or
/// `localhost`.
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    match literal.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Whether an endpoint string is a loopback `http(s)` URL (a local server that needs no key).
pub fn is_loopback_endpoint(raw: &str) -> bool {
    reqwest::Url::parse(raw.trim()).is_ok_and(|url| is_loopback(&url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_without_userinfo_passes() {
        for refused in [
            "http://127.0.0.1.evil.example/x",
            "http://localhostevil.example/v1/chat/completions",
            "http://127.0.0.1@evil.example/v1",
            "https://user:pw@api.example/v1",
            "http://example.com/v1",
            "http://10.0.0.1/v1",
            "http://192.168.1.5:11434/v1",
            "ftp://127.0.0.1/",
            "not a url",
        ] {
            let error = check_endpoint(refused).unwrap_err();
            assert_eq!(error.code, OPENROUTER_CONFIGURATION_ERROR, "{refused}");
        }
        for accepted in [
            "https://api.example/v1/chat/completions",
            "http://127.0.0.1:8080/v1/chat/completions",
            "http://127.9.9.9/v1",
            "http://[::1]:11434/v1/chat/completions",
            "http://LOCALHOST:1234/v1/chat/completions",
        ] {
            assert!(check_endpoint(accepted).is_ok(), "{accepted}");
        }
        assert!(is_loopback_endpoint("http://localhost:11434/v1"));
        assert!(!is_loopback_endpoint("https://openrouter.ai/api/v1"));
    }
}
