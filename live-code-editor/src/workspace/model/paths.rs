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
