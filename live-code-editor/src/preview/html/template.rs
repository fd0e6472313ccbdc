//! The rewrite pass: the entry rewritten once into a [`Template`] with a marker where each
//! slot of the compiled [`HtmlPlan`] goes (inlined `<style>`/`<script>`, removed references,
//! asset URLs, the head injection and the module bootstrap), then filled for a plan.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use lol_html::html_content::ContentType;
use lol_html::{element, rewrite_str};

use super::{HtmlScan, Injection, attribute_ref, escape_attribute, settings_for, stylesheet_href};

/// Tags whose `data`/`href`/`poster`/`src` are rewritten to asset URLs.
const REWRITTEN_ASSET_TAGS: &[&str] = &[
    "audio", "embed", "image", "img", "link", "object", "source", "track", "video",
];
/// Attributes rewritten to asset URLs.
const REWRITTEN_ASSET_ATTRIBUTES: &[&str] = &["data", "href", "poster", "src"];

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preview::html::scan_html;

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
}
