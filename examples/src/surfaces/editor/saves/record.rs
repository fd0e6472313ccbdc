//! Keys and stored payload of the editor's save records.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tool_durable_operations::OperationRecord;

use super::manifest::{Manifest, ManifestEntry};

pub use crate::kit::durable_folder::MAX_SAVE_GENERATIONS;

/// Prefix every editor save key starts with (`editor.saveFile:` or `editor.saveAll:`).
pub const EDITOR_SAVE_KEY_PREFIX: &str = "editor.save";
/// Most unknown records `GET /api/editor/saves` lists.
pub const MAX_LISTED_SAVES: usize = 50;
/// Longest session id kept in a record (longer ids are cut; the key uses their digest).
pub(crate) const MAX_RECORD_SESSION_CHARS: usize = 128;
/// Hex characters of the session and folder digests in a key.
const SHORT_DIGEST_CHARS: usize = 16;

/// The first 16 hex characters of the SHA-256 of `text`: a bounded, non-reversible label.
pub fn short_digest(text: &str) -> String {
    let mut hex = hex::encode(Sha256::digest(text.as_bytes()));
    hex.truncate(SHORT_DIGEST_CHARS);
    hex
}

/// The key of one save: `<tool>:<session digest>:<folder digest>:<manifest digest>`, with
/// `#<n>` for generations after the first. A call without a session uses the empty session.
pub fn save_key(
    tool: &str,
    session: Option<&str>,
    scope: &str,
    manifest_digest: &str,
    generation: u32,
) -> String {
    let key = format!(
        "{tool}:{}:{}:{manifest_digest}",
        short_digest(session.unwrap_or_default()),
        short_digest(scope)
    );
    if generation == 0 {
        key
    } else {
        format!("{key}#{generation}")
    }
}

/// What a save record stores (its result when completed, its diagnostic when failed or
/// unknown): never file contents, only the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveRecord {
    /// `editor.saveFile` or `editor.saveAll`.
    pub tool: String,
    /// The calling session (bounded), when the call had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The folder's display name.
    pub folder: String,
    /// Short digest of the folder's canonical root (the key's folder part).
    pub scope: String,
    /// The workspace revision the save wrote.
    pub workspace_revision: u64,
    /// Every file the save writes, in order.
    pub manifest: Vec<ManifestEntry>,
    /// Files written and confirmed by the folder.
    pub completed_paths: Vec<String>,
    /// The file whose write failed or is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_path: Option<String>,
    /// The code of that failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl SaveRecord {
    /// The record of writing `manifest` with nothing completed yet.
    pub fn planned(
        tool: &str,
        session: Option<&str>,
        folder: &str,
        scope: &str,
        workspace_revision: u64,
        manifest: &Manifest,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            session: session.map(|id| id.chars().take(MAX_RECORD_SESSION_CHARS).collect()),
            folder: folder.to_owned(),
            scope: short_digest(scope),
            workspace_revision,
            manifest: manifest.entries().to_vec(),
            completed_paths: Vec::new(),
            failed_path: None,
            code: None,
        }
    }

    /// The payload stored in an operation record (its `diagnostic`, else its `result`).
    pub fn of_operation(operation: &OperationRecord) -> Option<Self> {
        let payload = operation.result.as_ref()?;
        ["diagnostic", "result"]
            .iter()
            .filter_map(|field| payload.get(field))
            .find_map(|value| serde_json::from_value(value.clone()).ok())
    }

    /// The manifest, checked against its bound.
    pub fn checked_manifest(&self) -> Result<Manifest, super::ManifestError> {
        Manifest::new(self.manifest.clone())
    }

    /// As JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_stable_per_session_folder_and_content() {
        let key = save_key("editor.saveAll", Some("run-1"), "/tmp/site", "sha256:ab", 0);
        assert_eq!(
            key,
            save_key("editor.saveAll", Some("run-1"), "/tmp/site", "sha256:ab", 0)
        );
        assert!(key.starts_with("editor.saveAll:"));
        assert!(key.ends_with(":sha256:ab"));
        assert!(!key.contains("run-1") && !key.contains("/tmp/site"));
        for other in [
            save_key("editor.saveAll", Some("run-2"), "/tmp/site", "sha256:ab", 0),
            save_key("editor.saveAll", None, "/tmp/site", "sha256:ab", 0),
            save_key(
                "editor.saveAll",
                Some("run-1"),
                "/tmp/other",
                "sha256:ab",
                0,
            ),
            save_key("editor.saveAll", Some("run-1"), "/tmp/site", "sha256:cd", 0),
            save_key(
                "editor.saveFile",
                Some("run-1"),
                "/tmp/site",
                "sha256:ab",
                0,
            ),
        ] {
            assert_ne!(key, other);
        }
        assert_eq!(
            save_key("editor.saveAll", Some("run-1"), "/tmp/site", "sha256:ab", 2),
            format!("{key}#2")
        );
    }

    #[test]
    fn records_read_back_from_either_payload_field_and_bound_the_session() {
        let manifest = Manifest::new(vec![ManifestEntry::of("a.js", b"1")]).unwrap();
        let long_session = "s".repeat(MAX_RECORD_SESSION_CHARS + 5);
        let record = SaveRecord::planned(
            "editor.saveFile",
            Some(&long_session),
            "site",
            "/tmp/site",
            4,
            &manifest,
        );
        assert_eq!(
            record.session.as_deref().map(str::len),
            Some(MAX_RECORD_SESSION_CHARS)
        );
        assert_eq!(record.scope, short_digest("/tmp/site"));
        let operation = |payload: Value| OperationRecord {
            key: "k".to_owned(),
            fingerprint: "f".to_owned(),
            owner_id: "o".to_owned(),
            incarnation: "i".to_owned(),
            revision: 1,
            state: tool_durable_operations::OperationState::Unknown,
            result: Some(payload),
            reason: None,
            created_at: 0,
            updated_at: 0,
            lease_expires_at: None,
            reconciled_by: None,
            reconciled_at: None,
        };
        let stored = record.to_value();
        assert_eq!(
            SaveRecord::of_operation(&operation(json!({"diagnostic": stored.clone()}))),
            Some(record.clone())
        );
        assert_eq!(
            SaveRecord::of_operation(&operation(json!({"result": stored}))),
            Some(record)
        );
        assert_eq!(
            SaveRecord::of_operation(&operation(json!({"diagnostic": {"x": 1}}))),
            None
        );
    }
}
