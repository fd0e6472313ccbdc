//! The issuer's signing keys: found through its metadata (RFC 8414, else OpenID discovery) or a
//! configured JWKS URL, cached, and refreshed when a token names a key we do not know yet
//! (a key rotation), at most once per [`MIN_REFRESH_INTERVAL`] so forged `kid`s cannot make us
//! hammer the issuer. Bodies are bounded and fetches time out.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// Keys are re-read after this long even when every `kid` is known.
pub const MAX_KEY_AGE: Duration = Duration::from_secs(3600);
/// Unknown `kid`s trigger at most one refresh per this interval.
pub const MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(30);
/// Largest JWKS or metadata body read.
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// Most keys kept from one JWKS.
pub const MAX_KEYS: usize = 64;
/// Time one fetch may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// A verification key and the algorithm the issuer bound it to, if any.
#[derive(Clone)]
pub(crate) struct VerifyingKey {
    pub(crate) key: DecodingKey,
    pub(crate) algorithm: Option<Algorithm>,
}

#[derive(Default)]
struct Cached {
    by_kid: HashMap<String, VerifyingKey>,
    /// Keys without a `kid`: usable only when they are the set's only key.
    unnamed: Vec<VerifyingKey>,
    fetched_at: Option<Instant>,
}

/// Where the keys come from and what was last read.
pub(crate) struct KeyCache {
    client: reqwest::Client,
    issuer: String,
    jwks_uri: tokio::sync::Mutex<Option<String>>,
    cached: RwLock<Cached>,
    /// Held while refreshing (single flight) and remembers the last attempt.
    refresh: tokio::sync::Mutex<Option<Instant>>,
}

impl KeyCache {
    pub(crate) fn new(client: reqwest::Client, issuer: String, jwks_uri: Option<String>) -> Self {
        Self {
            client,
            issuer,
            jwks_uri: tokio::sync::Mutex::new(jwks_uri),
            cached: RwLock::default(),
            refresh: tokio::sync::Mutex::new(None),
        }
    }

    /// The key for a token naming `kid` (or none): from the cache, else after one refresh.
    pub(crate) async fn key_for(&self, kid: Option<&str>) -> Result<Option<VerifyingKey>, String> {
        if let Some(key) = self.cached_key(kid, true) {
            return Ok(Some(key));
        }
        let mut last = self.refresh.lock().await;
        // Another request may have refreshed while we waited.
        if let Some(key) = self.cached_key(kid, true) {
            return Ok(Some(key));
        }
        let stale = self
            .read()
            .fetched_at
            .is_none_or(|at| at.elapsed() >= MAX_KEY_AGE);
        let may_refresh = stale || last.is_none_or(|at| at.elapsed() >= MIN_REFRESH_INTERVAL);
        if may_refresh {
            *last = Some(Instant::now());
            match self.fetch().await {
                Ok(fresh) => *self.cached.write().unwrap_or_else(PoisonError::into_inner) = fresh,
                // Keys already known stay usable while the issuer is unreachable.
                Err(error) if self.read().fetched_at.is_none() => return Err(error),
                Err(error) => tracing::warn!(%error, "OAuth signing keys not refreshed"),
            }
        }
        Ok(self.cached_key(kid, false))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Cached> {
        self.cached.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn cached_key(&self, kid: Option<&str>, fresh_only: bool) -> Option<VerifyingKey> {
        let cached = self.read();
        let fresh = cached
            .fetched_at
            .is_some_and(|at| at.elapsed() < MAX_KEY_AGE);
        if fresh_only && !fresh {
            return None;
        }
        match kid {
            Some(kid) => cached.by_kid.get(kid).cloned(),
            None if cached.by_kid.len() + cached.unnamed.len() == 1 => cached
                .unnamed
                .first()
                .or_else(|| cached.by_kid.values().next())
                .cloned(),
            None => None,
        }
    }

    async fn fetch(&self) -> Result<Cached, String> {
        let uri = self.jwks_uri().await?;
        let document = self.get_json(&uri).await?;
        Ok(parse_key_set(&document))
    }

    async fn jwks_uri(&self) -> Result<String, String> {
        let mut known = self.jwks_uri.lock().await;
        if let Some(uri) = known.as_ref() {
            return Ok(uri.clone());
        }
        let uri = self.discover_jwks_uri().await?;
        *known = Some(uri.clone());
        Ok(uri)
    }

    /// RFC 8414 metadata first, then OpenID discovery; the document must name our issuer.
    async fn discover_jwks_uri(&self) -> Result<String, String> {
        let mut reasons = Vec::new();
        for url in metadata_urls(&self.issuer) {
            match self.get_json(&url).await {
                Ok(document) => return jwks_uri_of(&document, &self.issuer),
                Err(error) => reasons.push(error),
            }
        }
        Err(format!(
            "the issuer's metadata could not be read ({})",
            reasons.join("; ")
        ))
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let mut response = self
            .client
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .timeout(FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|error| format!("GET {url} failed: {error}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("GET {url} failed: {error}"))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "GET {url}: the document exceeds {MAX_DOCUMENT_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|_| format!("GET {url}: the answer is not JSON"))
    }
}

/// The issuer's metadata locations: RFC 8414 (well-known prefix before the issuer's path),
/// then OpenID Connect discovery (suffix after it).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let Some(scheme_end) = issuer.find("://") else {
        return Vec::new();
    };
    let after = &issuer[scheme_end + 3..];
    let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
    let origin = &issuer[..scheme_end + 3 + authority.len()];
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer}/.well-known/openid-configuration"),
    ]
}

fn jwks_uri_of(document: &Value, issuer: &str) -> Result<String, String> {
    let named = document.get("issuer").and_then(Value::as_str);
    if named.map(|named| named.trim_end_matches('/')) != Some(issuer.trim_end_matches('/')) {
        return Err(format!(
            "the issuer's metadata names another issuer ({})",
            named.unwrap_or("none")
        ));
    }
    document
        .get("jwks_uri")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "the issuer's metadata has no jwks_uri".to_owned())
}

/// The signing keys of a JWKS; keys we cannot use (encryption keys, unknown types, symmetric
/// keys) are skipped, not fatal.
fn parse_key_set(document: &Value) -> Cached {
    let mut cached = Cached {
        fetched_at: Some(Instant::now()),
        ..Cached::default()
    };
    let keys = document.get("keys").and_then(Value::as_array);
    for value in keys.into_iter().flatten().take(MAX_KEYS) {
        if value
            .get("use")
            .and_then(Value::as_str)
            .is_some_and(|u| u != "sig")
        {
            continue;
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
            continue;
        };
        if matches!(
            jwk.algorithm,
            jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
        ) {
            continue;
        }
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let algorithm = jwk
            .common
            .key_algorithm
            .and_then(|algorithm| Algorithm::try_from(algorithm).ok());
        let verifying = VerifyingKey { key, algorithm };
        match jwk.common.key_id {
            Some(kid) => {
                cached.by_kid.insert(kid, verifying);
            }
            None => cached.unnamed.push(verifying),
        }
    }
    cached
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_looked_up_the_rfc_8414_way_then_the_openid_way() {
        assert_eq!(
            metadata_urls("https://as.example/tenant/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant",
                "https://as.example/tenant/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("http://127.0.0.1:9")[0],
            "http://127.0.0.1:9/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn metadata_of_another_issuer_is_refused() {
        let document =
            json!({"issuer": "https://evil.example", "jwks_uri": "https://evil.example/jwks"});
        assert!(jwks_uri_of(&document, "https://as.example").is_err());
        let ours = json!({"issuer": "https://as.example/", "jwks_uri": "https://as.example/jwks"});
        assert_eq!(
            jwks_uri_of(&ours, "https://as.example").unwrap(),
            "https://as.example/jwks"
        );
    }

    #[test]
    fn symmetric_encryption_and_unknown_keys_are_skipped() {
        let set = json!({"keys": [
            {"kty": "oct", "kid": "h", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"},
            {"kty": "weird", "kid": "w"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "alg": "EdDSA",
             "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
        ]});
        let cached = parse_key_set(&set);
        assert_eq!(cached.by_kid.keys().collect::<Vec<_>>(), ["ed"]);
        assert_eq!(cached.by_kid["ed"].algorithm, Some(Algorithm::EdDSA));
    }
}
