//! What a prompt says: its words, quoted strings and the first file path it names (shared by
//! the surfaces' planners).

use serde_json::{Map, Value, json};

use crate::preview_edits::Theme;

/// Words, quoted strings and the first file path of a prompt (shared by the surfaces' planners).
pub(crate) struct PromptFacts {
    prompt: String,
    lower: String,
    /// The quoted strings, in order.
    pub(crate) quotes: Vec<String>,
    /// The file path the prompt names, if any.
    pub(crate) path: Option<String>,
}

impl PromptFacts {
    pub(crate) fn read(prompt: &str) -> Self {
        Self::read_with(prompt, first_path)
    }

    /// Reads `prompt`, finding its path in the unquoted text with `find_path`.
    pub(crate) fn read_with(prompt: &str, find_path: impl FnOnce(&str) -> Option<String>) -> Self {
        let (quotes, unquoted) = split_quotes(prompt);
        Self {
            prompt: prompt.to_owned(),
            lower: unquoted.to_lowercase(),
            quotes,
            path: find_path(&unquoted),
        }
    }

    /// The prompt as written.
    pub(crate) fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Whether the unquoted prompt has `word` (lowercase) as a whole word.
    pub(crate) fn has_word(&self, word: &str) -> bool {
        self.lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|token| token == word)
    }

    /// Whether it has any of `words`.
    pub(crate) fn has_any(&self, words: &[&str]) -> bool {
        words.iter().any(|word| self.has_word(word))
    }

    pub(crate) fn words(&self) -> Vec<&str> {
        self.lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|token| !token.is_empty())
            .collect()
    }

    pub(crate) fn theme(&self) -> Option<Theme> {
        Theme::ALL
            .into_iter()
            .find(|theme| self.has_word(theme.name()))
    }
}

/// Splits `"quoted"` (straight or curly double quotes) strings from the rest of the prompt.
pub(crate) fn split_quotes(prompt: &str) -> (Vec<String>, String) {
    let mut quotes = Vec::new();
    let mut unquoted = String::with_capacity(prompt.len());
    let mut current: Option<String> = None;
    for ch in prompt.chars() {
        match (&mut current, ch) {
            (None, '"' | '“') => current = Some(String::new()),
            (Some(text), '"' | '”') => {
                quotes.push(std::mem::take(text));
                current = None;
                unquoted.push(' ');
            }
            (Some(text), other) => text.push(other),
            (None, other) => unquoted.push(other),
        }
    }
    if let Some(unclosed) = current {
        unquoted.push_str(&unclosed);
    }
    (
        quotes
            .into_iter()
            .filter(|quote| !quote.is_empty())
            .collect(),
        unquoted,
    )
}

/// The first token that looks like a workspace file path (`dir/name.ext` with a known text or
/// asset extension).
pub(crate) fn first_path(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
        .map(|token| token.trim_end_matches(['.', ':', '!', '?']))
        .find(|token| looks_like_path(token))
        .map(str::to_owned)
}

/// Whether `token` looks like a workspace file path: path characters only, and a known text or
/// asset extension.
pub(crate) fn looks_like_path(token: &str) -> bool {
    let valid_chars = token
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-'));
    valid_chars
        && (live_code_editor::file::is_text_path(token)
            || live_code_editor::file::is_asset_path(token))
}
/// Text used as a feature description when the prompt quotes only a title.
pub(crate) const DEFAULT_FEATURE_DESCRIPTION: &str = "Added by the local agent.";

/// `updateHero` arguments from the quotes: a title (and subtitle), or only a subtitle when the
/// prompt asks for one.
pub(crate) fn hero_arguments(facts: &PromptFacts) -> Value {
    let quotes = &facts.quotes;
    let subtitle_only = quotes.len() == 1
        && facts.has_any(&["subtitle", "tagline"])
        && !facts.has_any(&["title", "headline"]);
    let mut args = Map::new();
    if subtitle_only {
        args.insert("subtitle".into(), json!(quotes[0]));
    } else {
        args.insert("title".into(), json!(quotes[0]));
        if let Some(subtitle) = quotes.get(1) {
            args.insert("subtitle".into(), json!(subtitle));
        }
    }
    Value::Object(args)
}
