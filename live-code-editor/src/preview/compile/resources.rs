//! Non-script workspace files imported by modules (see [`crate::preview::resources`]): found by
//! the request rewrite, rendered by the graph walk, each registered once under its workspace
//! specifier. Stylesheets imported this way are also reported like linked ones.

use std::sync::Arc;

use super::Compiler;
use crate::file::{FileContent, Language};
use crate::preview::diagnostics::{DiagnosticKind, Location};
use crate::preview::modules::encode_module_source;
use crate::preview::resolve::json_string;
use crate::preview::resources::{Resource, json_error, json_module, stylesheet_module, url_module};

/// What a module's import list records for a resource (NUL-prefixed: no workspace path).
const RESOURCE_MARKER: &str = "\u{0}resource\u{0}";

pub(crate) fn resource_marker(path: &str) -> String {
    format!("{RESOURCE_MARKER}{path}")
}

pub(crate) fn resource_of_marker(entry: &str) -> Option<&str> {
    entry.strip_prefix(RESOURCE_MARKER)
}

impl<'a> Compiler<'a> {
    /// The workspace file at `path` and what it loads as, when it is a stylesheet, JSON or an
    /// asset.
    pub(crate) fn resource_at(&self, path: &str) -> Option<(&'a str, Resource)> {
        let file = &self.index.files()[self.index.position(path)? as usize];
        let resource = match (&file.content, file.language) {
            (FileContent::Asset { .. }, _) => Resource::Asset,
            (_, Language::Css) => Resource::Stylesheet,
            (_, Language::Json) => Resource::Json,
            _ => return None,
        };
        Some((file.path.as_str(), resource))
    }

    /// The module text (encoded) of the resource at `path`, within the budget.
    pub(crate) fn rendered_resource(&mut self, path: &'a str) -> Arc<str> {
        let text = match self.resource_at(path) {
            Some((_, Resource::Stylesheet)) => self.stylesheet_resource(path),
            Some((_, Resource::Json)) => self.json_resource(path),
            Some((_, Resource::Asset)) => match self.asset_url(path, &format!("/{path}")) {
                Some(url) => url_module(&url),
                None => throwing(&format!("Asset could not be loaded: {path}")),
            },
            None => throwing(&format!("Missing local module import: {path}")),
        };
        let encoded = encode_module_source(&text);
        if self.take_or_report(encoded.len(), path, path) {
            return encoded.into();
        }
        encode_module_source(&throwing(&format!(
            "Preview output limit reached at: {path}"
        )))
        .into()
    }

    fn stylesheet_resource(&mut self, path: &'a str) -> String {
        let Some((path, source)) = self.index.text_of(path, Language::Css) else {
            return throwing(&format!("Stylesheet could not be read: {path}"));
        };
        self.module_stylesheets.push((path, source));
        let css = self.inline_stylesheet(path, path, source);
        stylesheet_module(path, &css)
    }

    fn json_resource(&mut self, path: &'a str) -> String {
        let Some((path, source)) = self.index.text_of(path, Language::Json) else {
            return throwing(&format!("JSON file could not be read: {path}"));
        };
        match json_error(source) {
            None => json_module(source),
            Some(error) => {
                let message = format!("JSON module could not be parsed: {error}");
                self.sink.other(
                    DiagnosticKind::ModuleSyntaxError,
                    path,
                    path,
                    Some(Location::new(source, 0)),
                    message.clone(),
                );
                throwing(&format!("{path}: {message}"))
            }
        }
    }
}

fn throwing(reason: &str) -> String {
    format!("throw new Error({});", json_string(reason))
}
