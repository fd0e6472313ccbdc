//! The four-file seed workspace a fresh studio starts with (and `workspace.reset` restores).

/// `(path, source)` of every seed file, entry first.
pub const SEED_FILES: &[(&str, &str)] = &[
    ("index.html", include_str!("../seed/index.html")),
    ("styles.css", include_str!("../seed/styles.css")),
    ("app.js", include_str!("../seed/app.js")),
    ("README.md", include_str!("../seed/README.md")),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preview_edits::{FEATURE_SLOT_MARKER, Theme, add_feature, set_theme, update_hero};

    fn seed(path: &str) -> &'static str {
        SEED_FILES
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, s)| *s)
            .unwrap()
    }

    #[test]
    fn the_seed_carries_every_visual_tool_target() {
        assert_eq!(SEED_FILES.len(), 4);
        assert!(seed("index.html").contains(FEATURE_SLOT_MARKER));
        assert!(set_theme(seed("styles.css"), Theme::Rose).is_ok());
        assert!(add_feature(seed("index.html"), "Fast", "Compiles in microseconds.").is_ok());
        assert!(update_hero(seed("index.html"), Some("New title"), Some("New subtitle")).is_ok());
    }
}
