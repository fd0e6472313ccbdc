//! HTML: one `lol_html` pass finds the entry's stylesheets, scripts, inline styles and asset
//! attributes; a second pass ([`template`]) applies the compiled plan (inlined
//! `<style>`/`<script>`, removed references, asset URLs, the head injection and the module
//! bootstrap). Both are pure: the compiler decides what the plan holds.

use std::borrow::Cow;
use std::cell::RefCell;

use lol_html::html_content::Element;
use lol_html::{RewriteStrSettings, doc_text, element, rewrite_str, text};

mod template;

pub(crate) use template::{
    HtmlPlan, PlanShape, ScriptAction, StyleElement, Template, rewrite_template,
};

/// Tags whose `data`/`poster`/`src` are reported as asset references.
const DIAGNOSED_ASSET_TAGS: &[&str] = &[
    "audio", "embed", "image", "img", "object", "source", "track", "video",
];
/// Attributes reported on those tags, in report order.
const DIAGNOSED_ASSET_ATTRIBUTES: &[&str] = &["data", "poster", "src"];

/// A reference in an attribute value, entity-decoded, with the value's byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttributeRef {
    pub(crate) value: String,
    pub(crate) offset: usize,
}

/// A `<link>` that is a stylesheet (by `rel` or by a `.css` href).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkTag {
    pub(crate) href: AttributeRef,
    pub(crate) media: Option<String>,
}

/// A `<script>` element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ScriptTag {
    /// A non-empty `src`.
    pub(crate) src: Option<AttributeRef>,
    pub(crate) module: bool,
    /// `type="importmap"`: read by the compiler, never kept (see [`super::import_map`]).
    pub(crate) import_map: bool,
    /// The inline text and where it starts in the document.
    pub(crate) text: String,
    pub(crate) text_offset: Option<usize>,
}

/// An inline `<style>` element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StyleTag {
    pub(crate) text: String,
    pub(crate) text_offset: Option<usize>,
}

/// Where the head injection (CSP, bridge) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Injection {
    /// At the start of the n-th element's content (`<head>`, or `<html>` when there is no head).
    PrependToElement(usize),
    /// Before the n-th element (the first one, when it is neither `<html>` nor `<head>`).
    BeforeElement(usize),
    /// At the very start of the output (no elements, or text before the first element).
    DocumentStart,
}

/// What the scan pass found, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HtmlScan {
    pub(crate) links: Vec<LinkTag>,
    pub(crate) scripts: Vec<ScriptTag>,
    pub(crate) styles: Vec<StyleTag>,
    pub(crate) assets: Vec<AttributeRef>,
    pub(crate) injection: Injection,
}

fn attribute_ref(element: &Element<'_, '_>, name: &str) -> Option<AttributeRef> {
    let attribute = element
        .attributes()
        .iter()
        .find(|attribute| attribute.name() == name)?;
    let offset = attribute
        .value_source_location()
        .map_or(0, |location| location.bytes().start);
    Some(AttributeRef {
        value: decode_entities(&attribute.value()),
        offset,
    })
}

/// Whether a `<link>` is inlined as a stylesheet: it has an `href`, and its `rel` contains
/// `stylesheet` or its href ends in `.css` (optionally followed by `?`/`#`).
fn stylesheet_href(element: &Element<'_, '_>) -> Option<AttributeRef> {
    let href = attribute_ref(element, "href").filter(|href| !href.value.is_empty())?;
    let rel = element
        .get_attribute("rel")
        .unwrap_or_default()
        .to_ascii_lowercase();
    (rel.contains("stylesheet") || ends_with_css(&href.value)).then_some(href)
}

fn ends_with_css(href: &str) -> bool {
    let path = href.split(['?', '#']).next().unwrap_or_default();
    // Bytes, not a `str` slice: the last four bytes can start inside a multibyte character.
    path.len() >= 4 && path.as_bytes()[path.len() - 4..].eq_ignore_ascii_case(b".css")
}

fn is_module_script(element: &Element<'_, '_>) -> bool {
    script_type_is(element, "module")
}

fn script_type_is(element: &Element<'_, '_>, kind: &str) -> bool {
    element
        .get_attribute("type")
        .is_some_and(|value| value.trim().eq_ignore_ascii_case(kind))
}

fn script_src(element: &Element<'_, '_>) -> Option<AttributeRef> {
    attribute_ref(element, "src").filter(|src| !src.value.trim().is_empty())
}

fn settings_for<'h>(
    element_handlers: Vec<(
        std::borrow::Cow<'static, lol_html::Selector>,
        lol_html::ElementContentHandlers<'h>,
    )>,
) -> RewriteStrSettings<'h, 'static> {
    let mut settings = RewriteStrSettings::new().with_strict(false);
    for handler in element_handlers {
        settings = settings.append_element_content_handler(handler);
    }
    settings
}

#[derive(Default)]
struct ScanState {
    scan_links: Vec<LinkTag>,
    scripts: Vec<ScriptTag>,
    styles: Vec<StyleTag>,
    assets: Vec<AttributeRef>,
    elements: Vec<String>,
    text_before_first_element: bool,
}

/// The scan pass.
pub(crate) fn scan_html(source: &str) -> Result<HtmlScan, lol_html::errors::RewritingError> {
    let state = RefCell::new(ScanState::default());
    let settings = settings_for(vec![
        element!("*", |element| {
            let mut state = state.borrow_mut();
            if state.elements.len() < 2 {
                state.elements.push(element.tag_name());
            }
            match element.tag_name().as_str() {
                "link" => {
                    if let Some(href) = stylesheet_href(element) {
                        let media = element
                            .get_attribute("media")
                            .map(|media| decode_entities(&media));
                        state.scan_links.push(LinkTag { href, media });
                    }
                }
                "script" => {
                    let tag = ScriptTag {
                        src: script_src(element),
                        module: is_module_script(element),
                        import_map: script_type_is(element, "importmap"),
                        ..ScriptTag::default()
                    };
                    state.scripts.push(tag);
                }
                "style" => state.styles.push(StyleTag::default()),
                name if DIAGNOSED_ASSET_TAGS.contains(&name) => {
                    for attribute in DIAGNOSED_ASSET_ATTRIBUTES {
                        if let Some(reference) = attribute_ref(element, attribute) {
                            state.assets.push(reference);
                        }
                    }
                }
                _ => {}
            }
            Ok(())
        }),
        text!("script", |chunk| {
            if let Some(script) = state.borrow_mut().scripts.last_mut() {
                script
                    .text_offset
                    .get_or_insert(chunk.source_location().bytes().start);
                script.text.push_str(chunk.as_str());
            }
            Ok(())
        }),
        text!("style", |chunk| {
            if let Some(style) = state.borrow_mut().styles.last_mut() {
                style
                    .text_offset
                    .get_or_insert(chunk.source_location().bytes().start);
                style.text.push_str(chunk.as_str());
            }
            Ok(())
        }),
    ])
    .append_document_content_handler(doc_text!(|chunk| {
        let mut state = state.borrow_mut();
        if state.elements.is_empty() && !chunk.as_str().trim().is_empty() {
            state.text_before_first_element = true;
        }
        Ok(())
    }));
    rewrite_str(source, settings)?;
    let state = state.into_inner();
    let injection = match state
        .elements
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["head", ..] => Injection::PrependToElement(0),
        ["html", "head"] => Injection::PrependToElement(1),
        ["html", ..] => Injection::PrependToElement(0),
        [_, ..] if !state.text_before_first_element => Injection::BeforeElement(0),
        _ => Injection::DocumentStart,
    };
    Ok(HtmlScan {
        links: state.scan_links,
        scripts: state.scripts,
        styles: state.styles,
        assets: state.assets,
        injection,
    })
}

/// Escapes text for a double-quoted attribute (lol_html escapes `"` but not `&`).
pub(crate) fn escape_attribute(value: &str) -> Cow<'_, str> {
    // A vectorised search: an export's `data:` URLs are tens of kilobytes of clean base64.
    let Some(first) = memchr::memchr3(b'&', b'"', b'<', value.as_bytes()) else {
        return Cow::Borrowed(value);
    };
    let mut out = String::with_capacity(value.len() + 16);
    out.push_str(&value[..first]);
    for character in value[first..].chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            _ => out.push(character),
        }
    }
    Cow::Owned(out)
}

/// Makes text safe as the content of a raw-text element (`script`, `style`): every `</tag`
/// becomes `<\/tag`, which means the same inside JavaScript strings, templates, regular
/// expressions and comments, and inside CSS strings and comments. Borrowed when nothing
/// needed escaping (the usual case), so the text is not copied for nothing.
pub(crate) fn escape_raw_text<'t>(text: &'t str, tag: &str) -> Cow<'t, str> {
    let closes = |name: &str| {
        name.len() >= tag.len() && name.as_bytes()[..tag.len()].eq_ignore_ascii_case(tag.as_bytes())
    };
    // A one-byte search (memchr) for `<`: every inlined stylesheet and script of every compile
    // passes through here, and a two-byte pattern search was a third of an incremental compile.
    let first = text
        .match_indices('<')
        .find(|(index, _)| text[index + 1..].strip_prefix('/').is_some_and(closes));
    let Some((first, _)) = first else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(index) = rest.find('<') {
        out.push_str(&rest[..index]);
        let after = &rest[index + 1..];
        let Some(name) = after.strip_prefix('/') else {
            out.push('<');
            rest = after;
            continue;
        };
        out.push_str(if closes(name) { "<\\/" } else { "</" });
        rest = name;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Decodes the character references attribute values commonly carry in URLs.
pub(crate) fn decode_entities(value: &str) -> String {
    if !value.contains('&') {
        return value.to_owned();
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(index) = rest.find('&') {
        out.push_str(&rest[..index]);
        rest = &rest[index..];
        match decode_one_entity(rest) {
            Some((character, length)) => {
                out.push(character);
                rest = &rest[length..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_one_entity(text: &str) -> Option<(char, usize)> {
    let end = text.find(';').filter(|end| *end <= 10)?;
    let name = &text[1..end];
    let character = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((character, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multibyte_character_before_the_extension_is_not_a_panic() {
        // Found by the preview_compile fuzz target: the last four bytes of this href start
        // inside the two-byte U+06DC, and slicing there panicked the compile.
        assert!(!ends_with_css("h\"ttps://cdn.example.test/site\u{6dc}ss\""));
        assert!(!ends_with_css("\u{6dc}css"));
        assert!(ends_with_css("\u{6dc}.CSS?v=1"));
        let document = "<link href=\"a\u{6dc}css\"><link rel=stylesheet href=\"b\u{6dc}.css\">";
        assert_eq!(scan_html(document).unwrap().links.len(), 1);
    }

    #[test]
    fn scans_links_scripts_styles_and_assets_in_order() {
        let html = r#"<!doctype html><html><head>
<link rel="stylesheet" href="a.css" media="print"><link rel="icon" href="i.png"><link href="b.css?v=1">
<style>@import "c.css";</style>
<script src="app.js"></script><script type=" Module ">import './x.js'</script><script src="">inline()</script>
</head><body><img src="my%20cat.png" data-x="1"><video poster="p.png" src="v.webm"></video></body></html>"#;
        let scan = scan_html(html).unwrap();
        let links: Vec<_> = scan
            .links
            .iter()
            .map(|link| (link.href.value.as_str(), link.media.as_deref()))
            .collect();
        assert_eq!(links, [("a.css", Some("print")), ("b.css?v=1", None)]);
        assert_eq!(
            &html[scan.links[0].href.offset..scan.links[0].href.offset + 5],
            "a.css"
        );
        assert_eq!(scan.scripts.len(), 3);
        assert_eq!(scan.scripts[0].src.as_ref().unwrap().value, "app.js");
        assert!(scan.scripts[1].module && scan.scripts[1].src.is_none());
        assert_eq!(scan.scripts[1].text, "import './x.js'");
        let offset = scan.scripts[1].text_offset.unwrap();
        assert_eq!(&html[offset..offset + 6], "import");
        assert!(
            scan.scripts[2].src.is_none(),
            "an empty src is an inline script"
        );
        assert_eq!(scan.styles[0].text, "@import \"c.css\";");
        let assets: Vec<_> = scan
            .assets
            .iter()
            .map(|asset| asset.value.as_str())
            .collect();
        assert_eq!(assets, ["my%20cat.png", "p.png", "v.webm"]);
        assert_eq!(scan.injection, Injection::PrependToElement(1));
    }

    #[test]
    fn injection_point_follows_the_document_shape() {
        assert_eq!(
            scan_html("<head><title>x</title></head>")
                .unwrap()
                .injection,
            Injection::PrependToElement(0)
        );
        assert_eq!(
            scan_html("<!doctype html><html><body>x</body></html>")
                .unwrap()
                .injection,
            Injection::PrependToElement(0)
        );
        assert_eq!(
            scan_html("<!doctype html>\n<title>x</title>")
                .unwrap()
                .injection,
            Injection::BeforeElement(0)
        );
        assert_eq!(
            scan_html("Hello <b>x</b>").unwrap().injection,
            Injection::DocumentStart
        );
        assert_eq!(
            scan_html("just text").unwrap().injection,
            Injection::DocumentStart
        );
    }

    #[test]
    fn markup_inside_scripts_comments_and_attributes_is_not_scanned() {
        let html = r#"<!-- <link rel=stylesheet href=no1.css> --><script>var s = '<link rel="stylesheet" href="no2.css">';</script><p title='<img src="no3.png">'></p>"#;
        let scan = scan_html(html).unwrap();
        assert!(scan.links.is_empty());
        assert!(scan.assets.is_empty());
    }

    #[test]
    fn attribute_escaping_touches_ampersands_quotes_and_less_than_only() {
        assert_eq!(escape_attribute("a.png?x=1"), "a.png?x=1");
        assert!(matches!(escape_attribute("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_attribute("é\"<&>'x&amp;"),
            "é&quot;&lt;&amp;>'x&amp;amp;"
        );
    }

    #[test]
    fn raw_text_escaping_only_touches_closing_tags() {
        assert_eq!(
            escape_raw_text("a</script>b</SCRIPT >c</div>", "script"),
            "a<\\/script>b<\\/SCRIPT >c</div>"
        );
        assert_eq!(escape_raw_text("x</style", "style"), "x<\\/style");
        assert_eq!(
            escape_raw_text("a < b <</style é<", "style"),
            "a < b <<\\/style é<",
            "a lone `<`, one before a closing tag and one at the end are kept"
        );
        assert_eq!(escape_raw_text("</", "style"), "</");
        assert!(
            matches!(
                escape_raw_text("a < b </div> </", "style"),
                Cow::Borrowed(_)
            ),
            "text with nothing to escape is not copied"
        );
    }

    #[test]
    fn entities_in_attribute_values_are_decoded() {
        assert_eq!(
            decode_entities("a&amp;b&#32;c&#x41;&unknown;&"),
            "a&b cA&unknown;&"
        );
    }
}
