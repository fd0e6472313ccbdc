//! Workspace path normalisation: every path a tool, a folder import or a preview reference
//! names goes through `normalize_workspace_path` (and `validate_path`, which adds the length
//! bound). An accepted path must be a fixed point, must stay under the root however a
//! filesystem joins it, and must not contain what the normaliser promises to refuse.
#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;
use live_code_editor::normalize_workspace_path;
use live_code_editor::workspace::MAX_PATH_CHARS;
use live_code_editor::workspace::model::validate_path;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let normalized = normalize_workspace_path(raw);
    if let Ok(path) = &normalized {
        assert_is_contained(raw, path);
    }
    match validate_path(raw) {
        Ok(path) => {
            assert_eq!(
                Ok(&path),
                normalized.as_ref(),
                "validate_path disagrees for {raw:?}"
            );
            assert!(raw.chars().count() <= MAX_PATH_CHARS);
        }
        Err(_) => assert!(
            normalized.is_err() || raw.chars().count() > MAX_PATH_CHARS,
            "validate_path refused {raw:?} that normalizes and fits"
        ),
    }
});

fn assert_is_contained(raw: &str, path: &str) {
    assert_eq!(
        normalize_workspace_path(path).as_deref(),
        Ok(path),
        "{raw:?} normalized to {path:?}, which is not a fixed point"
    );
    assert!(!path.is_empty());
    assert!(!path.contains('\\'), "{path:?} keeps a backslash");
    assert_eq!(path.trim(), path, "{path:?} keeps outer whitespace");
    assert!(
        !path.chars().any(|c| ('\0'..='\u{1f}').contains(&c)
            || c == '\u{7f}'
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)),
        "{path:?} keeps a control character"
    );
    for segment in path.split('/') {
        assert!(
            !matches!(segment, "" | "." | ".."),
            "{path:?} keeps the segment {segment:?}"
        );
    }
    let bytes = path.as_bytes();
    assert!(
        !(bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'),
        "{path:?} names a drive"
    );
    // Joined under a root, the path only ever descends (no root, prefix or `..` component).
    let root = Path::new("/workspace-root");
    let joined = root.join(path);
    assert!(joined.starts_with(root), "{path:?} leaves the root");
    assert!(
        Path::new(path)
            .components()
            .all(|component| matches!(component, Component::Normal(_))),
        "{path:?} has a non-normal component"
    );
}
