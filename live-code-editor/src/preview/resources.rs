//! Modules for what scripts import that is no script, as bundlers load them: a stylesheet
//! (`import './App.css'`) adds a `<style>` to the document, JSON is its value, an asset
//! (`import logo from './logo.svg'`) is its URL. Each is a module's text; the compiler and the
//! package loader register them like any module.

use super::resolve::json_string;

/// What a non-script import loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resource {
    Stylesheet,
    Json,
    Asset,
}

/// A module that appends `css` as a `<style data-workspace-source="path">` to the document's
/// head when first imported; its default export is the text.
pub(crate) fn stylesheet_module(path: &str, css: &str) -> String {
    format!(
        "const css = {};\nconst style = document.createElement(\"style\");\n\
         style.setAttribute(\"data-workspace-source\", {});\nstyle.textContent = css;\n\
         document.head.appendChild(style);\nexport default css;\n",
        json_string(css),
        json_string(path)
    )
}

/// A module whose default export is the JSON text's value (the text must be valid JSON).
pub(crate) fn json_module(json: &str) -> String {
    format!("export default {};\n", json.trim_start_matches('\u{feff}'))
}

/// A module whose default export is `url`.
pub(crate) fn url_module(url: &str) -> String {
    format!("export default {};\n", json_string(url))
}

/// Why `text` is not JSON, if it is not.
pub(crate) fn json_error(text: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text.trim_start_matches('\u{feff}'))
        .err()
        .map(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_modules_quote_what_they_embed() {
        let module = stylesheet_module("a\".css", "p::after { content: \"</style>\" }");
        assert!(
            module.contains(r#"const css = "p::after { content: \"</style>\" }";"#),
            "{module}"
        );
        assert!(module.contains(r#""a\".css""#), "{module}");
        assert_eq!(
            json_module("{\"a\": [1]}"),
            "export default {\"a\": [1]};\n"
        );
        assert_eq!(url_module("data:x"), "export default \"data:x\";\n");
        assert!(json_error("{").is_some());
        assert!(json_error("[1, {\"b\": null}]").is_none());
    }
}
