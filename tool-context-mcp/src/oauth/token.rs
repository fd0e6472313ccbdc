//! Checking one bearer JWT: asymmetric algorithms only, the key the issuer published (and the
//! algorithm it bound to that key), `iss`, `aud` (this resource, RFC 8707), `exp` and `nbf`
//! with the configured leeway, and a `sub`. What it grants is read from `scope` (RFC 8693's
//! space-separated string) or an `scp` list.

use std::collections::BTreeSet;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use serde::Deserialize;
use serde_json::Value;

use super::keys::KeyCache;

/// Longest token accepted, in bytes.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// What a token says about its bearer, once it checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claims {
    pub(crate) subject: String,
    pub(crate) scopes: BTreeSet<String>,
}

/// Why a token was refused: an invalid token, or keys we could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenError {
    Invalid(String),
    KeysUnavailable(String),
}

#[derive(Deserialize)]
struct RawClaims {
    sub: String,
    #[serde(default)]
    scope: Option<Value>,
    #[serde(default)]
    scp: Option<Value>,
}

/// What a token must match.
pub(crate) struct Expectations<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audience: &'a str,
    pub(crate) leeway: Duration,
}

pub(crate) async fn check(
    token: &str,
    keys: &KeyCache,
    expected: &Expectations<'_>,
) -> Result<Claims, TokenError> {
    let invalid = |why: &str| TokenError::Invalid(why.to_owned());
    if token.len() > MAX_TOKEN_BYTES {
        return Err(invalid("it is longer than any token this server accepts."));
    }
    let header = decode_header(token).map_err(|_| invalid("it is not a signed JWT."))?;
    if !is_asymmetric(header.alg) {
        return Err(invalid("its algorithm is not one this server accepts."));
    }
    let key = keys
        .key_for(header.kid.as_deref())
        .await
        .map_err(TokenError::KeysUnavailable)?
        .ok_or_else(|| {
            invalid("it is not signed with a key the authorization server published.")
        })?;
    if key.algorithm.is_some_and(|bound| bound != header.alg) {
        return Err(invalid("its algorithm is not the one its key is for."));
    }
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[expected.issuer]);
    validation.set_audience(&[expected.audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = expected.leeway.as_secs();
    let data = decode::<RawClaims>(token, &key.key, &validation)
        .map_err(|error| TokenError::Invalid(reason(error.kind()).to_owned()))?;
    if data.claims.sub.trim().is_empty() {
        return Err(invalid("its subject (sub) is empty."));
    }
    Ok(Claims {
        scopes: scopes_of(data.claims.scope.as_ref().or(data.claims.scp.as_ref())),
        subject: data.claims.sub,
    })
}

fn is_asymmetric(algorithm: Algorithm) -> bool {
    !matches!(
        algorithm,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
    )
}

/// A reason safe to send back (never the token or its claims).
fn reason(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "it has expired.",
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf).",
        ErrorKind::InvalidAudience => "it was issued for another resource (aud).",
        ErrorKind::InvalidIssuer => "it was issued by another authorization server (iss).",
        ErrorKind::InvalidSignature => "its signature does not verify.",
        ErrorKind::MissingRequiredClaim(_) => "it lacks a required claim (exp, iss, aud or sub).",
        ErrorKind::InvalidAlgorithm => "its algorithm is not the one its key is for.",
        _ => "it is malformed.",
    }
}

/// `scope: "a b"` or `scp: ["a", "b"]` (or `scp: "a b"`).
fn scopes_of(value: Option<&Value>) -> BTreeSet<String> {
    match value {
        Some(Value::String(text)) => text.split_ascii_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_are_read_from_a_string_or_a_list() {
        let expected: BTreeSet<String> = ["a".to_owned(), "b".to_owned()].into();
        assert_eq!(scopes_of(Some(&json!("a  b"))), expected);
        assert_eq!(scopes_of(Some(&json!(["a", "b", 3]))), expected);
        assert!(scopes_of(Some(&json!(7))).is_empty());
        assert!(scopes_of(None).is_empty());
    }

    #[test]
    fn only_asymmetric_algorithms_are_accepted() {
        assert!(!is_asymmetric(Algorithm::HS256));
        assert!(is_asymmetric(Algorithm::RS256));
        assert!(is_asymmetric(Algorithm::EdDSA));
    }
}
