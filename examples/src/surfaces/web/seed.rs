//! The three-file seed of the realtime web-coding workspace. Its markup carries every target
//! of the controlled visual tools (theme tokens, hero title and subtitle, feature slot).

use live_code_editor::WorkspaceFile;

/// `(path, source)` of every seed file, entry first.
pub const WEB_SEED_FILES: &[(&str, &str)] = &[
    ("index.html", include_str!("seed/index.html")),
    ("styles.css", include_str!("seed/styles.css")),
    ("app.js", include_str!("seed/app.js")),
];

/// The seed as workspace files.
pub fn web_seed_files() -> Vec<WorkspaceFile> {
    WEB_SEED_FILES
        .iter()
        .map(|(path, source)| WorkspaceFile::text(*path, *source))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preview_edits::{FEATURE_SLOT_MARKER, Theme, add_feature, set_theme, update_hero};

    fn seed(path: &str) -> &'static str {
        WEB_SEED_FILES
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, s)| *s)
            .unwrap()
    }

    #[test]
    fn the_seed_has_three_files_and_every_visual_target() {
        assert_eq!(web_seed_files().len(), 3);
        assert!(seed("index.html").contains(FEATURE_SLOT_MARKER));
        assert!(seed("index.html").contains("src=\"app.js\""));
        assert!(set_theme(seed("styles.css"), Theme::Amber).is_ok());
        assert!(add_feature(seed("index.html"), "Live", "Shown at once.").is_ok());
        assert!(update_hero(seed("index.html"), Some("T"), Some("S")).is_ok());
    }
}
