//! Unsaved `/web` editor drafts, kept by the host so a reload or a closed tab loses no typing.
//! One draft per workspace file, with the revision it was started from (Save still sends that
//! revision as `expectedRevision`, so a draft of an older revision is refused, never written
//! over newer work). The page stores a draft while the person types, removes it on Save or
//! Discard, and reads them back when it loads. Drafts live in host memory: a restart ends them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use live_code_editor::workspace::error::WorkspaceError;
use live_code_editor::workspace::model::MAX_TEXT_SOURCE_CHARS;
use serde::{Deserialize, Serialize};

/// One unsaved draft of a web workspace file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebDraft {
    /// The workspace file it edits.
    pub path: String,
    /// The typed text (at most [`MAX_TEXT_SOURCE_CHARS`] characters, the files' own bound).
    pub source: String,
    /// The workspace revision the draft was started from.
    pub base: u64,
}

/// The drafts of the `/web` page, at most one per workspace file.
#[derive(Debug, Default)]
pub struct WebDrafts {
    drafts: Mutex<BTreeMap<String, WebDraft>>,
}

impl WebDrafts {
    /// Every draft, by path.
    pub fn list(&self) -> Vec<WebDraft> {
        self.drafts
            .lock()
            .expect("web drafts lock")
            .values()
            .cloned()
            .collect()
    }

    /// Stores `draft`, replacing the file's earlier one. `files` are the workspace's paths: a
    /// draft of any other path is refused (`WORKSPACE_FILE_NOT_FOUND`), as is one longer than a
    /// file may be (`WORKSPACE_SOURCE_LIMIT`).
    pub fn put(&self, draft: WebDraft, files: &[String]) -> Result<(), WorkspaceError> {
        if !files.contains(&draft.path) {
            return Err(WorkspaceError::file_not_found(&draft.path, "draft"));
        }
        if draft.source.chars().count() > MAX_TEXT_SOURCE_CHARS {
            return Err(WorkspaceError::source_limit(
                &format!("The draft of {}", draft.path),
                MAX_TEXT_SOURCE_CHARS,
            ));
        }
        self.drafts
            .lock()
            .expect("web drafts lock")
            .insert(draft.path.clone(), draft);
        Ok(())
    }

    /// Removes the draft of `path`; whether there was one.
    pub fn remove(&self, path: &str) -> bool {
        self.drafts
            .lock()
            .expect("web drafts lock")
            .remove(path)
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(path: &str, source: String) -> WebDraft {
        WebDraft {
            path: path.into(),
            source,
            base: 3,
        }
    }

    #[test]
    fn drafts_are_bounded_to_the_workspace_files_and_the_source_limit() {
        let drafts = WebDrafts::default();
        let files = vec!["index.html".to_owned(), "app.js".to_owned()];
        let at_limit = "a".repeat(MAX_TEXT_SOURCE_CHARS);
        assert!(drafts.put(draft("app.js", at_limit), &files).is_ok());
        let over = drafts
            .put(
                draft("index.html", "é".repeat(MAX_TEXT_SOURCE_CHARS + 1)),
                &files,
            )
            .unwrap_err();
        assert_eq!(over.code.as_str(), "WORKSPACE_SOURCE_LIMIT");
        let unknown = drafts
            .put(draft("other.css", "x".into()), &files)
            .unwrap_err();
        assert_eq!(unknown.code.as_str(), "WORKSPACE_FILE_NOT_FOUND");
        assert_eq!(drafts.list().len(), 1, "only the accepted draft is kept");
        assert!(drafts.put(draft("app.js", "newer".into()), &files).is_ok());
        assert_eq!(drafts.list()[0].source, "newer", "one draft per file");
        assert!(drafts.remove("app.js"));
        assert!(!drafts.remove("app.js"));
        assert!(drafts.list().is_empty());
    }
}
