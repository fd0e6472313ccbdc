//! What a call would change, added to the confirmation an MCP client shows (the 2025-11-25
//! elicitation and the 2026-07-28 `input_required` form), so a person approving from a client
//! sees the change, not only the arguments.
//!
//! The host describes the change (the studio: `+N/−M` per file and the first changed lines of
//! its diff); this module bounds what it says to [`MAX_CHANGE_PREVIEW_LINES`] lines of at most
//! [`MAX_CHANGE_PREVIEW_LINE_CHARS`] characters and hides every line that names a secret (any
//! of the observability policy's redacted key fragments: `token`, `password`, `apiKey`, ...).

use async_trait::async_trait;
use serde_json::{Map, Value};
use tool_protocol::observability::REDACTED_KEY_FRAGMENTS;

/// Most lines of a change preview in a confirmation message.
pub const MAX_CHANGE_PREVIEW_LINES: usize = 16;
/// Most characters of one change preview line.
pub const MAX_CHANGE_PREVIEW_LINE_CHARS: usize = 160;
/// What stands for a line that names a secret.
pub const HIDDEN_LINE: &str = "(a line naming a secret is hidden)";

/// Describes what a pending call would change, for the person a client asks.
///
/// ```
/// use serde_json::{Map, Value};
/// use tool_context_mcp::ChangePreview;
///
/// struct Sizes;
/// #[async_trait::async_trait]
/// impl ChangePreview for Sizes {
///     async fn describe(&self, _tool: &str, arguments: &Map<String, Value>) -> Option<String> {
///         let source = arguments.get("source")?.as_str()?;
///         Some(format!("replaces the file with {} lines", source.lines().count()))
///     }
/// }
/// ```
#[async_trait]
pub trait ChangePreview: Send + Sync {
    /// A few lines saying what `tool` with `arguments` would change; `None` when it cannot be
    /// told (the message then lists the arguments only).
    async fn describe(&self, tool: &str, arguments: &Map<String, Value>) -> Option<String>;
}

/// `text` cut to the preview bounds, with secret-naming lines hidden.
pub fn bounded_preview(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(MAX_CHANGE_PREVIEW_LINES)
        .map(|line| shown_line(line))
        .collect();
    if lines.len() > MAX_CHANGE_PREVIEW_LINES {
        shown.push(format!(
            "… and {} more line(s)",
            lines.len() - MAX_CHANGE_PREVIEW_LINES
        ));
    }
    shown.join("\n")
}

fn shown_line(line: &str) -> String {
    let normalized: String = line
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if REDACTED_KEY_FRAGMENTS
        .iter()
        .any(|fragment| normalized.contains(fragment))
    {
        return HIDDEN_LINE.to_owned();
    }
    match line.char_indices().nth(MAX_CHANGE_PREVIEW_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// The confirmation `message` with the change appended (nothing when `change` is `None`).
pub(crate) fn with_change(message: String, change: Option<String>) -> String {
    match change {
        Some(change) if !change.trim().is_empty() => {
            format!("{message}\nProposed change:\n{}", bounded_preview(&change))
        }
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_bounded_at_their_edges_and_hide_secrets() {
        let exact: String = (0..MAX_CHANGE_PREVIEW_LINES)
            .map(|n| format!("line {n}\n"))
            .collect();
        assert_eq!(
            bounded_preview(&exact).lines().count(),
            MAX_CHANGE_PREVIEW_LINES
        );
        let over = format!("{exact}one more\n");
        let shown = bounded_preview(&over);
        assert!(shown.ends_with("… and 1 more line(s)"), "{shown}");
        let long = "x".repeat(MAX_CHANGE_PREVIEW_LINE_CHARS);
        assert_eq!(bounded_preview(&long), long);
        let longer = format!("{long}y");
        assert_eq!(bounded_preview(&longer), format!("{long}…"));
        let secret = "+ const API_KEY = \"sk-live\";\n+ let x = 1;";
        assert_eq!(
            bounded_preview(secret),
            format!("{HIDDEN_LINE}\n+ let x = 1;")
        );
        assert_eq!(with_change("m".into(), None), "m");
        assert_eq!(
            with_change("m".into(), Some("a".into())),
            "m\nProposed change:\na"
        );
    }
}
