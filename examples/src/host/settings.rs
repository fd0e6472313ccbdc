//! Provider settings: provider profile, model, endpoint, data policy and the API key. The key
//! lives in host memory (from `OPENROUTER_API_KEY` or the settings dialog) and reaches disk only
//! when the user asks to save it; no view, event, trace or log ever carries it.
//!
//! A settings file written before profiles existed has no `provider`: it is OpenRouter, and its
//! `endpoint` (a chat-completions URL) and saved key keep working unchanged.
//!
//! The same file keeps the MCP servers the studio mounts (`mcpServers`, secrets included: see
//! [`super::mcp_servers`]); no view of these settings ever carries them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use openrouter_tool_loop::{
    ApiKey, DEFAULT_CHAT_COMPLETIONS_URL, DEFAULT_MODEL, DataPolicy, OpenRouterConfig,
    OpenRouterError, ProviderProfile, base_url_of, chat_completions_url, codes,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kit::error::StudioError;
use crate::kit::provider_codes::provider_failure;

/// The code of settings (or MCP servers) that could not be written to `settings.json` (`500`;
/// nothing changed).
pub const STUDIO_SETTINGS_NOT_SAVED: &str = "STUDIO_SETTINGS_NOT_SAVED";

/// Longest accepted model id or endpoint, in characters.
pub const MAX_SETTING_CHARS: usize = 512;
/// Longest accepted API key, in characters.
pub const MAX_API_KEY_CHARS: usize = 512;

/// `settings.json` as written on disk.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettingsFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider: Option<String>,
    model: Option<String>,
    endpoint: Option<String>,
    data_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_key: Option<String>,
    /// The mounted MCP servers, by name, as `McpServersConfig::to_json` writes them (env and
    /// header values included): only this file holds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mcp_servers: Option<Value>,
}

/// The settings as the studio holds them: one value behind one lock.
#[derive(Clone, Default)]
struct Current {
    /// `None`: a file from before profiles (OpenRouter), written back without a provider.
    provider: Option<ProviderProfile>,
    model: Option<String>,
    endpoint: Option<String>,
    data_policy: Option<DataPolicy>,
    api_key: Option<String>,
    /// Whether the key is written to the file.
    key_saved: bool,
    mcp_servers: Option<Value>,
}

impl Current {
    /// The settings of `file`, dropping (with a warning) an endpoint or provider that breaks
    /// today's rules.
    fn from_file(file: SettingsFile) -> Self {
        let endpoint = file
            .endpoint
            .filter(|endpoint| match check_endpoint(endpoint) {
                Ok(_) => true,
                Err(reason) => {
                    tracing::warn!(%reason, "ignoring the stored endpoint");
                    false
                }
            });
        let provider = file.provider.as_deref().and_then(|id| {
            let profile = ProviderProfile::parse(id);
            if profile.is_none() {
                tracing::warn!("ignoring an unknown stored provider");
            }
            profile
        });
        Self {
            provider,
            model: file.model,
            endpoint,
            data_policy: file.data_policy.as_deref().and_then(DataPolicy::parse),
            key_saved: file.api_key.is_some(),
            api_key: file.api_key,
            mcp_servers: file.mcp_servers,
        }
    }

    /// What `settings.json` holds: the key only when it is saved.
    fn to_file(&self) -> SettingsFile {
        SettingsFile {
            provider: self.provider.map(|profile| profile.id().to_owned()),
            model: self.model.clone(),
            endpoint: self.endpoint.clone(),
            data_policy: self.data_policy.map(|policy| policy_id(policy).to_owned()),
            api_key: self.api_key.clone().filter(|_| self.key_saved),
            mcp_servers: self.mcp_servers.clone(),
        }
    }

    fn profile(&self) -> ProviderProfile {
        self.provider.unwrap_or_default()
    }

    /// The chat-completions URL: the stored one, else the profile's default.
    fn endpoint(&self) -> String {
        match (&self.endpoint, self.profile()) {
            (Some(endpoint), _) => endpoint.clone(),
            (None, ProviderProfile::OpenRouter) => DEFAULT_CHAT_COMPLETIONS_URL.to_owned(),
            (None, profile) => chat_completions_url(profile.default_base_url()),
        }
    }

    /// The model: the stored one, else OpenRouter's default (a local server has none).
    fn model(&self) -> String {
        match (&self.model, self.profile()) {
            (Some(model), _) => model.clone(),
            (None, ProviderProfile::OpenRouter) => DEFAULT_MODEL.to_owned(),
            (None, _) => String::new(),
        }
    }

    fn has_key(&self) -> bool {
        self.api_key.as_deref().is_some_and(|key| !key.is_empty())
    }

    fn needs_key(&self) -> bool {
        self.profile().needs_key(&self.endpoint())
    }

    /// Whether the provider agent can run: a model, and a key where the profile needs one.
    fn ready(&self) -> bool {
        !self.model().is_empty() && (self.has_key() || !self.needs_key())
    }

    fn view(&self) -> SettingsView {
        let endpoint = self.endpoint();
        let profile = self.profile();
        SettingsView {
            provider: profile.id(),
            provider_label: profile.label(),
            model: self.model(),
            base_url: base_url_of(&endpoint),
            endpoint,
            data_policy: policy_id(self.data_policy.unwrap_or_default()),
            has_api_key: self.has_key(),
            needs_key: self.needs_key(),
            ready: self.ready(),
            key_saved: self.key_saved,
            profiles: profiles(),
            key_dropped: None,
        }
    }
}

impl std::fmt::Debug for Current {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Current")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("endpoint", &self.endpoint)
            .field("data_policy", &self.data_policy)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("key_saved", &self.key_saved)
            .field(
                "mcp_servers",
                &self.mcp_servers.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// The id a data policy is written and shown as.
fn policy_id(policy: DataPolicy) -> &'static str {
    match policy {
        DataPolicy::Allow => "allow",
        DataPolicy::Deny => "deny",
        DataPolicy::Zdr => "zdr",
    }
}

/// What the page may see of the settings: never the key, only whether one is set, whether the
/// profile needs one, and whether the provider agent can run (`ready`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// The profile id (`openrouter`, `openai`, `llamacpp`, `ollama`).
    pub provider: &'static str,
    /// The profile's name for people.
    pub provider_label: &'static str,
    /// The model id (empty when none is chosen).
    pub model: String,
    /// The chat-completions endpoint.
    pub endpoint: String,
    /// The endpoint's OpenAI-compatible base URL.
    pub base_url: String,
    /// `allow`, `deny` or `zdr`.
    pub data_policy: &'static str,
    /// Whether a key is set (from the dialog or the environment).
    pub has_api_key: bool,
    /// Whether the profile needs a key at this endpoint.
    pub needs_key: bool,
    /// Whether the provider agent can run.
    pub ready: bool,
    /// Whether the key is saved in the data directory.
    pub key_saved: bool,
    /// The profiles a picker offers.
    pub profiles: Vec<ProfileView>,
    /// After a change: whether the key was dropped because the endpoint moved to another origin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_dropped: Option<bool>,
}

/// A provider profile as the settings dialog's picker offers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileView {
    /// The profile id.
    pub id: &'static str,
    /// The profile's name for people.
    pub label: &'static str,
    /// Its default base URL.
    pub base_url: &'static str,
    /// Whether it needs a key at its default base URL.
    pub needs_key: bool,
}

/// Why a settings change was not applied; the settings stay as they were.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A value breaks the rules (length, provider, endpoint, data policy).
    #[error("{0}")]
    Invalid(String),
    /// `settings.json` could not be written.
    #[error("Settings could not be saved: {0}; nothing changed.")]
    NotSaved(std::io::Error),
}

/// `400 STUDIO_INVALID_SETTINGS` or `500 STUDIO_SETTINGS_NOT_SAVED`.
impl From<SettingsError> for StudioError {
    fn from(error: SettingsError) -> Self {
        match error {
            SettingsError::Invalid(message) => {
                StudioError::bad_request("STUDIO_INVALID_SETTINGS", message)
            }
            SettingsError::NotSaved(_) => {
                StudioError::internal(STUDIO_SETTINGS_NOT_SAVED, error.to_string())
            }
        }
    }
}

/// A settings change from the dialog; absent fields stay as they are.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsUpdate {
    /// Provider profile id: `openrouter`, `openai`, `llamacpp` or `ollama`. Changing it without
    /// an endpoint or base URL moves to the profile's default base URL and forgets the model.
    pub provider: Option<String>,
    /// Model id (`vendor/model`, `qwen3:8b`, ...).
    pub model: Option<String>,
    /// Base URL of the provider's OpenAI-compatible API (`…/v1`); sets the endpoint to
    /// `{baseUrl}/chat/completions`.
    pub base_url: Option<String>,
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

/// The studio's provider settings.
#[derive(Debug, Clone)]
pub struct Settings {
    current: Arc<RwLock<Current>>,
    /// One change (and write of the file) at a time, so the file always holds the newest
    /// settings and a failed write leaves them as they were.
    writing: Arc<Mutex<()>>,
    file: PathBuf,
}

impl Settings {
    /// Loads `settings.json` from `data_dir` (if any), then the `OPENROUTER_*` environment.
    pub fn load(data_dir: &Path) -> Self {
        let file = data_dir.join("settings.json");
        let stored: SettingsFile = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let mut current = Current::from_file(stored);
        if let Ok(key) = std::env::var(openrouter_tool_loop::API_KEY_ENV)
            && !key.trim().is_empty()
        {
            current.api_key = Some(key.trim().to_owned());
        }
        Self {
            current: Arc::new(RwLock::new(current)),
            writing: Arc::default(),
            file,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Current> {
        self.current
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The provider profile in use.
    pub(crate) fn profile(&self) -> ProviderProfile {
        self.read().profile()
    }

    /// What the page may see ([`SettingsView`]).
    pub fn public_view(&self) -> SettingsView {
        self.read().view()
    }

    /// Applies a change, persisting the non-secret settings (and the key when asked to).
    /// Moving the endpoint to another origin drops the key unless the change supplies it again,
    /// so a key is never sent to a host it was not given for (`keyDropped` in the view). A
    /// change that is invalid or cannot be written changes nothing.
    pub fn update(&self, update: SettingsUpdate) -> Result<SettingsView, SettingsError> {
        validate(&update).map_err(SettingsError::Invalid)?;
        self.change(|current| {
            let save_key_request = update.save_key;
            let clear_key = update.clear_key;
            let key_dropped = apply(current, update);
            current.key_saved =
                save_key_request.unwrap_or(current.key_saved) && !clear_key && !key_dropped;
            let mut view = current.view();
            view.key_dropped = Some(key_dropped);
            view
        })
        .map_err(SettingsError::NotSaved)
    }

    /// Runs `edit` on a copy of the settings, writes the copy to the file and only then makes
    /// it the settings: a failed write changes nothing.
    fn change<T>(&self, edit: impl FnOnce(&mut Current) -> T) -> std::io::Result<T> {
        let _writing = self
            .writing
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let mut next = self.read().clone();
        let answer = edit(&mut next);
        self.write_file(&next)?;
        *self
            .current
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = next;
        Ok(answer)
    }

    /// The settings file (`settings.json` in the data directory).
    pub fn file_path(&self) -> &Path {
        &self.file
    }

    /// The saved MCP servers (the `mcpServers` map, secrets included), if any.
    pub fn mcp_servers(&self) -> Option<Value> {
        self.read().mcp_servers.clone()
    }

    /// Replaces the saved MCP servers with `servers` (the `mcpServers` map; `None` removes
    /// them) and writes the file. When the file cannot be written the settings stay as they
    /// were and the error says why.
    pub fn save_mcp_servers(&self, servers: Option<Value>) -> std::io::Result<()> {
        self.change(|current| current.mcp_servers = servers)
    }

    fn write_file(&self, current: &Current) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(&current.to_file()).map_err(std::io::Error::other)?;
        if let Some(dir) = self.file.parent() {
            crate::kit::private_files::create_private_dir(dir)?;
        }
        crate::kit::private_files::write_private(&self.file, &bytes)
    }

    /// The client configuration of the agent, or `None` until it can run (a key where the
    /// profile needs one, and a model).
    pub fn client_config(&self) -> Option<OpenRouterConfig> {
        let current = self.read();
        current.ready().then(|| config_of(&current))
    }

    /// The configuration the model catalog is read with: the saved settings, or those settings
    /// with an unsaved `draft` from the dialog applied (the "Test connection" button), under the
    /// same validation and key rules as saving. Nothing is saved. A key is needed only where
    /// the profile needs one; a model is not.
    pub fn catalog_config(
        &self,
        draft: Option<SettingsUpdate>,
    ) -> Result<OpenRouterConfig, StudioError> {
        let mut current = self.read().clone();
        let refused = |profile: ProviderProfile, message: String| {
            let error = OpenRouterError::new(codes::OPENROUTER_CONFIGURATION_ERROR, message);
            provider_failure(&error, profile)
        };
        if let Some(draft) = draft {
            let asked = draft.provider.as_deref().and_then(ProviderProfile::parse);
            validate(&draft)
                .map_err(|message| refused(asked.unwrap_or(current.profile()), message))?;
            apply(&mut current, draft);
        }
        if !current.has_key() && current.needs_key() {
            let message = format!(
                "{} needs an API key: enter one to test the connection.",
                current.profile().label()
            );
            return Err(refused(current.profile(), message));
        }
        Ok(config_of(&current))
    }
}

/// The profiles a picker offers, with their default base URL and key rule.
fn profiles() -> Vec<ProfileView> {
    ProviderProfile::ALL
        .iter()
        .map(|profile| {
            let base = profile.default_base_url();
            ProfileView {
                id: profile.id(),
                label: profile.label(),
                base_url: base,
                needs_key: profile.needs_key(&chat_completions_url(base)),
            }
        })
        .collect()
}

/// Applies a validated change to `stored`; returns whether the key was dropped because the
/// endpoint moved to another origin without the change supplying a key again.
fn apply(stored: &mut Current, update: SettingsUpdate) -> bool {
    let before = stored.endpoint();
    if let Some(provider) = update.provider.as_deref().and_then(ProviderProfile::parse)
        && provider != stored.profile()
    {
        stored.provider = Some(provider);
        // A model id and an endpoint of one provider mean nothing to another.
        stored.model = None;
        stored.endpoint = None;
    }
    if let Some(model) = update.model {
        stored.model = Some(model.trim().to_owned()).filter(|m| !m.is_empty());
    }
    let endpoint = match (update.base_url, update.endpoint) {
        (Some(base), _) if !base.trim().is_empty() => Some(Some(chat_completions_url(&base))),
        (_, Some(endpoint)) => Some(Some(endpoint.trim().to_owned()).filter(|e| !e.is_empty())),
        (Some(_), None) => Some(None),
        (None, None) => None,
    };
    if let Some(endpoint) = endpoint {
        stored.endpoint = endpoint;
    }
    let moved = origin_of(&before) != origin_of(&stored.endpoint());
    let key_dropped = moved && update.api_key.is_none() && stored.api_key.take().is_some();
    if let Some(policy) = update.data_policy {
        stored.data_policy = DataPolicy::parse(&policy);
    }
    if update.clear_key {
        stored.api_key = None;
    }
    if let Some(key) = update.api_key {
        stored.api_key = Some(key.trim().to_owned()).filter(|k| !k.is_empty());
    }
    key_dropped
}

/// The client configuration of `stored` (key, model and endpoints as they are).
fn config_of(stored: &Current) -> OpenRouterConfig {
    let endpoint = stored.endpoint();
    let key = ApiKey::new(stored.api_key.clone().unwrap_or_default());
    let mut config = OpenRouterConfig::new(key)
        .with_provider(stored.profile())
        .with_attribution("http://127.0.0.1", "Live Code Studio")
        .with_model(stored.model())
        .with_endpoint(endpoint.clone())
        .with_models_endpoint(models_endpoint_of(&endpoint));
    if let Some(policy) = stored.data_policy {
        config = config.with_data_policy(policy);
    }
    config
}

fn validate(update: &SettingsUpdate) -> Result<(), String> {
    let too_long = |value: &Option<String>, max: usize| {
        value.as_ref().is_some_and(|v| v.chars().count() > max)
    };
    if too_long(&update.model, MAX_SETTING_CHARS)
        || too_long(&update.endpoint, MAX_SETTING_CHARS)
        || too_long(&update.base_url, MAX_SETTING_CHARS)
        || too_long(&update.api_key, MAX_API_KEY_CHARS)
    {
        return Err("Settings values must be at most 512 characters.".into());
    }
    if let Some(provider) = &update.provider
        && ProviderProfile::parse(provider).is_none()
    {
        return Err("provider must be openrouter, openai, llamacpp or ollama.".into());
    }
    for url in [&update.endpoint, &update.base_url].into_iter().flatten() {
        if !url.trim().is_empty() {
            check_endpoint(url.trim())?;
        }
    }
    if let Some(policy) = &update.data_policy
        && DataPolicy::parse(policy).is_none()
    {
        return Err("dataPolicy must be allow, deny or zdr.".into());
    }
    Ok(())
}

/// The crate's endpoint rule ([`openrouter_tool_loop::check_endpoint`]: `https://`, or
/// `http://` to a loopback host, never with userinfo), as the settings dialog's message.
pub fn check_endpoint(raw: &str) -> Result<reqwest::Url, String> {
    openrouter_tool_loop::check_endpoint(raw).map_err(|error| error.message)
}

/// Scheme, host and port of an endpoint.
fn origin_of(endpoint: &str) -> String {
    reqwest::Url::parse(endpoint)
        .map(|url| url.origin().ascii_serialization())
        .unwrap_or_else(|_| endpoint.to_owned())
}

/// The model catalog beside a chat-completions endpoint: `…/chat/completions` → `…/models`,
/// otherwise `models` under the endpoint's path.
fn models_endpoint_of(endpoint: &str) -> String {
    openrouter_tool_loop::models_url(&base_url_of(endpoint))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The change's view as the page receives it.
    fn update(settings: &Settings, change: SettingsUpdate) -> Result<Value, SettingsError> {
        settings
            .update(change)
            .map(|view| serde_json::to_value(view).unwrap())
    }

    fn view_of(settings: &Settings) -> Value {
        serde_json::to_value(settings.public_view()).unwrap()
    }

    #[test]
    fn the_key_never_appears_in_views_or_unsaved_files() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        let view = update(
            &settings,
            SettingsUpdate {
                api_key: Some("sk-test-not-real".into()),
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            },
        )
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
    fn mcp_servers_are_kept_beside_the_provider_settings_and_shown_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        let servers = json!({"docs": {"command": "x", "env": {"TOKEN": "sk-mcp-not-real"}}});
        settings.save_mcp_servers(Some(servers.clone())).unwrap();
        update(
            &settings,
            SettingsUpdate {
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        let reloaded = Settings::load(dir.path());
        assert_eq!(reloaded.mcp_servers(), Some(servers.clone()));
        assert_eq!(view_of(&reloaded)["model"], "openai/gpt-4o-mini");
        assert!(!view_of(&reloaded).to_string().contains("sk-mcp"));
        assert!(!format!("{reloaded:?}").contains("sk-mcp"));
        // A write that fails leaves the settings as they were.
        std::fs::remove_file(dir.path().join("settings.json")).unwrap();
        std::fs::create_dir_all(dir.path().join("settings.json").join("x")).unwrap();
        assert!(reloaded.save_mcp_servers(None).is_err());
        assert_eq!(reloaded.mcp_servers(), Some(servers));
    }

    #[test]
    fn a_saved_key_survives_a_restart_and_can_be_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        update(
            &settings,
            SettingsUpdate {
                api_key: Some("sk-saved".into()),
                save_key: Some(true),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        let reloaded = Settings::load(dir.path());
        assert_eq!(view_of(&reloaded)["keySaved"], true);
        update(
            &reloaded,
            SettingsUpdate {
                clear_key: true,
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        assert!(reloaded.client_config().is_none() || std::env::var("OPENROUTER_API_KEY").is_ok());
        assert!(
            !std::fs::read_to_string(dir.path().join("settings.json"))
                .unwrap()
                .contains("sk-saved")
        );
    }

    fn endpoint(settings: &Settings, endpoint: &str) -> Result<Value, SettingsError> {
        update(
            settings,
            SettingsUpdate {
                endpoint: Some(endpoint.into()),
                ..SettingsUpdate::default()
            },
        )
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
            view_of(&settings)["endpoint"],
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
        update(
            &settings,
            SettingsUpdate {
                api_key: Some("sk-test-not-real".into()),
                ..SettingsUpdate::default()
            },
        )
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
        let view = update(
            &settings,
            SettingsUpdate {
                endpoint: Some("http://127.0.0.1:9/v1/chat/completions".into()),
                api_key: Some("sk-test-again".into()),
                ..SettingsUpdate::default()
            },
        )
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
            view_of(&settings)["endpoint"],
            openrouter_tool_loop::DEFAULT_CHAT_COMPLETIONS_URL
        );
    }

    #[test]
    fn a_change_without_save_key_keeps_a_saved_key_saved() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        update(
            &settings,
            SettingsUpdate {
                api_key: Some("sk-saved-not-real".into()),
                save_key: Some(true),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        let view = update(
            &settings,
            SettingsUpdate {
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        assert_eq!(view["keySaved"], true);
        let file = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
        assert!(file.contains("sk-saved-not-real"), "still saved");
        assert!(file.contains("gpt-4o-mini"), "the other change applied");
        let view = update(
            &settings,
            SettingsUpdate {
                save_key: Some(false),
                ..SettingsUpdate::default()
            },
        )
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
            update(
                &settings,
                SettingsUpdate {
                    endpoint: Some("ftp://x".into()),
                    ..SettingsUpdate::default()
                }
            )
            .is_err()
        );
        assert!(
            update(
                &settings,
                SettingsUpdate {
                    data_policy: Some("maybe".into()),
                    ..SettingsUpdate::default()
                }
            )
            .is_err()
        );
        assert!(
            update(
                &settings,
                SettingsUpdate {
                    model: Some("m".repeat(513)),
                    ..SettingsUpdate::default()
                }
            )
            .is_err()
        );
        assert_eq!(view_of(&settings)["dataPolicy"], "allow");
    }

    #[test]
    fn a_settings_file_from_before_profiles_keeps_its_key_and_endpoint() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"model": "openai/gpt-4o", "endpoint": "https://openrouter.ai/api/v1/chat/completions", "dataPolicy": "deny", "apiKey": "sk-or-legacy-not-real"}"#,
        )
        .unwrap();
        let settings = Settings::load(dir.path());
        let view = view_of(&settings);
        assert_eq!(
            (
                &view["provider"],
                &view["baseUrl"],
                &view["keySaved"],
                &view["ready"]
            ),
            (
                &json!("openrouter"),
                &json!("https://openrouter.ai/api/v1"),
                &json!(true),
                &json!(true)
            )
        );
        let config = settings.client_config().unwrap();
        assert_eq!(config.provider, ProviderProfile::OpenRouter);
        assert_eq!(config.endpoint, DEFAULT_CHAT_COMPLETIONS_URL);
        assert_eq!(
            config.models_endpoint,
            "https://openrouter.ai/api/v1/models"
        );
        assert_eq!(config.data_policy, DataPolicy::Deny);
        // Saving an unrelated change keeps the old file's key saved and writes no provider.
        update(
            &settings,
            SettingsUpdate {
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        let file = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
        assert!(file.contains("sk-or-legacy-not-real"));
        assert!(!file.contains("provider"), "{file}");
    }

    #[test]
    fn switching_to_a_local_profile_needs_no_key_and_forgets_the_other_providers_model() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        update(
            &settings,
            SettingsUpdate {
                api_key: Some("sk-or-not-real".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        let view = update(
            &settings,
            SettingsUpdate {
                provider: Some("ollama".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        assert_eq!(view["baseUrl"], "http://127.0.0.1:11434/v1");
        assert_eq!(
            view["model"], "",
            "openai/gpt-4o-mini means nothing to Ollama"
        );
        assert_eq!(
            view["keyDropped"], true,
            "the key stays with OpenRouter's host"
        );
        assert_eq!(
            (&view["needsKey"], &view["ready"]),
            (&json!(false), &json!(false))
        );
        let view = update(
            &settings,
            SettingsUpdate {
                model: Some("qwen3:8b".into()),
                base_url: Some("http://127.0.0.1:11500/v1/".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        assert_eq!(view["ready"], true);
        let config = settings.client_config().unwrap();
        assert_eq!(
            (
                config.provider,
                config.endpoint.as_str(),
                config.models_endpoint.as_str()
            ),
            (
                ProviderProfile::Ollama,
                "http://127.0.0.1:11500/v1/chat/completions",
                "http://127.0.0.1:11500/v1/models"
            )
        );
        assert!(config.api_key.is_empty() || std::env::var("OPENROUTER_API_KEY").is_ok());
        let reloaded = Settings::load(dir.path());
        assert_eq!(view_of(&reloaded)["provider"], "ollama");
        assert_eq!(view_of(&reloaded)["model"], "qwen3:8b");
        assert!(
            update(
                &settings,
                SettingsUpdate {
                    provider: Some("anthropic".into()),
                    ..SettingsUpdate::default()
                }
            )
            .is_err()
        );
        assert!(
            update(
                &settings,
                SettingsUpdate {
                    base_url: Some("http://192.168.1.5:11434/v1".into()),
                    ..SettingsUpdate::default()
                }
            )
            .is_err(),
            "plain http off loopback is refused, by the crate's rule"
        );
    }

    #[test]
    fn a_draft_is_tested_under_the_saving_rules_without_being_saved() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        update(
            &settings,
            SettingsUpdate {
                api_key: Some("sk-or-not-real".into()),
                ..SettingsUpdate::default()
            },
        )
        .unwrap();
        let draft = |provider: &str, base: &str| SettingsUpdate {
            provider: Some(provider.into()),
            base_url: Some(base.into()),
            ..SettingsUpdate::default()
        };
        let config = settings
            .catalog_config(Some(draft("llamacpp", "http://127.0.0.1:8080/v1")))
            .unwrap();
        assert_eq!(config.models_endpoint, "http://127.0.0.1:8080/v1/models");
        assert!(
            config.api_key.is_empty(),
            "the OpenRouter key does not follow the draft"
        );
        // Refused under the provider kind asked for (issue 55, E12).
        let refused = settings
            .catalog_config(Some(draft("openai", "https://api.example/v1")))
            .unwrap_err();
        let error = refused.error();
        assert_eq!(error.code, "OPENAI_COMPATIBLE_CONFIGURATION_ERROR");
        assert_eq!(
            error.message,
            "OpenAI-compatible needs an API key: enter one to test the connection."
        );
        let refused = settings
            .catalog_config(Some(draft("openai", "http://10.0.0.1/v1")))
            .unwrap_err();
        assert_eq!(
            refused.error().code,
            "OPENAI_COMPATIBLE_CONFIGURATION_ERROR"
        );
        assert_eq!(
            view_of(&settings)["provider"],
            "openrouter",
            "nothing saved"
        );
        assert_eq!(view_of(&settings)["hasApiKey"], true);
    }

    #[test]
    fn a_change_that_cannot_be_written_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(dir.path());
        std::fs::create_dir_all(dir.path().join("settings.json").join("x")).unwrap();
        let error = settings
            .update(SettingsUpdate {
                model: Some("openai/gpt-4o-mini".into()),
                ..SettingsUpdate::default()
            })
            .unwrap_err();
        assert!(matches!(error, SettingsError::NotSaved(_)), "{error}");
        assert_eq!(
            settings.public_view().model,
            DEFAULT_MODEL,
            "nothing changed"
        );
        let answer = StudioError::from(error);
        assert_eq!(
            (answer.status().as_u16(), answer.error().code.as_str()),
            (500, "STUDIO_SETTINGS_NOT_SAVED")
        );
        let refused = settings
            .update(SettingsUpdate {
                data_policy: Some("maybe".into()),
                ..SettingsUpdate::default()
            })
            .unwrap_err();
        assert_eq!(
            StudioError::from(refused).error().code,
            "STUDIO_INVALID_SETTINGS"
        );
    }
}
