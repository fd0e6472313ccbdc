//! Workspace files: text sources and binary preview assets, with language and MIME detection.

use serde::{Deserialize, Serialize};

/// Source language of a text file, derived from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum Language {
    /// `.html`, `.htm`
    Html,
    /// `.css`
    Css,
    /// `.js`, `.mjs`, `.jsx`
    Javascript,
    /// `.ts`, `.tsx`, `.mts`, `.cts`
    Typescript,
    /// `.json`
    Json,
    /// `.md`
    Markdown,
    /// `.txt` and any other text file
    Text,
}

impl Language {
    /// The language of a path by its extension (case-insensitive); unknown extensions are text.
    pub fn from_path(path: &str) -> Self {
        match extension(path).as_deref() {
            Some("html" | "htm") => Self::Html,
            Some("css") => Self::Css,
            Some("js" | "mjs" | "jsx") => Self::Javascript,
            Some("ts" | "tsx" | "mts" | "cts") => Self::Typescript,
            Some("json") => Self::Json,
            Some("md") => Self::Markdown,
            _ => Self::Text,
        }
    }

    /// The MIME type used when serving or exporting a file of this language.
    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Html => "text/html",
            Self::Css => "text/css",
            Self::Javascript => "text/javascript",
            Self::Json => "application/json",
            Self::Markdown => "text/markdown",
            Self::Typescript | Self::Text => "text/plain",
        }
    }
}

/// Extensions of text files a workspace accepts (the reference's, plus `.jsx`, which the
/// preview compiles and React projects are written in).
pub const TEXT_EXTENSIONS: &[&str] = &[
    "css", "htm", "html", "js", "json", "jsx", "md", "mjs", "ts", "tsx", "txt",
];

/// Extensions of binary preview assets (kept as bytes, never edited as text).
pub const ASSET_EXTENSIONS: &[&str] = &[
    "avif", "gif", "ico", "jpeg", "jpg", "otf", "png", "svg", "ttf", "wasm", "webp", "woff",
    "woff2",
];

/// The lowercase extension of the last path segment, if any.
pub fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Whether a path names a binary preview asset.
pub fn is_asset_path(path: &str) -> bool {
    extension(path).is_some_and(|ext| ASSET_EXTENSIONS.contains(&ext.as_str()))
}

/// Whether a path names a supported text file.
pub fn is_text_path(path: &str) -> bool {
    extension(path).is_some_and(|ext| TEXT_EXTENSIONS.contains(&ext.as_str()))
}

/// The MIME type of a binary asset by extension.
pub fn asset_mime_type(path: &str) -> &'static str {
    match extension(path).as_deref() {
        Some("avif") => "image/avif",
        Some("gif") => "image/gif",
        Some("ico") => "image/x-icon",
        Some("jpeg" | "jpg") => "image/jpeg",
        Some("otf") => "font/otf",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        Some("ttf") => "font/ttf",
        Some("wasm") => "application/wasm",
        Some("webp") => "image/webp",
        Some("woff") => "font/woff",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// What a workspace file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FileContent {
    /// Editable source text.
    Text {
        /// The source.
        source: String,
    },
    /// A binary preview asset (image, font, WASM), never edited as text.
    Asset {
        /// The raw bytes.
        #[serde(with = "base64_bytes")]
        bytes: Vec<u8>,
        /// MIME type used when serving or exporting the asset.
        mime_type: String,
    },
}

/// One file of a workspace, addressed by its normalized path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceFile {
    /// Normalized workspace path (see [`crate::path::normalize_workspace_path`]).
    pub path: String,
    /// Language derived from the path (assets report [`Language::Text`]).
    pub language: Language,
    /// The file's text or bytes.
    pub content: FileContent,
}

impl WorkspaceFile {
    /// A text file whose language follows its extension.
    pub fn text(path: impl Into<String>, source: impl Into<String>) -> Self {
        let path = path.into();
        Self {
            language: Language::from_path(&path),
            path,
            content: FileContent::Text {
                source: source.into(),
            },
        }
    }

    /// A binary asset whose MIME type follows its extension.
    pub fn asset(path: impl Into<String>, bytes: Vec<u8>) -> Self {
        let path = path.into();
        let mime_type = asset_mime_type(&path).to_owned();
        Self {
            language: Language::Text,
            path,
            content: FileContent::Asset { bytes, mime_type },
        }
    }

    /// The source text, or `None` for an asset.
    pub fn source(&self) -> Option<&str> {
        match &self.content {
            FileContent::Text { source } => Some(source),
            FileContent::Asset { .. } => None,
        }
    }

    /// Whether this file is a binary asset.
    pub fn is_asset(&self) -> bool {
        matches!(self.content, FileContent::Asset { .. })
    }
}

mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_follow_extensions_case_insensitively() {
        assert_eq!(Language::from_path("index.HTML"), Language::Html);
        assert_eq!(Language::from_path("a/b.htm"), Language::Html);
        assert_eq!(Language::from_path("src/app.mjs"), Language::Javascript);
        assert_eq!(Language::from_path("x.tsx"), Language::Typescript);
        assert_eq!(Language::from_path("App.JSX"), Language::Javascript);
        assert_eq!(Language::from_path("lib.mts"), Language::Typescript);
        assert_eq!(Language::from_path("lib.cts"), Language::Typescript);
        assert_eq!(Language::from_path("README"), Language::Text);
        assert_eq!(
            Language::from_path(".css"),
            Language::Text,
            "a dotfile has no extension"
        );
    }

    #[test]
    fn assets_and_text_are_disjoint() {
        for ext in ASSET_EXTENSIONS {
            assert!(!TEXT_EXTENSIONS.contains(ext));
        }
        assert!(is_asset_path("img/logo.PNG"));
        assert!(!is_asset_path("app.js"));
        assert!(is_text_path("notes.md"));
        assert_eq!(asset_mime_type("font.woff2"), "font/woff2");
    }

    #[test]
    fn asset_bytes_round_trip_through_json() {
        let file = WorkspaceFile::asset("a.png", vec![0, 159, 255]);
        let json = serde_json::to_value(&file).unwrap();
        assert_eq!(json["content"]["bytes"], "AJ//");
        assert_eq!(serde_json::from_value::<WorkspaceFile>(json).unwrap(), file);
    }
}
