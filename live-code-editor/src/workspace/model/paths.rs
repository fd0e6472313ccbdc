//! Workspace path rules: validation, the folder clash between two paths, canonical order.

use std::cmp::Ordering;

use super::MAX_PATH_CHARS;
use crate::path::normalize_workspace_path;
use crate::workspace::error::{WorkspaceError, WorkspaceResult};

/// Whether two distinct normalized paths cannot both be files: one would have to be a folder
/// holding the other (`sub` and `sub/a.js`).
pub(crate) fn folder_clash(a: &str, b: &str) -> bool {
    let inside = |inner: &str, outer: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    inside(a, b) || inside(b, a)
}

/// Validates a raw path's length bound and normalizes it.
pub fn validate_path(raw: &str) -> WorkspaceResult<String> {
    let length = raw.chars().count();
    if length > MAX_PATH_CHARS {
        return Err(WorkspaceError::path_invalid_reason(
            raw,
            "too-long",
            &format!("workspace paths are at most {MAX_PATH_CHARS} characters"),
        ));
    }
    normalize_workspace_path(raw).map_err(|reason| WorkspaceError::path_invalid(raw, reason))
}

/// Characters a file name cannot hold on common file systems (Windows refuses all of them) or
/// in a preview URL (`?` starts a query, `#` a fragment).
const RESERVED_CHARACTERS: &[char] = &['?', '#', ':', '*', '"', '<', '>', '|'];

/// Device names Windows reserves in any folder, with or without an extension (`con.txt`).
const RESERVED_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Refuses a name a person gives a new file (create, rename) that would not survive a save to a
/// folder on a common file system or a link in the preview: a trailing `/` (a folder, not a
/// file), a reserved character, a segment ending in a dot or space (Windows drops them), a
/// reserved device name. `raw` is the name as given, `path` its normalized form. Existing files
/// (imported from a folder that has them) are left alone: only new names are checked.
pub(crate) fn check_new_name(raw: &str, path: &str) -> WorkspaceResult<()> {
    let refuse = |reason: &str, explanation: String| {
        Err(WorkspaceError::path_invalid_reason(
            raw,
            reason,
            &explanation,
        ))
    };
    if raw.trim_end().ends_with(['/', '\\']) {
        return refuse(
            "folder-name",
            format!(
                "\"{}\" ends with a slash, so it names a folder; give the file's name after it (for example {}index.html)",
                raw.trim(),
                raw.trim()
            ),
        );
    }
    if let Some(character) = path.chars().find(|c| RESERVED_CHARACTERS.contains(c)) {
        return refuse(
            "reserved-character",
            format!(
                "file names cannot hold '{character}' (reserved on common file systems or in preview links)"
            ),
        );
    }
    for segment in path.split('/') {
        if segment.ends_with(['.', ' ']) {
            return refuse(
                "trailing-dot",
                format!(
                    "\"{segment}\" ends with a dot or a space, which Windows drops from file names"
                ),
            );
        }
        let stem = segment.split('.').next().unwrap_or(segment);
        if RESERVED_NAMES.contains(&stem.to_ascii_lowercase().as_str()) {
            return refuse(
                "reserved-name",
                format!("\"{segment}\" is a device name Windows reserves in every folder"),
            );
        }
    }
    Ok(())
}

/// Canonical order: `index.html`, `styles.css`, `app.js` first, then case-insensitive path,
/// then exact path (so distinct paths never compare equal). Allocation-free.
pub fn compare_order(a: &str, b: &str) -> Ordering {
    fn rank(path: &str) -> u8 {
        match path {
            "index.html" => 0,
            "styles.css" => 1,
            "app.js" => 2,
            _ => 3,
        }
    }
    rank(a)
        .cmp(&rank(b))
        .then_with(|| {
            a.chars()
                .flat_map(char::to_lowercase)
                .cmp(b.chars().flat_map(char::to_lowercase))
        })
        .then_with(|| a.cmp(b))
}
