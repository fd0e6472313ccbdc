//! HTML: one `lol_html` pass finds the entry's stylesheets, scripts, inline styles and asset
//! attributes; a second pass applies the compiled plan (inlined `<style>`/`<script>`, removed
//! references, asset URLs, the head injection and the module bootstrap).

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use lol_html::html_content::{ContentType, Element};
use lol_html::{RewriteStrSettings, doc_text, element, rewrite_str, text};

/// Tags whose `data`/`poster`/`src` are reported as asset references.
const DIAGNOSED_ASSET_TAGS: &[&str] = &[
    "audio", "embed", "image", "img", "object", "source", "track", "video",
];
/// Attributes reported on those tags, in report order.
const DIAGNOSED_ASSET_ATTRIBUTES: &[&str] = &["data", "poster", "src"];
/// Tags whose `data`/`href`/`poster`/`src` are rewritten to asset URLs.
const REWRITTEN_ASSET_TAGS: &[&str] = &[
    "audio", "embed", "image", "img", "link", "object", "source", "track", "video",
];
/// Attributes rewritten to asset URLs.
const REWRITTEN_ASSET_ATTRIBUTES: &[&str] = &["data", "href", "poster", "src"];

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

/// What to do with one `<script>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptAction {
    /// Leave it as written.
    Keep,
    /// Remove the element (unresolved `src`).
    Remove,
    /// Drop `src` and replace the content with this (already escaped) text.
    Inline(Arc<str>),
}

/// A `<style>` element a stylesheet link becomes: its start tag and its text (the end tag
/// follows). Kept in parts so the text, shared with the live stylesheets, is copied only into
/// the document.
#[derive(Debug, Clone)]
pub(crate) struct StyleElement {
    pub(crate) start: Arc<str>,
    pub(crate) text: Arc<str>,
}

impl StyleElement {
    pub(crate) const END: &'static str = "</style>";

    /// Bytes the element adds to the document.
    pub(crate) fn len(&self) -> usize {
        self.start.len() + self.text.len() + Self::END.len()
    }
}

/// The compiled replacements the rewrite pass applies.
#[derive(Debug, Default)]
pub(crate) struct HtmlPlan {
    /// Per stylesheet link: the replacement `<style>` element, or `None` to remove the link.
    pub(crate) links: Vec<Option<StyleElement>>,
    pub(crate) scripts: Vec<ScriptAction>,
    /// Per inline `<style>`: new content when it changed.
    pub(crate) styles: Vec<Option<String>>,
    /// Inserted before this script (the first kept module script).
    pub(crate) bootstrap: Option<(usize, Arc<str>)>,
    /// CSP meta and bridge, placed at the scan's injection point.
    pub(crate) head: String,
}

/// Where the plan puts content and what it removes: with the entry and its asset URLs, all a
/// rewrite depends on (the content itself fills the template's slots afterwards).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanShape {
    links: Vec<bool>,
    scripts: Vec<ScriptShape>,
    styles: Vec<bool>,
    bootstrap: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScriptShape {
    Keep,
    Remove,
    Inline,
}

impl HtmlPlan {
    /// The plan's shape.
    pub(crate) fn shape(&self) -> PlanShape {
        PlanShape {
            links: self.links.iter().map(Option::is_some).collect(),
            scripts: self
                .scripts
                .iter()
                .map(|action| match action {
                    ScriptAction::Keep => ScriptShape::Keep,
                    ScriptAction::Remove => ScriptShape::Remove,
                    ScriptAction::Inline(_) => ScriptShape::Inline,
                })
                .collect(),
            styles: self.styles.iter().map(Option::is_some).collect(),
            bootstrap: self.bootstrap.as_ref().map(|(index, _)| *index),
        }
    }

    /// What fills `slot`, in up to three parts.
    fn slot_content(&self, slot: Slot) -> [&str; 3] {
        let one = |text| [text, "", ""];
        match slot {
            Slot::Head => one(&self.head),
            Slot::Link(index) => match &self.links[index] {
                Some(element) => [&element.start, &element.text, StyleElement::END],
                None => one(""),
            },
            Slot::Script(index) => match &self.scripts[index] {
                ScriptAction::Inline(text) => one(text),
                ScriptAction::Keep | ScriptAction::Remove => one(""),
            },
            Slot::Style(index) => one(self.styles[index].as_deref().unwrap_or_default()),
            Slot::Bootstrap => one(self
                .bootstrap
                .as_ref()
                .map_or("", |(_, bootstrap)| bootstrap)),
        }
    }
}

/// A place in the rewritten entry that plan content fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Head,
    Link(usize),
    Script(usize),
    Style(usize),
    Bootstrap,
}

/// The entry rewritten for a plan's shape, with the plan's content cut out: filling the slots
/// gives the rewritten document. Content never passes through `lol_html`, so an incremental
/// compile that changed no entry, shape or asset URL fills the template it kept.
#[derive(Debug)]
pub(crate) struct Template {
    /// The rewritten entry with a marker where each slot goes.
    text: String,
    /// Each slot and the bytes of `text` its marker spans, in order.
    slots: Vec<(Range<usize>, Slot)>,
    /// Each asset URL the rewrite asked for, and the answer it wrote.
    pub(crate) asset_calls: Vec<(String, Option<Arc<str>>)>,
}

impl Template {
    /// The document: the template with every slot filled from `plan`.
    pub(crate) fn fill(&self, plan: &HtmlPlan) -> String {
        let content = |slot: Slot| plan.slot_content(slot);
        let markers: usize = self.slots.iter().map(|(marker, _)| marker.len()).sum();
        let length = self.text.len() - markers
            + self
                .slots
                .iter()
                .flat_map(|(_, slot)| content(*slot))
                .map(str::len)
                .sum::<usize>();
        let mut out = String::with_capacity(length);
        let mut last = 0;
        for (marker, slot) in &self.slots {
            out.push_str(&self.text[last..marker.start]);
            for part in content(*slot) {
                out.push_str(part);
            }
            last = marker.end;
        }
        out.push_str(&self.text[last..]);
        out
    }
}

/// A template an incremental compiler keeps, valid for the entry scan it was built from (the
/// memo hands out the same scan while the entry's bytes are unchanged) and the plan shape.
#[derive(Debug)]
pub(crate) struct CachedTemplate {
    pub(crate) scan: Arc<super::memo::HtmlScanResult>,
    pub(crate) shape: PlanShape,
    pub(crate) template: Template,
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

#[derive(Default)]
struct RewriteCounters {
    elements: usize,
    links: usize,
    scripts: usize,
    styles: usize,
}

/// The rewrite pass for a plan of `shape`. `asset_url` maps an attribute value to its asset
/// URL, if it is an asset; it is asked in document order, once per rewritten attribute.
pub(crate) fn rewrite_template(
    source: &str,
    scan: &HtmlScan,
    shape: &PlanShape,
    asset_url: &mut dyn FnMut(&str) -> Option<Arc<str>>,
) -> Result<Template, lol_html::errors::RewritingError> {
    let mut asset_calls = Vec::new();
    let nonce = free_nonce(0, &[source]);
    let mut marked = mark_slots(source, scan, shape, nonce, &mut |requested| {
        let url = asset_url(requested);
        asset_calls.push((requested.to_owned(), url.clone()));
        url
    })?;
    // Only an asset URL can hold a marker the entry does not (a marker there could even
    // stand in for a slot lol_html dropped): then mark again with a nonce neither holds,
    // answering each attribute as before (the answers took budget once already). Nothing else
    // writes the marker character, so that pass finds only markers.
    let template = loop {
        let prefix = marker_prefix(marked.nonce);
        let urls = || asset_calls.iter().filter_map(|(_, url)| url.as_deref());
        if !urls().any(|url| url.contains(&prefix)) {
            match marked.template() {
                Ok(template) => break template,
                Err(spoiled) => marked = spoiled,
            }
        }
        let texts: Vec<&str> = std::iter::once(source).chain(urls()).collect();
        let nonce = free_nonce(marked.nonce + 1, &texts);
        let mut answers = asset_calls.iter().map(|(_, url)| url.clone());
        marked = mark_slots(source, scan, shape, nonce, &mut |_| {
            answers.next().flatten()
        })?;
    };
    Ok(Template {
        asset_calls,
        ..template
    })
}

/// The rewritten entry with a marker where each slot goes.
struct Marked {
    text: String,
    slots: Vec<Slot>,
    nonce: u64,
}

impl Marked {
    /// Finds the markers (kept in the text: filling skips them, so the text is not copied
    /// again); `Err` when the text holds a marker that is malformed, unknown or repeated. A
    /// missing one is content lol_html dropped (as it drops content set into an element it
    /// cannot fill, such as a self-closing `<script/>` in SVG): its slot is left out.
    fn template(self) -> Result<Template, Self> {
        match self.markers() {
            Some(slots) => Ok(Template {
                text: self.text,
                slots,
                asset_calls: Vec::new(),
            }),
            None => Err(self),
        }
    }

    fn markers(&self) -> Option<Vec<(Range<usize>, Slot)>> {
        let prefix = marker_prefix(self.nonce);
        let mut seen = vec![false; self.slots.len()];
        let mut slots = Vec::with_capacity(self.slots.len());
        let mut from = 0;
        while let Some(found) = find_marker(&self.text[from..], &prefix) {
            let start = from + found;
            let after = start + prefix.len();
            let end = after + self.text[after..].find(MARKER_END)?;
            let number: usize = self.text[after..end].parse().ok()?;
            if std::mem::replace(seen.get_mut(number)?, true) {
                return None;
            }
            from = end + MARKER_END.len_utf8();
            slots.push((start..from, self.slots[number]));
        }
        Some(slots)
    }
}

/// Markers are `U+FDD0 <nonce> : <slot number> U+FDD1`: noncharacters, with a nonce whose
/// prefix neither the entry nor (on a second pass) any asset URL contains.
const MARKER_START: char = '\u{FDD0}';
const MARKER_END: char = '\u{FDD1}';

/// Where `prefix` (which starts with [`MARKER_START`]) first occurs in `text`: a one-character
/// search first, as the rewritten entry of an export holds megabytes of `data:` URLs.
fn find_marker(text: &str, prefix: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(MARKER_START) {
        let at = from + found;
        if text[at..].starts_with(prefix) {
            return Some(at);
        }
        from = at + MARKER_START.len_utf8();
    }
    None
}

fn marker_prefix(nonce: u64) -> String {
    format!("{MARKER_START}{nonce}:")
}

/// The first nonce from `start` whose marker prefix none of `texts` holds.
fn free_nonce(start: u64, texts: &[&str]) -> u64 {
    let mut nonce = start;
    if texts.iter().any(|text| text.contains(MARKER_START)) {
        while texts
            .iter()
            .any(|text| text.contains(&marker_prefix(nonce)))
        {
            nonce += 1;
        }
    }
    nonce
}

fn mark_slots(
    source: &str,
    scan: &HtmlScan,
    shape: &PlanShape,
    nonce: u64,
    asset_url: &mut dyn FnMut(&str) -> Option<Arc<str>>,
) -> Result<Marked, lol_html::errors::RewritingError> {
    let counters = RefCell::new(RewriteCounters::default());
    let slots = RefCell::new(Vec::new());
    let marker = |slot: Slot| {
        let mut slots = slots.borrow_mut();
        slots.push(slot);
        format!("{}{}{MARKER_END}", marker_prefix(nonce), slots.len() - 1)
    };
    let asset_url = RefCell::new(asset_url);
    let settings = settings_for(vec![element!("*", |element| {
        let mut counters = counters.borrow_mut();
        let element_index = counters.elements;
        counters.elements += 1;
        match scan.injection {
            Injection::PrependToElement(index) if index == element_index => {
                element.prepend(&marker(Slot::Head), ContentType::Html)
            }
            Injection::BeforeElement(index) if index == element_index => {
                element.before(&marker(Slot::Head), ContentType::Html)
            }
            _ => {}
        }
        let name = element.tag_name();
        if name == "link" && stylesheet_href(element).is_some() {
            let index = counters.links;
            counters.links += 1;
            if shape.links.get(index) == Some(&true) {
                element.replace(&marker(Slot::Link(index)), ContentType::Html);
            } else {
                element.remove();
            }
            return Ok(());
        }
        if name == "script" {
            let index = counters.scripts;
            counters.scripts += 1;
            if shape.bootstrap == Some(index) {
                element.before(&marker(Slot::Bootstrap), ContentType::Html);
            }
            match shape.scripts.get(index) {
                Some(ScriptShape::Remove) => element.remove(),
                Some(ScriptShape::Inline) => {
                    element.remove_attribute("src");
                    element.set_inner_content(&marker(Slot::Script(index)), ContentType::Html);
                }
                Some(ScriptShape::Keep) | None => {}
            }
            return Ok(());
        }
        if name == "style" {
            let index = counters.styles;
            counters.styles += 1;
            if shape.styles.get(index) == Some(&true) {
                element.set_inner_content(&marker(Slot::Style(index)), ContentType::Html);
            }
            return Ok(());
        }
        if REWRITTEN_ASSET_TAGS.contains(&name.as_str()) {
            for attribute in REWRITTEN_ASSET_ATTRIBUTES {
                if let Some(reference) = attribute_ref(element, attribute)
                    && let Some(url) = (asset_url.borrow_mut())(&reference.value)
                {
                    element.set_attribute(attribute, &escape_attribute(&url))?;
                }
            }
        }
        Ok(())
    })]);
    let mut text = rewrite_str(source, settings)?;
    if scan.injection == Injection::DocumentStart {
        text.insert_str(0, &marker(Slot::Head));
    }
    Ok(Marked {
        text,
        slots: slots.into_inner(),
        nonce,
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

    fn plan() -> HtmlPlan {
        HtmlPlan {
            links: vec![Some(StyleElement {
                start: "<style>".into(),
                text: "a{}".into(),
            })],
            scripts: vec![ScriptAction::Inline("run()".into()), ScriptAction::Remove],
            styles: vec![],
            bootstrap: None,
            head: "<meta name=x>".into(),
        }
    }

    #[test]
    fn rewrite_applies_the_plan() {
        let html = r#"<html><head><link rel=stylesheet href=a.css><script src=x.js defer></script><script src=gone.js></script></head><body><img src="a.png"><img src="b.png"></body></html>"#;
        let scan = scan_html(html).unwrap();
        let plan = plan();
        let template = rewrite_template(html, &scan, &plan.shape(), &mut |value| {
            (value == "a.png").then(|| "data:image/png;base64,AA==".into())
        })
        .unwrap();
        assert_eq!(
            template.fill(&plan),
            r#"<html><head><meta name=x><style>a{}</style><script defer>run()</script></head><body><img src="data:image/png;base64,AA=="><img src="b.png"></body></html>"#
        );
        assert_eq!(
            template.asset_calls,
            [
                (
                    "a.png".to_owned(),
                    Some("data:image/png;base64,AA==".into())
                ),
                ("b.png".to_owned(), None)
            ]
        );
    }

    /// lol_html drops content set into an element it cannot fill (a self-closing `<script/>`
    /// in SVG), marker included: that slot is left out, as the content was before templates,
    /// and the rewrite ends (it looped for ever, found by the preview fuzz target).
    #[test]
    fn a_slot_lol_html_drops_is_left_out() {
        let html = "<head><link rel=stylesheet href=a.css></head><svg><script src=x.js /></svg>";
        let scan = scan_html(html).unwrap();
        let plan = plan();
        let template = rewrite_template(html, &scan, &plan.shape(), &mut |_| None).unwrap();
        let filled = template.fill(&plan);
        assert!(
            filled.starts_with("<head><meta name=x><style>a{}</style></head><svg>"),
            "{filled}"
        );
        assert!(!filled.contains('\u{FDD0}'), "{filled}");
    }

    /// An asset URL that holds the very marker of a slot lol_html dropped is written as it
    /// is; the slot's content never lands inside the attribute.
    #[test]
    fn a_url_holding_a_dropped_slots_marker_is_not_taken_for_it() {
        let html = "<head><link rel=stylesheet href=a.css></head><svg><script src=x.js /></svg><img src=a.png>";
        let scan = scan_html(html).unwrap();
        let plan = plan();
        let url = "/\u{FDD0}0:2\u{FDD1}";
        let template =
            rewrite_template(html, &scan, &plan.shape(), &mut |_| Some(url.into())).unwrap();
        let filled = template.fill(&plan);
        assert!(filled.contains(&format!("<img src=\"{url}\">")), "{filled}");
        assert!(!filled.contains("run()"), "{filled}");
    }

    /// Slots are cut out by markers of noncharacters; an entry or an asset URL that holds
    /// one is still rewritten exactly, each URL asked for once.
    #[test]
    fn marker_characters_in_the_entry_or_a_url_are_kept_as_written() {
        let html = "<head><link rel=stylesheet href=a.css></head>\u{FDD0}0:0\u{FDD1}<script src=x.js></script><script src=gone.js></script><img src=a.png>";
        let scan = scan_html(html).unwrap();
        let plan = plan();
        let mut asked = 0;
        let template = rewrite_template(html, &scan, &plan.shape(), &mut |_| {
            asked += 1;
            Some("/\u{FDD0}1:0\u{FDD1}".into())
        })
        .unwrap();
        assert_eq!(asked, 1);
        assert_eq!(
            template.fill(&plan),
            "<head><meta name=x><style>a{}</style></head>\u{FDD0}0:0\u{FDD1}<script>run()</script><img src=\"/\u{FDD0}1:0\u{FDD1}\">"
        );
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
