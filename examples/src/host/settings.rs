//! Provider settings: model, endpoint, data policy and the API key. The key lives in host memory
//! (from `OPENROUTER_API_KEY` or the settings dialog) and reaches disk only when the user asks
//! to save it; no view, event, trace or log ever carries it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use openrouter_tool_loop::{ApiKey, DataPolicy, OpenRouterConfig};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Longest accepted model id or endpoint, in characters.
pub const MAX_SETTING_CHARS: usize = 512;
/// Longest accepted API key, in characters.
pub const MAX_API_KEY_CHARS: usize = 512;

#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    model: Option<String>,
    endpoint: Option<String>,
    data_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_key: Option<String>,
}

/// A settings change from the dialog; absent fields stay as they are.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsUpdate {
    /// Model id (`vendor/model`).
    pub model: Option<String>,
    /// Chat-completions endpoint URL.
    pub endpoint: Option<String>,
    /// `allow`, `deny` or `zdr`.
    pub data_policy: Option<String>,
    /// A new API key.
    pub api_key: Option<String>,
    /// Forget the API key.
    #[serde(default)]
    pub clear_key: bool,
    /// Store the API key in the data directory (`true`) or only in memory (`false`); absent,
    /// a key stays saved or unsaved as it was.
    #[serde(default)]
    pub save_key: Option<bool>,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("model", &self.model)
            .field("endpoint", &self.endpoint)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// The studio's provider settings.
#[derive(Debug, Clone)]
pub struct Settings {
    inner: Arc<RwLock<Stored>>,
    key_saved: Arc<RwLock<bool>>,
    file: PathBuf,
}

impl Settings {
    /// Loads `settings.json` from `data_dir` (if any), then the `OPENROUTER_*` environment.
    pub fn load(data_dir: &Path) -> Self {
        let file = data_dir.join("settings.json");
        let mut stored: Stored = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        if let Some(endpoint) = stored.endpoint.take() {
            match check_endpoint(&endpoint) {
                Ok(_) => stored.endpoint = Some(endpoint),
                Err(reason) => tracing::warn!(%reason, "ignoring the stored endpoint"),
            }
        }
        let key_saved = stored.api_key.is_some();
        if let Ok(key) = std::env::var(openrouter_tool_loop::API_KEY_ENV)
            && !key.trim().is_empty()
        {
            stored.api_key = Some(key.trim().to_owned());
        }
        Self {
            inner: Arc::new(RwLock::new(stored)),
            key_saved: Arc::new(RwLock::new(key_saved)),
            file,
        }
    }

    /// What the page may see: never the key, only whether one is set.
    pub fn public_view(&self) -> Value {
        let stored = self.inner.read().expect("settings lock");
        json!({
            "model": stored.model.clone().unwrap_or_else(|| openrouter_tool_loop::DEFAULT_MODEL.to_owned()),
            "endpoint": stored.endpoint.clone().unwrap_or_else(|| openrouter_tool_loop::DEFAULT_CHAT_COMPLETIONS_URL.to_owned()),
            "dataPolicy": stored.data_policy.clone().unwrap_or_else(|| "allow".to_owned()),
            "hasApiKey": stored.api_key.as_deref().is_some_and(|key| !key.is_empty()),
            "keySaved": *self.key_saved.read().expect("settings lock"),
        })
    }

    /// Applies a change, persisting the non-secret settings (and the key when asked to).
    /// Moving the endpoint to another origin drops the key unless the change supplies it again,
    /// so a key is never sent to a host it was not given for (`keyDropped` in the view).
    pub fn update(&self, update: SettingsUpdate) -> Result<Value, String> {
        validate(&update)?;
        let mut key_dropped = false;
        {
            let mut stored = self.inner.write().expect("settings lock");
            if let Some(model) = update.model {
                stored.model = Some(model.trim().to_owned()).filter(|m| !m.is_empty());
            }
            if let Some(endpoint) = update.endpoint {
                let next = Some(endpoint.trim().to_owned()).filter(|e| !e.is_empty());
                let moved = origin_of(stored.endpoint.as_deref()) != origin_of(next.as_deref());
                if moved && update.api_key.is_none() && stored.api_key.take().is_some() {
                    key_dropped = true;
                }
                stored.endpoint = next;
            }
            if let Some(policy) = update.data_policy {
                stored.data_policy =
                    DataPolicy::parse(&policy).map(|_| policy.trim().to_ascii_lowercase());
            }
            if update.clear_key {
                stored.api_key = None;
            }
            if let Some(key) = update.api_key {
                stored.api_key = Some(key.trim().to_owned()).filter(|k| !k.is_empty());
            }
        }
        let keep_saved = *self.key_saved.read().expect("settings lock");
        let save_key = update.save_key.unwrap_or(keep_saved) && !update.clear_key && !key_dropped;
        self.persist(save_key)
            .map_err(|error| format!("Settings could not be saved: {error}"))?;
        *self.key_saved.write().expect("settings lock") = save_key;
        let mut view = self.public_view();
        view["keyDropped"] = json!(key_dropped);
        Ok(view)
    }

    fn persist(&self, include_key: bool) -> std::io::Result<()> {
        let mut stored = self.inner.read().expect("settings lock").clone();
        if !include_key {
            stored.api_key = None;
        }
        let bytes = serde_json::to_vec_pretty(&stored).map_err(std::io::Error::other)?;
        if let Some(dir) = self.file.parent() {
            crate::kit::private_files::create_private_dir(dir)?;
        }
        crate::kit::private_files::write_private(&self.file, &bytes)
    }

    /// The client configuration, or `None` without a key.
    pub fn client_config(&self) -> Option<OpenRouterConfig> {
        let stored = self.inner.read().expect("settings lock");
        let key = stored.api_key.clone().filter(|key| !key.is_empty())?;
        let mut config = OpenRouterConfig::new(ApiKey::new(key))
            .with_attribution("http://127.0.0.1", "Live Code Studio");
        if let Some(model) = &stored.model {
            config = config.with_model(model.clone());
        }
        if let Some(endpoint) = &stored.endpoint {
            config = config
                .with_endpoint(endpoint.clone())
                .with_models_endpoint(models_endpoint_of(endpoint));
        }
        if let Some(policy) = stored.data_policy.as_deref().and_then(DataPolicy::parse) {
            config = config.with_data_policy(policy);
        }
        Some(config)
    }
}

fn validate(update: &SettingsUpdate) -> Result<(), String> {
    let too_long = |value: &Option<String>, max: usize| {
        value.as_ref().is_some_and(|v| v.chars().count() > max)
    };
    if too_long(&update.model, MAX_SETTING_CHARS)
        || too_long(&update.endpoint, MAX_SETTING_CHARS)
        || too_long(&update.api_key, MAX_API_KEY_CHARS)
    {
        return Err("Settings values must be at most 512 characters.".into());
    }
    if let Some(endpoint) = &update.endpoint
        && !endpoint.trim().is_empty()
    {
        check_endpoint(endpoint.trim())?;
    }
    if let Some(policy) = &update.data_policy
        && DataPolicy::parse(policy).is_none()
    {
        return Err("dataPolicy must be allow, deny or zdr.".into());
    }
    Ok(())
}

/// Parses an endpoint the key may be sent to: `https://` to any host, plain `http://` only to
/// a literal loopback address or `localhost`; never with userinfo (`http://127.0.0.1@evil`),
/// which hides the real host.
pub fn check_endpoint(raw: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(raw)
        .map_err(|error| format!("The endpoint is not a URL ({error})."))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("The endpoint must not carry a user name or password.".into());
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err("The endpoint must be an https:// URL, or http:// to a loopback address (127.0.0.1, [::1], localhost).".into()),
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    match literal.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Scheme, host and port of an endpoint (`None`: the default endpoint).
fn origin_of(endpoint: Option<&str>) -> String {
    let endpoint = endpoint.unwrap_or(openrouter_tool_loop::DEFAULT_CHAT_COMPLETIONS_URL);
    reqwest::Url::parse(endpoint)
        .map(|url| url.origin().ascii_serialization())
        .unwrap_or_else(|_| endpoint.to_owned())
}

/// The model catalog beside a chat-completions endpoint: `…/chat/completions` → `…/models`,
/// otherwise `models` under the endpoint's path.
fn models_endpoint_of(endpoint: &str) -> String {
    let trimmed = endpoint.trim_end_matches('/');
    match trimmed.strip_suffix("/chat/completions") {
        Some(base) => format!("{base}/models"),
        None => format!("{trimmed}/models"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_appears_in_views_or_unsaved_files() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        let view = settings
            .update(SettingsUpdate {
                api_key: Some("sk-test-not-real".into()),
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            })
            .unwrap();
        assert_eq!(view["hasApiKey"], true);
        assert!(!view.to_string().contains("sk-test"));
        let file = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
        assert!(
            !file.contains("sk-test"),
            "the key is saved only on request"
        );
        assert!(settings.client_config().is_some());
        assert!(!format!("{:?}", settings).contains("sk-test"));
    }

    #[test]
    fn a_saved_key_survives_a_restart_and_can_be_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        settings
            .update(SettingsUpdate {
                api_key: Some("sk-saved".into()),
                save_key: Some(true),
                ..SettingsUpdate::default()
            })
            .unwrap();
        let reloaded = Settings::load(dir.path());
        assert_eq!(reloaded.public_view()["keySaved"], true);
        reloaded
            .update(SettingsUpdate {
                clear_key: true,
                ..SettingsUpdate::default()
            })
            .unwrap();
        assert!(reloaded.client_config().is_none() || std::env::var("OPENROUTER_API_KEY").is_ok());
        assert!(
            !std::fs::read_to_string(dir.path().join("settings.json"))
                .unwrap()
                .contains("sk-saved")
        );
    }

    fn endpoint(settings: &Settings, endpoint: &str) -> Result<Value, String> {
        settings.update(SettingsUpdate {
            endpoint: Some(endpoint.into()),
            ..SettingsUpdate::default()
        })
    }

    #[test]
    fn only_https_or_a_literal_loopback_http_endpoint_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        for refused in [
            "http://127.0.0.1.evil.example/x",
            "http://localhostevil.example/v1/chat/completions",
            "http://127.0.0.1@evil.example/v1",
            "https://user:pw@api.example/v1",
            "http://example.com/v1",
            "http://10.0.0.1/v1",
            "ftp://127.0.0.1/",
            "not a url",
        ] {
            assert!(endpoint(&settings, refused).is_err(), "{refused}");
        }
        assert_eq!(
            settings.public_view()["endpoint"],
            openrouter_tool_loop::DEFAULT_CHAT_COMPLETIONS_URL
        );
        for accepted in [
            "https://api.example/v1/chat/completions",
            "http://127.0.0.1:8080/v1/chat/completions",
            "http://127.9.9.9/v1",
            "http://[::1]:11434/v1/chat/completions",
            "http://LOCALHOST:1234/v1/chat/completions",
        ] {
            assert!(endpoint(&settings, accepted).is_ok(), "{accepted}");
        }
    }

    #[test]
    fn moving_the_endpoint_to_another_host_drops_the_key_unless_given_again() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        settings
            .update(SettingsUpdate {
                api_key: Some("sk-test-not-real".into()),
                ..SettingsUpdate::default()
            })
            .unwrap();
        let same_host = "https://openrouter.ai/api/v1/chat/completions?x=1";
        let view = endpoint(&settings, same_host).unwrap();
        assert_eq!(
            (view["hasApiKey"].clone(), view["keyDropped"].clone()),
            (json!(true), json!(false))
        );
        let view = endpoint(&settings, "https://other.example/v1/chat/completions").unwrap();
        assert_eq!(
            (view["hasApiKey"].clone(), view["keyDropped"].clone()),
            (json!(false), json!(true))
        );
        assert!(settings.client_config().is_none() || std::env::var("OPENROUTER_API_KEY").is_ok());
        let view = settings
            .update(SettingsUpdate {
                endpoint: Some("http://127.0.0.1:9/v1/chat/completions".into()),
                api_key: Some("sk-test-again".into()),
                ..SettingsUpdate::default()
            })
            .unwrap();
        assert_eq!(view["hasApiKey"], true, "a key given with the move is kept");
        let config = settings.client_config().unwrap();
        assert_eq!(config.models_endpoint, "http://127.0.0.1:9/v1/models");
    }

    #[test]
    fn a_stored_endpoint_that_breaks_the_rules_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"endpoint": "http://127.0.0.1.evil.example/x"}"#,
        )
        .unwrap();
        let settings = Settings::load(dir.path());
        assert_eq!(
            settings.public_view()["endpoint"],
            openrouter_tool_loop::DEFAULT_CHAT_COMPLETIONS_URL
        );
    }

    #[test]
    fn a_change_without_save_key_keeps_a_saved_key_saved() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        settings
            .update(SettingsUpdate {
                api_key: Some("sk-saved-not-real".into()),
                save_key: Some(true),
                ..SettingsUpdate::default()
            })
            .unwrap();
        let view = settings
            .update(SettingsUpdate {
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            })
            .unwrap();
        assert_eq!(view["keySaved"], true);
        let file = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
        assert!(file.contains("sk-saved-not-real"), "still saved");
        assert!(file.contains("gpt-4o-mini"), "the other change applied");
        let view = settings
            .update(SettingsUpdate {
                save_key: Some(false),
                ..SettingsUpdate::default()
            })
            .unwrap();
        assert_eq!(view["keySaved"], false);
        let file = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
        assert!(!file.contains("sk-saved-not-real"), "unsaved on request");
        assert_eq!(view["hasApiKey"], true, "kept in memory");
    }

    #[test]
    fn invalid_values_are_refused_without_changes() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        assert!(
            settings
                .update(SettingsUpdate {
                    endpoint: Some("ftp://x".into()),
                    ..SettingsUpdate::default()
                })
                .is_err()
        );
        assert!(
            settings
                .update(SettingsUpdate {
                    data_policy: Some("maybe".into()),
                    ..SettingsUpdate::default()
                })
                .is_err()
        );
        assert!(
            settings
                .update(SettingsUpdate {
                    model: Some("m".repeat(513)),
                    ..SettingsUpdate::default()
                })
                .is_err()
        );
        assert_eq!(settings.public_view()["dataPolicy"], "allow");
    }
}
