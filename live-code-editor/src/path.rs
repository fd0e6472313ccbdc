//! The one workspace path normalizer, and decoding of URL-encoded local references.
//!
//! Every path that enters a workspace (tool arguments, folder import, preview references) goes
//! through [`normalize_workspace_path`], so no stored path can leave the workspace root.

use serde::Serialize;

/// Why a path was rejected. Serialized as the `reason` detail of `WORKSPACE_PATH_INVALID`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "kebab-case")]
pub enum PathError {
    /// The path contains a NUL character.
    #[error("workspace paths cannot contain NUL characters")]
    Nul,
    /// A `..` segment would leave the directory it names.
    #[error("workspace paths cannot contain '..' segments")]
    ParentTraversal,
    /// Nothing remains after dropping empty and `.` segments.
    #[error("workspace paths cannot be empty")]
    Empty,
    /// The path is absolute (leading slash, drive letter or UNC prefix).
    #[error("workspace paths must be relative to the workspace root")]
    Absolute,
    /// A control character (U+0001–U+001F, U+007F): invisible, and breaks logs and terminals.
    #[error("workspace paths cannot contain control characters")]
    ControlCharacter,
    /// A bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069), which can make a
    /// name display as another one (`evil\u{202E}sj.txt` reads as `eviltxt.js`).
    #[error("workspace paths cannot contain bidirectional control characters")]
    BidiControl,
}

impl PathError {
    /// The stable `reason` string used in error details.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Nul => "nul",
            Self::ParentTraversal => "parent-traversal",
            Self::Empty => "empty",
            Self::Absolute => "absolute",
            Self::ControlCharacter => "control-character",
            Self::BidiControl => "bidi-control",
        }
    }
}

/// Normalizes a workspace path: backslashes become slashes, empty and `.` segments are dropped.
/// NUL bytes, other control characters and bidirectional controls (anywhere, even where a
/// trim would remove them), `..` segments, absolute paths and paths that are empty after
/// normalization are rejected, so a normalized path can never leave the workspace root nor
/// look like another one.
///
/// ```
/// use live_code_editor::path::{normalize_workspace_path, PathError};
/// assert_eq!(normalize_workspace_path(r"src\./main.js").unwrap(), "src/main.js");
/// assert_eq!(normalize_workspace_path("a/../b"), Err(PathError::ParentTraversal));
/// assert_eq!(normalize_workspace_path("/etc/passwd"), Err(PathError::Absolute));
/// ```
pub fn normalize_workspace_path(raw: &str) -> Result<String, PathError> {
    check_characters(raw)?;
    let unified = raw.trim().replace('\\', "/");
    if is_absolute(&unified) {
        return Err(PathError::Absolute);
    }
    let mut segments = Vec::new();
    for segment in unified.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(PathError::ParentTraversal),
            other => segments.push(other),
        }
    }
    if segments.is_empty() {
        return Err(PathError::Empty);
    }
    let joined = segments.join("/");
    // A dropped `.` segment can expose a drive letter ("./c:/x"): check the result too.
    if is_absolute(&joined) {
        return Err(PathError::Absolute);
    }
    // Dropping a trailing or leading separator can expose whitespace the first trim could not
    // reach ("a\t/"); normalizing again keeps normalization idempotent (the input shrinks).
    if joined.trim() != joined {
        return normalize_workspace_path(&joined);
    }
    Ok(joined)
}

/// Refuses characters no file name needs and that can hide what a path is.
fn check_characters(raw: &str) -> Result<(), PathError> {
    for character in raw.chars() {
        match character {
            '\0' => return Err(PathError::Nul),
            '\u{1}'..='\u{1f}' | '\u{7f}' => return Err(PathError::ControlCharacter),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                return Err(PathError::BidiControl);
            }
            _ => {}
        }
    }
    Ok(())
}

fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive_letter = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    path.starts_with('/') || drive_letter
}

/// Decodes a URL-encoded local reference the way `decodeURIComponent` does: `None` when a `%`
/// escape is malformed or the decoded bytes are not UTF-8 (the reference is then unresolved).
pub fn decode_local_reference(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let valid = bytes
                .get(index + 1..index + 3)
                .is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit));
            if !valid {
                return None;
            }
            index += 3;
        } else {
            index += 1;
        }
    }
    percent_encoding::percent_decode_str(encoded)
        .decode_utf8()
        .ok()
        .map(|text| text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drive_letter_behind_a_dropped_segment_is_absolute() {
        // Found by the workspace_path fuzz target: "./c:/x" normalized to "c:/x", which is no
        // fixed point (normalizing it again refuses it) and names a drive on Windows.
        for raw in ["./c:/x", ".\\C:\\x", "//./d:", "./z:"] {
            assert_eq!(
                normalize_workspace_path(raw),
                Err(PathError::Absolute),
                "{raw:?}"
            );
        }
        assert_eq!(normalize_workspace_path("./c/x"), Ok("c/x".to_owned()));
        assert_eq!(normalize_workspace_path("x/c:/y"), Ok("x/c:/y".to_owned()));
    }

    #[test]
    fn whitespace_behind_a_dropped_separator_is_trimmed_too() {
        assert_eq!(normalize_workspace_path("x/ /"), Ok("x".to_owned()));
        assert_eq!(normalize_workspace_path("x\u{a0}/ /"), Ok("x".to_owned()));
    }

    #[test]
    fn control_and_bidi_characters_are_refused_anywhere() {
        for raw in [
            "a\nb.js",
            "a\tb.js",
            "\tindex.html",
            "index.html\n",
            "a\u{1}",
            "a\u{1f}",
            "a\u{7f}",
        ] {
            assert_eq!(
                normalize_workspace_path(raw),
                Err(PathError::ControlCharacter),
                "{raw:?}"
            );
        }
        for raw in [
            "evil\u{202e}sj.txt",
            "a\u{202a}",
            "a\u{2066}",
            "a\u{2069}.css",
        ] {
            assert_eq!(
                normalize_workspace_path(raw),
                Err(PathError::BidiControl),
                "{raw:?}"
            );
        }
        // The neighbours of each range stay valid.
        for raw in [
            "a\u{20}b.js",
            "a\u{80}b.js",
            "a\u{2029}b.js",
            "a\u{202f}b.js",
            "a\u{2065}",
            "a\u{206a}",
        ] {
            assert!(normalize_workspace_path(raw).is_ok(), "{raw:?}");
        }
        assert_eq!(PathError::BidiControl.reason(), "bidi-control");
    }

    #[test]
    fn normalizes_slashes_and_dot_segments() {
        assert_eq!(
            normalize_workspace_path(r"src\./main.js").unwrap(),
            "src/main.js"
        );
        assert_eq!(
            normalize_workspace_path("a//b/./c.css").unwrap(),
            "a/b/c.css"
        );
        assert_eq!(
            normalize_workspace_path(" index.html ").unwrap(),
            "index.html"
        );
    }

    #[test]
    fn rejects_escapes_and_empty_paths() {
        assert_eq!(normalize_workspace_path("a\0b"), Err(PathError::Nul));
        assert_eq!(
            normalize_workspace_path(r"a\..\b"),
            Err(PathError::ParentTraversal)
        );
        assert_eq!(normalize_workspace_path("./."), Err(PathError::Empty));
        assert_eq!(normalize_workspace_path(""), Err(PathError::Empty));
        assert_eq!(
            normalize_workspace_path(r"\\server\share"),
            Err(PathError::Absolute)
        );
        assert_eq!(normalize_workspace_path("C:/x"), Err(PathError::Absolute));
    }

    #[test]
    fn decodes_like_decode_uri_component() {
        assert_eq!(
            decode_local_reference("card%20file.js").as_deref(),
            Some("card file.js")
        );
        assert_eq!(
            decode_local_reference("caf%C3%A9.css").as_deref(),
            Some("café.css")
        );
        assert_eq!(decode_local_reference("bad%zz"), None);
        assert_eq!(decode_local_reference("trunc%2"), None);
        assert_eq!(decode_local_reference("%FF"), None);
    }
}
