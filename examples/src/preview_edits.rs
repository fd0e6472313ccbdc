//! Controlled visual edits behind `preview.setTheme`, `preview.addFeature` and
//! `preview.updateHero`. Each edit touches one documented target and reports
//! `PREVIEW_TARGET_NOT_FOUND` when the target is absent, instead of guessing a patch.

use live_code_editor::file::Language;
use live_code_editor::workspace::{Workspace, WorkspaceError, WorkspaceErrorCode};
use lol_html::html_content::ContentType;
use lol_html::{RewriteStrSettings, element, rewrite_str};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_protocol::ToolCallError;

/// Longest feature-card title, in characters.
pub const FEATURE_TITLE_MAX_CHARS: usize = 70;
/// Longest feature-card description, in characters.
pub const FEATURE_DESCRIPTION_MAX_CHARS: usize = 160;
/// Longest hero title, in characters.
pub const HERO_TITLE_MAX_CHARS: usize = 90;
/// Longest hero subtitle, in characters.
pub const HERO_SUBTITLE_MAX_CHARS: usize = 180;
/// The comment new feature cards are inserted before.
pub const FEATURE_SLOT_MARKER: &str = "<!-- feature-slot -->";

/// The four accent themes of the preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// Violet accent.
    Violet,
    /// Emerald accent.
    Emerald,
    /// Amber accent.
    Amber,
    /// Rose accent.
    Rose,
}

impl Theme {
    /// Every theme, in display order.
    pub const ALL: [Theme; 4] = [Theme::Violet, Theme::Emerald, Theme::Amber, Theme::Rose];

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Violet => "violet",
            Self::Emerald => "emerald",
            Self::Amber => "amber",
            Self::Rose => "rose",
        }
    }

    /// `(accent, accent-soft)` hex colours.
    pub fn colors(self) -> (&'static str, &'static str) {
        match self {
            Self::Violet => ("#8b5cf6", "#f0eaff"),
            Self::Emerald => ("#10b981", "#e7fbf3"),
            Self::Amber => ("#f59e0b", "#fff5dc"),
            Self::Rose => ("#f43f5e", "#ffedf0"),
        }
    }

    /// The theme with this wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|theme| theme.name() == name)
    }
}

/// Which controlled target an edit needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PreviewTarget {
    /// A stylesheet (`styles.css` or the first CSS file).
    #[error("stylesheet")]
    Stylesheet,
    /// An HTML entry (`index.html` or the first HTML file).
    #[error("html-entry")]
    HtmlEntry,
    /// `--accent:` / `--accent-soft:` hex custom properties.
    #[error("theme-tokens")]
    ThemeTokens,
    /// The `<!-- feature-slot -->` marker.
    #[error("feature-slot")]
    FeatureSlot,
    /// `<h1 id="hero-title">`.
    #[error("hero-title")]
    HeroTitle,
    /// `<p id="hero-subtitle">`.
    #[error("hero-subtitle")]
    HeroSubtitle,
}

/// Sets both accent tokens to the theme's colours. Both tokens must exist with hex values.
pub fn set_theme(css: &str, theme: Theme) -> Result<String, PreviewTarget> {
    let (accent, soft) = theme.colors();
    let with_accent =
        replace_hex_token(css, "--accent:", accent).ok_or(PreviewTarget::ThemeTokens)?;
    replace_hex_token(&with_accent, "--accent-soft:", soft).ok_or(PreviewTarget::ThemeTokens)
}

/// Replaces the hex value after every `token` (e.g. `--accent:`); `None` when no occurrence has
/// a hex value.
fn replace_hex_token(css: &str, token: &str, color: &str) -> Option<String> {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    let mut replaced = false;
    while let Some(index) = rest.find(token) {
        let (before, after_start) = rest.split_at(index + token.len());
        out.push_str(before);
        let trimmed = after_start.trim_start();
        out.push_str(&after_start[..after_start.len() - trimmed.len()]);
        let hex_len = hex_color_len(trimmed);
        if hex_len > 0 {
            out.push_str(color);
            replaced = true;
        }
        rest = &trimmed[hex_len..];
    }
    out.push_str(rest);
    replaced.then_some(out)
}

/// Length of a `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa` colour at the start of `text`, or 0.
fn hex_color_len(text: &str) -> usize {
    let Some(digits) = text.strip_prefix('#') else {
        return 0;
    };
    let count = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
    if matches!(count, 3 | 4 | 6 | 8) {
        count + 1
    } else {
        0
    }
}

/// Inserts a feature card (escaped text) before the feature-slot marker, keeping the marker.
pub fn add_feature(html: &str, title: &str, description: &str) -> Result<String, PreviewTarget> {
    let index = html
        .find(FEATURE_SLOT_MARKER)
        .ok_or(PreviewTarget::FeatureSlot)?;
    let indent = line_indent(html, index);
    let card = format!(
        "<article class=\"feature\">\n{indent}  <h3>{}</h3>\n{indent}  <p>{}</p>\n{indent}</article>\n{indent}",
        escape_html(title),
        escape_html(description)
    );
    let mut out = String::with_capacity(html.len() + card.len());
    out.push_str(&html[..index]);
    out.push_str(&card);
    out.push_str(&html[index..]);
    Ok(out)
}

fn line_indent(text: &str, index: usize) -> &str {
    let line_start = text[..index].rfind('\n').map_or(0, |newline| newline + 1);
    let prefix = &text[line_start..index];
    if prefix.trim().is_empty() { prefix } else { "" }
}

/// Replaces the text of the hero title and/or subtitle. Each given part's element must exist.
pub fn update_hero(
    html: &str,
    title: Option<&str>,
    subtitle: Option<&str>,
) -> Result<String, PreviewTarget> {
    let (mut title_found, mut subtitle_found) = (false, false);
    let settings = RewriteStrSettings::new()
        .append_element_content_handler(element!("h1#hero-title", |el| {
            title_found = true;
            if let Some(text) = title {
                el.set_inner_content(text, ContentType::Text);
            }
            Ok(())
        }))
        .append_element_content_handler(element!("p#hero-subtitle", |el| {
            subtitle_found = true;
            if let Some(text) = subtitle {
                el.set_inner_content(text, ContentType::Text);
            }
            Ok(())
        }));
    let rewritten = rewrite_str(html, settings).map_err(|_| PreviewTarget::HeroTitle)?;
    if title.is_some() && !title_found {
        return Err(PreviewTarget::HeroTitle);
    }
    if subtitle.is_some() && !subtitle_found {
        return Err(PreviewTarget::HeroSubtitle);
    }
    Ok(rewritten)
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// `PREVIEW_TARGET_NOT_FOUND` naming the target (and the file searched, if any).
pub(crate) fn missing_target(
    target: PreviewTarget,
    path: Option<&str>,
    message: String,
) -> ToolCallError {
    let mut details = json!({"target": target.to_string()});
    if let Some(path) = path {
        details["path"] = json!(path);
    }
    WorkspaceError::new(WorkspaceErrorCode::PreviewTargetNotFound, message, details).into()
}

/// `styles.css`, else the first CSS file.
pub(crate) fn stylesheet_path(workspace: &Workspace) -> Option<String> {
    entry_path(workspace, "styles.css", Language::Css)
}

/// `index.html`, else the first HTML file.
pub(crate) fn html_entry_path(workspace: &Workspace) -> Option<String> {
    entry_path(workspace, "index.html", Language::Html)
}

fn entry_path(workspace: &Workspace, preferred: &str, language: Language) -> Option<String> {
    if workspace
        .file(preferred)
        .is_some_and(|file| !file.is_asset())
    {
        return Some(preferred.to_owned());
    }
    workspace
        .files()
        .find(|file| file.language == language && !file.is_asset())
        .map(|file| file.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSS: &str =
        ":root {\n  --accent: #8b5cf6;\n  --accent-soft:#f0eaff;\n}\n.x { color: var(--accent); }";

    #[test]
    fn themes_replace_both_tokens_only() {
        let css = set_theme(CSS, Theme::Rose).unwrap();
        assert!(css.contains("--accent: #f43f5e;"));
        assert!(css.contains("--accent-soft:#ffedf0;"));
        assert!(
            css.contains("var(--accent)"),
            "uses of the token stay untouched"
        );
        assert_eq!(set_theme(&css, Theme::Violet).unwrap(), CSS);
    }

    #[test]
    fn themes_need_hex_tokens() {
        assert_eq!(
            set_theme("body{}", Theme::Amber),
            Err(PreviewTarget::ThemeTokens)
        );
        assert_eq!(
            set_theme(":root{--accent: red; --accent-soft: #fff}", Theme::Amber),
            Err(PreviewTarget::ThemeTokens)
        );
        assert_eq!(
            set_theme(":root{--accent: #abc;}", Theme::Amber),
            Err(PreviewTarget::ThemeTokens),
            "soft token missing"
        );
        assert_eq!(Theme::from_name("emerald"), Some(Theme::Emerald));
        assert_eq!(Theme::from_name("teal"), None);
    }

    #[test]
    fn features_are_escaped_and_keep_the_slot() {
        let html = "<main>\n  <!-- feature-slot -->\n</main>";
        let once = add_feature(html, "A <b>", "x & \"y\"").unwrap();
        assert!(once.contains("<h3>A &lt;b&gt;</h3>"));
        assert!(once.contains("<p>x &amp; &quot;y&quot;</p>"));
        let twice = add_feature(&once, "Second", "card").unwrap();
        assert_eq!(twice.matches(FEATURE_SLOT_MARKER).count(), 1);
        assert!(
            twice.find("A &lt;b&gt;").unwrap() < twice.find("Second").unwrap(),
            "cards keep their order"
        );
        assert_eq!(
            add_feature("<main></main>", "a", "b"),
            Err(PreviewTarget::FeatureSlot)
        );
    }

    #[test]
    fn hero_updates_replace_text_only() {
        let html = r#"<h1 id="hero-title">Old <em>x</em></h1><p id="hero-subtitle">Sub</p>"#;
        let updated = update_hero(html, Some("New <script>"), None).unwrap();
        assert_eq!(
            updated,
            r#"<h1 id="hero-title">New &lt;script&gt;</h1><p id="hero-subtitle">Sub</p>"#
        );
        let both = update_hero(html, Some("T"), Some("S")).unwrap();
        assert_eq!(
            both,
            r#"<h1 id="hero-title">T</h1><p id="hero-subtitle">S</p>"#
        );
        assert_eq!(
            update_hero("<h1>t</h1>", Some("x"), None),
            Err(PreviewTarget::HeroTitle)
        );
        assert_eq!(
            update_hero(r#"<h1 id="hero-title">t</h1>"#, None, Some("x")),
            Err(PreviewTarget::HeroSubtitle)
        );
    }
}
