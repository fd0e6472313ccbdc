//! Stylesheets in the compile: local `@import` chains inlined (see [`super::super::css`] for the
//! scan and the rewriting helpers) and every stylesheet's references reported.

use std::collections::HashSet;
use std::sync::Arc;

use super::Compiler;
use crate::file::Language;
use crate::preview::css::{
    CssReference, CssReferenceKind, MAX_INLINE_CSS_IMPORTS, comment_safe, condition_wrappers,
    push_css_string,
};
use crate::preview::diagnostics::{DiagnosticKind, Location, ReferenceLabel};
use crate::preview::resolve::Reference;

/// The state of one top-level stylesheet's import inlining.
struct ImportWalk<'a> {
    ancestors: Vec<&'a str>,
    inlined: usize,
}

impl<'a> Compiler<'a> {
    /// The references of a stylesheet, scanned once per path and content.
    pub(crate) fn css_references(&mut self, key: &str, source: &str) -> Arc<Vec<CssReference>> {
        self.memo.css_references(key, source)
    }

    /// Whether a stylesheet has an `@import` rule (which may pull in a workspace stylesheet).
    pub(crate) fn imports_stylesheet(&mut self, key: &str, source: &str) -> bool {
        self.css_references(key, source)
            .iter()
            .any(|reference| matches!(reference.kind, CssReferenceKind::Import { .. }))
    }

    /// Inlines the `@import` chain of a top-level stylesheet and rewrites its asset `url()`s.
    pub(crate) fn inline_stylesheet(
        &mut self,
        path: &'a str,
        key: &str,
        source: &'a str,
    ) -> String {
        let mut walk = ImportWalk {
            ancestors: vec![path],
            inlined: 0,
        };
        self.inline_css(path, key, source, &mut walk)
    }

    fn inline_css(
        &mut self,
        path: &'a str,
        key: &str,
        source: &'a str,
        walk: &mut ImportWalk<'a>,
    ) -> String {
        let references = self.css_references(key, source);
        let mut out = String::with_capacity(source.len());
        let mut last = 0;
        for reference in references.iter() {
            out.push_str(&source[last..reference.range.start]);
            last = reference.range.end;
            let original = &source[reference.range.clone()];
            match &reference.kind {
                CssReferenceKind::Import { condition } => {
                    out.push_str(&self.inline_import(path, &reference.requested, condition, walk));
                }
                CssReferenceKind::Url => match self.asset_url_for(path, &reference.requested) {
                    Some(url) => {
                        out.push_str("url(");
                        push_css_string(&mut out, &url);
                        out.push(')');
                    }
                    None => out.push_str(original),
                },
            }
        }
        out.push_str(&source[last..]);
        out
    }

    fn inline_import(
        &mut self,
        from: &'a str,
        requested: &str,
        condition: &str,
        walk: &mut ImportWalk<'a>,
    ) -> String {
        let Some((path, source)) = self.index.find_text(from, requested, Language::Css) else {
            return format!(
                "/* Blocked unresolved workspace @import: {} */",
                comment_safe(requested)
            );
        };
        if walk.ancestors.contains(&path) {
            return format!(
                "/* Skipped cyclic workspace @import: {} */",
                comment_safe(path)
            );
        }
        if walk.inlined >= MAX_INLINE_CSS_IMPORTS {
            return format!(
                "/* Skipped workspace @import limit at: {} */",
                comment_safe(path)
            );
        }
        walk.inlined += 1;
        walk.ancestors.push(path);
        let mut inlined = self.inline_css(path, path, source, walk);
        walk.ancestors.pop();
        for wrapper in condition_wrappers(condition).iter().rev() {
            inlined = format!("{wrapper} {{\n{inlined}\n}}");
        }
        inlined
    }

    /// Reports unresolved `@import`s and `url()`s of every stylesheet reachable from `roots`
    /// (breadth first; each stylesheet once): imports first, then assets, per stylesheet.
    pub(crate) fn report_css_references(&mut self, roots: Vec<CssRoot<'a>>) {
        let mut queue = roots;
        let mut visited: HashSet<String> = queue.iter().map(|root| root.key.clone()).collect();
        let mut next = 0;
        while next < queue.len() {
            let root = queue[next].clone();
            next += 1;
            for path in self.visit_stylesheet(&root).iter() {
                if visited.insert(path.clone())
                    && let Some((path, source)) = self.index.text_of(path, Language::Css)
                {
                    queue.push(CssRoot::file(path, source));
                }
            }
        }
    }

    /// Reports the references of one stylesheet, as a piece; the workspace stylesheets its
    /// `@import`s name, in order.
    fn visit_stylesheet(&mut self, root: &CssRoot<'a>) -> Arc<[String]> {
        self.through_cache(
            |pieces| (&mut pieces.changes, &mut pieces.css_visits),
            root.key.clone(),
            |compiler| {
                // The text is a workspace stylesheet's, or an inline style's in the entry.
                compiler.index.note_read_of(root.path);
                compiler.report_stylesheet_references(root).into()
            },
        )
    }

    fn report_stylesheet_references(&mut self, root: &CssRoot<'a>) -> Vec<String> {
        let references = self.css_references(&root.key, root.source);
        let location = |offset: usize| {
            Some(Location::new(
                root.position_source,
                root.position_base + offset,
            ))
        };
        let mut imported = Vec::new();
        for reference in references
            .iter()
            .filter(|reference| matches!(reference.kind, CssReferenceKind::Import { .. }))
        {
            self.report_reference(
                ReferenceLabel::StylesheetImport,
                root.path,
                &reference.requested,
                location(reference.offset),
                false,
            );
            if let Some((path, _)) =
                self.index
                    .find_text(root.path, &reference.requested, Language::Css)
            {
                imported.push(path.to_owned());
            }
        }
        for reference in references
            .iter()
            .filter(|reference| reference.kind == CssReferenceKind::Url)
        {
            self.report_reference(
                ReferenceLabel::Asset,
                root.path,
                &reference.requested,
                location(reference.offset),
                true,
            );
        }
        imported
    }

    /// The reference rule for links, scripts, imports and assets: ignored references pass,
    /// externals are blocked (unless allowed), unresolved or absent local paths are missing.
    pub(crate) fn report_reference(
        &mut self,
        label: ReferenceLabel,
        source_path: &str,
        requested: &str,
        location: Option<Location<'_>>,
        allow_external: bool,
    ) {
        match self.index.classify(source_path, requested) {
            Reference::Ignored => {}
            Reference::External if allow_external => {}
            Reference::External => {
                self.sink.reference(
                    DiagnosticKind::BlockedExternalReference,
                    label,
                    source_path,
                    requested,
                    location,
                );
            }
            Reference::Local(Some(path)) if self.index.exists(&path) => {}
            Reference::Local(_) => {
                self.sink.reference(
                    DiagnosticKind::MissingReference,
                    label,
                    source_path,
                    requested,
                    location,
                );
            }
        }
    }
}

/// A stylesheet whose references are reported: a workspace CSS file or an inline `<style>`.
#[derive(Debug, Clone)]
pub(crate) struct CssRoot<'a> {
    /// The path references resolve against (the HTML path for inline styles).
    pub(crate) path: &'a str,
    /// Cache and visit key (the path, or a per-`<style>` key).
    pub(crate) key: String,
    pub(crate) source: &'a str,
    /// The text positions are computed in, and where `source` starts within it.
    pub(crate) position_source: &'a str,
    pub(crate) position_base: usize,
}

impl<'a> CssRoot<'a> {
    /// A workspace stylesheet file.
    pub(crate) fn file(path: &'a str, source: &'a str) -> Self {
        Self {
            path,
            key: path.to_owned(),
            source,
            position_source: source,
            position_base: 0,
        }
    }
}
