//! Per-call allowlists: which tool names one caller may see and call.
//!
//! The registry's own allowlist ([`ToolRegistryBuilder::allowed_tool_names`]) fixes what the
//! registry serves at all; a [`ToolNamePatterns`] narrows it for one caller (an MCP client's
//! OAuth scopes, say) through [`ToolCallOptions::allowed_tools`]. A call outside it ends with
//! `TOOL_NOT_ALLOWED`, exactly like one outside the registry's allowlist.
//!
//! [`ToolRegistryBuilder::allowed_tool_names`]: crate::ToolRegistryBuilder::allowed_tool_names
//! [`ToolCallOptions::allowed_tools`]: crate::ToolCallOptions::allowed_tools

use std::fmt;
use std::sync::Arc;

/// Tool-name patterns: `name` matches that name exactly, `prefix*` every name starting with
/// `prefix`, and `*` every name. Cheap to clone.
///
/// ```
/// use tool_context::ToolNamePatterns;
/// let notes = ToolNamePatterns::new(["notes.read", "files.*"]);
/// assert!(notes.matches("notes.read"));
/// assert!(notes.matches("files.write"));
/// assert!(!notes.matches("notes.readAll"));
/// assert!(!ToolNamePatterns::none().matches("notes.read"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ToolNamePatterns(Arc<[String]>);

impl ToolNamePatterns {
    /// The patterns `patterns`, in order (order does not change what matches).
    pub fn new<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self(patterns.into_iter().map(Into::into).collect())
    }

    /// Matches no tool.
    pub fn none() -> Self {
        Self::default()
    }

    /// Matches every tool.
    pub fn all() -> Self {
        Self::new(["*"])
    }

    /// Whether `name` matches one of the patterns.
    pub fn matches(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => pattern == name,
            })
    }

    /// The patterns, in order.
    pub fn patterns(&self) -> &[String] {
        &self.0
    }

    /// The patterns of `self` and of `other`: a name matches when it matches either.
    #[must_use]
    pub fn union(&self, other: &Self) -> Self {
        Self(self.0.iter().chain(other.0.iter()).cloned().collect())
    }
}

impl fmt::Debug for ToolNamePatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_prefixes_and_the_wildcard_match_at_their_edges() {
        let patterns = ToolNamePatterns::new(["a.read", "b.*"]);
        assert!(patterns.matches("a.read"));
        assert!(!patterns.matches("a.rea"));
        assert!(!patterns.matches("a.read2"));
        assert!(patterns.matches("b."));
        assert!(patterns.matches("b.anything"));
        assert!(!patterns.matches("b"));
        assert!(ToolNamePatterns::all().matches(""));
        assert!(!ToolNamePatterns::none().matches(""));
    }

    #[test]
    fn a_union_matches_what_either_side_matches() {
        let union = ToolNamePatterns::new(["a"]).union(&ToolNamePatterns::new(["b*"]));
        assert!(union.matches("a") && union.matches("bc") && !union.matches("c"));
    }
}
