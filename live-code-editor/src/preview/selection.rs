//! Design Mode: the dormant part of the preview bridge that lets a person point at an element
//! of the preview, and the validator the host uses to accept the selection message it posts.
//!
//! The script is injected only with the preview bridge (never into a standalone export) and
//! starts inactive. The parent turns it on with a `context-action.design.set` message for the
//! revision the iframe shows (optionally with the current selection's selector, which a reloaded
//! document marks again); while on, the element under the pointer is outlined by a fixed
//! overlay (no layout shift) and a click, captured before any page handler, posts one bounded
//! `context-action.preview.selection` message. Esc inside the preview posts
//! `context-action.preview.designExit` and turns it off.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::protocol::{
    DESIGN_MODE_MESSAGE, MAX_BRIDGE_REVISION, PREVIEW_DESIGN_EXIT_MESSAGE,
    PREVIEW_SELECTION_MESSAGE,
};

/// Error code of a selection message that is malformed or exceeds a bound.
pub const PREVIEW_SELECTION_INVALID: &str = "PREVIEW_SELECTION_INVALID";

/// Longest selector, in characters.
pub const MAX_SELECTION_SELECTOR_CHARS: usize = 300;
/// Longest tag name, in characters.
pub const MAX_SELECTION_TAG_CHARS: usize = 32;
/// Longest element id, in characters.
pub const MAX_SELECTION_ID_CHARS: usize = 100;
/// Classes kept per selection.
pub const MAX_SELECTION_CLASSES: usize = 12;
/// Longest class name, in characters.
pub const MAX_SELECTION_CLASS_CHARS: usize = 60;
/// Longest text excerpt, in characters.
pub const MAX_SELECTION_TEXT_CHARS: usize = 200;
/// Longest HTML outline, in characters.
pub const MAX_SELECTION_HTML_CHARS: usize = 500;
/// Longest computed-style value, in characters.
pub const MAX_SELECTION_STYLE_VALUE_CHARS: usize = 120;
/// Bound on the whole message as compact JSON, in UTF-8 bytes.
pub const MAX_SELECTION_MESSAGE_BYTES: usize = 4096;
/// Largest absolute coordinate or size (CSS pixels) a box or screen field may carry.
pub const MAX_SELECTION_COORDINATE: f64 = 10_000_000.0;
/// Largest device pixel ratio accepted.
pub const MAX_SELECTION_DEVICE_PIXEL_RATIO: f64 = 16.0;

/// The computed-style properties a selection summarises, as `getComputedStyle` names them.
pub const SELECTION_STYLE_PROPERTIES: [&str; 10] = [
    "color",
    "backgroundColor",
    "fontFamily",
    "fontSize",
    "fontWeight",
    "margin",
    "padding",
    "display",
    "width",
    "height",
];

/// A validated Design Mode selection. Page content (the text excerpt and HTML outline) sits
/// under `source`, a key every audit redaction policy hides, so a selection carried as call
/// metadata never shows raw page text in a trace or diagnostic.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PreviewSelection {
    /// The preview revision the element was picked in.
    pub revision: u64,
    /// Stable CSS selector: `#id` when the id is unique, else a `tag:nth-of-type(n)` path.
    pub selector: String,
    /// Tag name.
    pub tag: String,
    /// Element id, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Class names (at most [`MAX_SELECTION_CLASSES`]).
    pub classes: Vec<String>,
    /// Page content: text excerpt and HTML outline.
    pub source: SelectionSource,
    /// Computed-style summary keyed by [`SELECTION_STYLE_PROPERTIES`].
    pub styles: Map<String, Value>,
    /// Bounding box in viewport CSS pixels.
    #[serde(rename = "box")]
    pub rect: SelectionBox,
    /// Viewport, scroll and pixel ratio when the element was picked.
    pub screen: ScreenState,
}

/// The page content of a selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectionSource {
    /// Whitespace-collapsed text excerpt.
    pub text: String,
    /// Whitespace-collapsed outer HTML, cut to the bound.
    pub html: String,
}

/// A bounding box in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SelectionBox {
    /// Left edge relative to the viewport.
    pub x: f64,
    /// Top edge relative to the viewport.
    pub y: f64,
    /// Width (≥ 0).
    pub width: f64,
    /// Height (≥ 0).
    pub height: f64,
}

/// The preview's screen state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenState {
    /// Viewport width (≥ 0).
    pub viewport_width: f64,
    /// Viewport height (≥ 0).
    pub viewport_height: f64,
    /// Horizontal scroll offset.
    pub scroll_x: f64,
    /// Vertical scroll offset.
    pub scroll_y: f64,
    /// Device pixel ratio (> 0).
    pub device_pixel_ratio: f64,
}

/// Why a selection message was refused; its code is [`PREVIEW_SELECTION_INVALID`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectionError {
    /// The offending field (`selector`, `source.text`, `message`, ...).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl SelectionError {
    fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// The stable error code.
    pub fn code(&self) -> &'static str {
        PREVIEW_SELECTION_INVALID
    }
}

/// Accepts a posted selection message: `type` must be [`PREVIEW_SELECTION_MESSAGE`] and every
/// field within its bound (see [`PreviewSelection::from_value`]).
pub fn parse_selection_message(value: &Value) -> Result<PreviewSelection, SelectionError> {
    match value.get("type").and_then(Value::as_str) {
        Some(PREVIEW_SELECTION_MESSAGE) => PreviewSelection::from_value(value),
        _ => Err(SelectionError::new(
            "type",
            format!("type must be \"{PREVIEW_SELECTION_MESSAGE}\"."),
        )),
    }
}

impl PreviewSelection {
    /// Validates a selection (a posted message, or one carried as run metadata; an optional
    /// `type` key is ignored). Values over a bound are refused, not cut, so a caller cannot
    /// smuggle more than the bridge would send. The selector may only use the characters the
    /// bridge emits (`A-Z a-z 0-9 _ - # : ( ) > .` and spaces), so it is safe to write into a
    /// stylesheet as a rule prelude.
    pub fn from_value(value: &Value) -> Result<Self, SelectionError> {
        let bytes = serde_json::to_vec(value).map_or(usize::MAX, |bytes| bytes.len());
        if bytes > MAX_SELECTION_MESSAGE_BYTES {
            return Err(SelectionError::new(
                "message",
                format!(
                    "The selection is {bytes} bytes; at most {MAX_SELECTION_MESSAGE_BYTES} are accepted."
                ),
            ));
        }
        let object = value
            .as_object()
            .ok_or_else(|| SelectionError::new("message", "The selection must be an object."))?;
        known_keys(
            object,
            "message",
            &[
                "type", "revision", "selector", "tag", "id", "classes", "source", "styles", "box",
                "screen",
            ],
        )?;
        let id = optional_text(object, "id", MAX_SELECTION_ID_CHARS)?;
        Ok(Self {
            revision: revision(object.get("revision"))?,
            selector: selector(object.get("selector"))?,
            tag: tag(object.get("tag"))?,
            id: id.filter(|id| !id.is_empty()),
            classes: classes(object.get("classes"))?,
            source: source(object.get("source"))?,
            styles: styles(object.get("styles"))?,
            rect: rect(object.get("box"))?,
            screen: screen(object.get("screen"))?,
        })
    }

    /// The selection as run metadata (`metadata.selection`); page content stays under `source`.
    pub fn to_metadata(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A computed-style value (`color`, `fontSize`, ...), empty when absent.
    pub fn style(&self, property: &str) -> &str {
        self.styles
            .get(property)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

fn known_keys(
    object: &Map<String, Value>,
    field: &str,
    known: &[&str],
) -> Result<(), SelectionError> {
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(SelectionError::new(
            field,
            format!(
                "Unknown selection field \"{}\".",
                key.chars().take(40).collect::<String>()
            ),
        )),
        None => Ok(()),
    }
}

fn revision(value: Option<&Value>) -> Result<u64, SelectionError> {
    let error = || SelectionError::new("revision", "revision must be a safe integer ≥ 0.");
    let value = value.ok_or_else(error)?;
    let revision = value
        .as_u64()
        .or_else(|| {
            let float = value.as_f64()?;
            (float.fract() == 0.0 && float >= 0.0).then_some(float as u64)
        })
        .ok_or_else(error)?;
    if revision > MAX_BRIDGE_REVISION {
        return Err(error());
    }
    Ok(revision)
}

fn bounded_text(value: Option<&Value>, field: &str, max: usize) -> Result<String, SelectionError> {
    let text = value
        .and_then(Value::as_str)
        .ok_or_else(|| SelectionError::new(field, format!("{field} must be a string.")))?;
    if text.chars().count() > max {
        return Err(SelectionError::new(
            field,
            format!("{field} is longer than {max} characters."),
        ));
    }
    Ok(text.to_owned())
}

fn optional_text(
    object: &Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Option<String>, SelectionError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        value => bounded_text(value, field, max).map(Some),
    }
}

fn selector(value: Option<&Value>) -> Result<String, SelectionError> {
    let selector = bounded_text(value, "selector", MAX_SELECTION_SELECTOR_CHARS)?;
    let allowed = |c: char| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | '-' | '#' | ':' | '(' | ')' | '>' | '.' | ' ')
    };
    if selector.trim().is_empty() || !selector.chars().all(allowed) {
        return Err(SelectionError::new(
            "selector",
            "selector must be a non-empty #id or tag:nth-of-type path.",
        ));
    }
    Ok(selector.trim().to_owned())
}

fn tag(value: Option<&Value>) -> Result<String, SelectionError> {
    let tag = bounded_text(value, "tag", MAX_SELECTION_TAG_CHARS)?;
    let mut chars = tag.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !valid {
        return Err(SelectionError::new("tag", "tag must be an element name."));
    }
    Ok(tag)
}

fn classes(value: Option<&Value>) -> Result<Vec<String>, SelectionError> {
    let items = match value {
        None => return Ok(Vec::new()),
        Some(value) => value
            .as_array()
            .ok_or_else(|| SelectionError::new("classes", "classes must be an array."))?,
    };
    if items.len() > MAX_SELECTION_CLASSES {
        return Err(SelectionError::new(
            "classes",
            format!("At most {MAX_SELECTION_CLASSES} classes are accepted."),
        ));
    }
    items
        .iter()
        .map(|item| {
            let class = bounded_text(Some(item), "classes", MAX_SELECTION_CLASS_CHARS)?;
            if class.is_empty() || class.chars().any(char::is_whitespace) {
                return Err(SelectionError::new(
                    "classes",
                    "A class must be a non-empty name without whitespace.",
                ));
            }
            Ok(class)
        })
        .collect()
}

fn object<'a>(
    value: Option<&'a Value>,
    field: &str,
) -> Result<&'a Map<String, Value>, SelectionError> {
    value
        .and_then(Value::as_object)
        .ok_or_else(|| SelectionError::new(field, format!("{field} must be an object.")))
}

fn source(value: Option<&Value>) -> Result<SelectionSource, SelectionError> {
    let source = object(value, "source")?;
    known_keys(source, "source", &["text", "html"])?;
    Ok(SelectionSource {
        text: bounded_text(source.get("text"), "source.text", MAX_SELECTION_TEXT_CHARS)?,
        html: bounded_text(source.get("html"), "source.html", MAX_SELECTION_HTML_CHARS)?,
    })
}

fn styles(value: Option<&Value>) -> Result<Map<String, Value>, SelectionError> {
    let styles = object(value, "styles")?;
    known_keys(styles, "styles", &SELECTION_STYLE_PROPERTIES)?;
    let mut kept = Map::new();
    for property in SELECTION_STYLE_PROPERTIES {
        let field = format!("styles.{property}");
        let text = bounded_text(
            styles.get(property),
            &field,
            MAX_SELECTION_STYLE_VALUE_CHARS,
        )?;
        kept.insert(property.to_owned(), json!(text));
    }
    Ok(kept)
}

fn number(
    map: &Map<String, Value>,
    parent: &str,
    key: &str,
    min: f64,
    max: f64,
) -> Result<f64, SelectionError> {
    let field = format!("{parent}.{key}");
    let value = map
        .get(key)
        .and_then(Value::as_f64)
        .filter(|value| value.is_finite() && (min..=max).contains(value))
        .ok_or_else(|| {
            SelectionError::new(
                &field,
                format!("{field} must be a number from {min} to {max}."),
            )
        })?;
    Ok(value)
}

fn rect(value: Option<&Value>) -> Result<SelectionBox, SelectionError> {
    let map = object(value, "box")?;
    known_keys(map, "box", &["x", "y", "width", "height"])?;
    let limit = MAX_SELECTION_COORDINATE;
    Ok(SelectionBox {
        x: number(map, "box", "x", -limit, limit)?,
        y: number(map, "box", "y", -limit, limit)?,
        width: number(map, "box", "width", 0.0, limit)?,
        height: number(map, "box", "height", 0.0, limit)?,
    })
}

fn screen(value: Option<&Value>) -> Result<ScreenState, SelectionError> {
    let map = object(value, "screen")?;
    known_keys(
        map,
        "screen",
        &[
            "viewportWidth",
            "viewportHeight",
            "scrollX",
            "scrollY",
            "devicePixelRatio",
        ],
    )?;
    let limit = MAX_SELECTION_COORDINATE;
    let device_pixel_ratio = number(
        map,
        "screen",
        "devicePixelRatio",
        0.0,
        MAX_SELECTION_DEVICE_PIXEL_RATIO,
    )?;
    if device_pixel_ratio == 0.0 {
        return Err(SelectionError::new(
            "screen.devicePixelRatio",
            "screen.devicePixelRatio must be greater than 0.",
        ));
    }
    Ok(ScreenState {
        viewport_width: number(map, "screen", "viewportWidth", 0.0, limit)?,
        viewport_height: number(map, "screen", "viewportHeight", 0.0, limit)?,
        scroll_x: number(map, "screen", "scrollX", -limit, limit)?,
        scroll_y: number(map, "screen", "scrollY", -limit, limit)?,
        device_pixel_ratio,
    })
}

/// The limits the script enforces, as a JSON object literal.
fn script_limits() -> String {
    json!({
        "selector": MAX_SELECTION_SELECTOR_CHARS,
        "tag": MAX_SELECTION_TAG_CHARS,
        "id": MAX_SELECTION_ID_CHARS,
        "classes": MAX_SELECTION_CLASSES,
        "className": MAX_SELECTION_CLASS_CHARS,
        "text": MAX_SELECTION_TEXT_CHARS,
        "html": MAX_SELECTION_HTML_CHARS,
        "style": MAX_SELECTION_STYLE_VALUE_CHARS,
        // A margin below the host's bound: number formatting may differ by a few bytes.
        "bytes": MAX_SELECTION_MESSAGE_BYTES - 64,
        "styles": SELECTION_STYLE_PROPERTIES,
    })
    .to_string()
}

/// The Design Mode part of the bridge. It runs inside the bridge's function, which defines
/// `revision`, `parentOrigin` and `send(message)`.
pub(crate) fn design_script() -> String {
    format!(
        "var L={limits};var SET='{DESIGN_MODE_MESSAGE}',PICK='{PREVIEW_SELECTION_MESSAGE}',EXIT='{PREVIEW_DESIGN_EXIT_MESSAGE}';{DESIGN_JS}",
        limits = script_limits()
    )
}

/// Design Mode, dormant until the parent turns it on. Plain ES5 so it runs in every document.
const DESIGN_JS: &str = r#"var design={active:false,hover:null,mark:null,current:null,chosen:null,cursor:''};
function clip(value,max){var text=String(value==null?'':value);if(text.length>max){text=text.slice(0,Math.max(0,max));if(/[\ud800-\udbff]$/.test(text))text=text.slice(0,-1)}return text}
function squash(value,max){return clip(String(value==null?'':value).replace(/\s+/g,' ').trim(),max)}
function frame(color,fill){var node=document.createElement('div');node.setAttribute('data-context-action-design','');var s=node.style;s.position='fixed';s.pointerEvents='none';s.zIndex='2147483647';s.boxSizing='border-box';s.margin='0';s.padding='0';s.border='2px solid '+color;s.background=fill;s.display='none';return node}
function place(node,target){if(!node)return;if(!target||!target.isConnected){node.style.display='none';return}var r=target.getBoundingClientRect(),s=node.style;s.left=r.left+'px';s.top=r.top+'px';s.width=r.width+'px';s.height=r.height+'px';s.display='block'}
function pickable(target){return !!target&&target.nodeType===1&&target!==document.documentElement&&!target.hasAttribute('data-context-action-design')}
function ident(text){return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(text)}
function uniqueId(node){var id=node.id;if(!id||id.length>L.id||!ident(id))return false;try{return document.querySelectorAll('#'+id).length===1}catch(ignored){return false}}
function selectorOf(node){var parts=[],current=node;while(current&&current.nodeType===1){if(uniqueId(current)){parts.unshift('#'+current.id);break}var tag=current.localName;if(!/^[A-Za-z][A-Za-z0-9-]*$/.test(tag))return '';if(current===document.documentElement||current===document.body){parts.unshift(tag);break}var index=1,sibling=current;while((sibling=sibling.previousElementSibling)){if(sibling.localName===tag)index++}parts.unshift(tag+':nth-of-type('+index+')');current=current.parentElement}
while(parts.length>1&&parts.join(' > ').length>L.selector)parts.shift();var selector=parts.join(' > ');return selector.length>L.selector?'':selector}
function round(value){value=Number(value);return isFinite(value)?Math.round(value*100)/100:0}
function describe(node){var computed=window.getComputedStyle(node),styles={};for(var i=0;i<L.styles.length;i++){styles[L.styles[i]]=clip(computed[L.styles[i]],L.style)}
var r=node.getBoundingClientRect(),classes=[];for(var j=0;j<node.classList.length&&classes.length<L.classes;j++)classes.push(clip(node.classList[j],L.className));
return {type:PICK,selector:selectorOf(node),tag:clip(node.localName,L.tag),id:clip(node.id,L.id),classes:classes,source:{text:squash(node.innerText||node.textContent,L.text),html:squash(node.outerHTML,L.html)},styles:styles,
box:{x:round(r.left),y:round(r.top),width:Math.max(0,round(r.width)),height:Math.max(0,round(r.height))},
screen:{viewportWidth:Math.max(0,round(window.innerWidth)),viewportHeight:Math.max(0,round(window.innerHeight)),scrollX:round(window.scrollX),scrollY:round(window.scrollY),devicePixelRatio:Math.min(16,window.devicePixelRatio||1)}}}
function size(message){var text=JSON.stringify(message);return window.TextEncoder?new TextEncoder().encode(text).length:unescape(encodeURIComponent(text)).length}
function fit(message){message.revision=revision;var guard=0;while(size(message)>L.bytes&&guard++<64){var source=message.source;if(source.html){source.html=clip(source.html,Math.floor(source.html.length/2));continue}if(source.text){source.text=clip(source.text,Math.floor(source.text.length/2));continue}if(message.classes.length){message.classes=[];continue}if(message.id){message.id='';continue}for(var key in message.styles)message.styles[key]=clip(message.styles[key],24)}return message}
function swallow(event){if(!design.active)return;event.preventDefault();event.stopPropagation();event.stopImmediatePropagation()}
function hover(event){if(!design.active)return;var target=event.target;if(!pickable(target))return;design.current=target;place(design.hover,target)}
function pick(event){if(!design.active)return;swallow(event);var target=event.target;if(!pickable(target))return;var message=describe(target);if(!message.selector)return;design.chosen=target;place(design.mark,target);send(fit(message))}
function follow(){if(!design.active)return;place(design.hover,design.current);place(design.mark,design.chosen)}
function setActive(on){if(on===design.active)return;design.active=on;var root=document.documentElement;if(on){if(!design.hover){design.hover=frame('#3b82f6','rgba(59,130,246,.08)');design.mark=frame('#ec4899','rgba(236,72,153,.10)')}root.appendChild(design.hover);root.appendChild(design.mark);design.cursor=root.style.cursor;root.style.cursor='crosshair'}else{if(design.hover){design.hover.remove();design.mark.remove()}root.style.cursor=design.cursor;design.current=null;design.chosen=null}}
function key(event){if(!design.active||event.key!=='Escape')return;swallow(event);setActive(false);send({type:EXIT})}
function remark(selector){if(!design.active||typeof selector!=='string'||!selector)return;try{var node=document.querySelector(selector);if(pickable(node)){design.chosen=node;place(design.mark,node)}}catch(ignored){}}
window.addEventListener('message',function(event){var data=event.data;if(event.source!==window.parent||(parentOrigin!=='*'&&event.origin!==parentOrigin)||!data||data.type!==SET||data.revision!==revision)return;setActive(data.active===true);remark(data.selector)});
var blocked=['mousedown','mouseup','pointerdown','pointerup','dblclick','auxclick','contextmenu','submit','touchstart','touchend'];for(var b=0;b<blocked.length;b++)window.addEventListener(blocked[b],swallow,true);
window.addEventListener('click',pick,true);window.addEventListener('mouseover',hover,true);window.addEventListener('mousemove',hover,true);window.addEventListener('keydown',key,true);window.addEventListener('scroll',follow,true);window.addEventListener('resize',follow);"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid message; `pad` characters of `x` go into the `display` style value.
    fn message() -> Value {
        json!({
            "type": PREVIEW_SELECTION_MESSAGE,
            "revision": 7,
            "selector": "#hero-title",
            "tag": "h1",
            "id": "hero-title",
            "classes": ["title", "big"],
            "source": {"text": "Ship a page", "html": "<h1 id=\"hero-title\">Ship a page</h1>"},
            "styles": {
                "color": "rgb(31, 35, 48)", "backgroundColor": "rgba(0, 0, 0, 0)",
                "fontFamily": "system-ui", "fontSize": "40px", "fontWeight": "700",
                "margin": "0px 0px 12px", "padding": "0px", "display": "block",
                "width": "600px", "height": "44px"
            },
            "box": {"x": 32, "y": 80.5, "width": 600, "height": 44},
            "screen": {"viewportWidth": 800, "viewportHeight": 600, "scrollX": 0, "scrollY": 12.5, "devicePixelRatio": 2}
        })
    }

    fn with(path: &[&str], value: Value) -> Value {
        let mut message = message();
        let mut node = &mut message;
        for key in &path[..path.len() - 1] {
            node = node.get_mut(*key).unwrap();
        }
        node[path[path.len() - 1]] = value;
        message
    }

    fn refused(message: &Value) -> String {
        let error = parse_selection_message(message).expect_err("refused");
        assert_eq!(error.code(), PREVIEW_SELECTION_INVALID);
        error.field
    }

    #[test]
    fn accepts_a_bridge_selection_and_keeps_page_content_under_source() {
        let selection = parse_selection_message(&message()).unwrap();
        assert_eq!(selection.revision, 7);
        assert_eq!(selection.selector, "#hero-title");
        assert_eq!(selection.id.as_deref(), Some("hero-title"));
        assert_eq!(selection.style("fontSize"), "40px");
        assert_eq!(selection.rect.y, 80.5);
        assert_eq!(selection.screen.device_pixel_ratio, 2.0);
        let metadata = selection.to_metadata();
        assert_eq!(metadata["source"]["text"], "Ship a page");
        assert!(metadata.get("type").is_none() && metadata.get("text").is_none());
        assert_eq!(metadata["box"]["width"], 600.0);
        // The metadata form is itself a valid selection (runs validate it again).
        assert_eq!(PreviewSelection::from_value(&metadata).unwrap(), selection);
        // An empty id is no id.
        let anonymous = parse_selection_message(&with(&["id"], json!(""))).unwrap();
        assert_eq!(anonymous.id, None);
    }

    #[test]
    fn text_bounds_hold_at_their_edges() {
        let cases: [(&[&str], usize); 7] = [
            (&["selector"], MAX_SELECTION_SELECTOR_CHARS),
            (&["tag"], MAX_SELECTION_TAG_CHARS),
            (&["id"], MAX_SELECTION_ID_CHARS),
            (&["source", "text"], MAX_SELECTION_TEXT_CHARS),
            (&["source", "html"], MAX_SELECTION_HTML_CHARS),
            (&["styles", "fontFamily"], MAX_SELECTION_STYLE_VALUE_CHARS),
            (&["classes"], MAX_SELECTION_CLASSES),
        ];
        for (path, max) in cases {
            let (at, over) = if path == ["classes"] {
                (json!(vec!["c"; max]), json!(vec!["c"; max + 1]))
            } else {
                // Multi-byte characters count once (characters, not bytes).
                let unit = if path == ["selector"] || path == ["tag"] {
                    "a"
                } else {
                    "é"
                };
                (json!(unit.repeat(max)), json!(unit.repeat(max + 1)))
            };
            assert!(
                parse_selection_message(&with(path, at)).is_ok(),
                "{path:?} at {max}"
            );
            assert_eq!(
                refused(&with(path, over)),
                path.join("."),
                "{path:?} over {max}"
            );
        }
        let class_at = with(&["classes"], json!(["c".repeat(MAX_SELECTION_CLASS_CHARS)]));
        assert!(parse_selection_message(&class_at).is_ok());
        let class_over = with(
            &["classes"],
            json!(["c".repeat(MAX_SELECTION_CLASS_CHARS + 1)]),
        );
        assert_eq!(refused(&class_over), "classes");
    }

    #[test]
    fn the_whole_message_is_bounded_at_its_edge() {
        // Grow the HTML outline with 3-byte characters until the message is exactly at the
        // byte bound; one byte more is refused even though every field is within its own bound.
        let mut message = message();
        message["source"]["html"] = json!("");
        message["styles"]["fontFamily"] = json!("f".repeat(MAX_SELECTION_STYLE_VALUE_CHARS));
        message["selector"] = json!("b".repeat(MAX_SELECTION_SELECTOR_CHARS));
        message["source"]["text"] = json!("€".repeat(MAX_SELECTION_TEXT_CHARS));
        message["classes"] = json!(vec![
            "ü".repeat(MAX_SELECTION_CLASS_CHARS);
            MAX_SELECTION_CLASSES
        ]);
        let base = serde_json::to_vec(&message).unwrap().len();
        let missing = MAX_SELECTION_MESSAGE_BYTES - base;
        assert!(
            missing / 3 + 2 <= MAX_SELECTION_HTML_CHARS,
            "fill of {missing} bytes fits the html bound"
        );
        message["source"]["html"] = json!(format!(
            "{}{}",
            "€".repeat(missing / 3),
            "h".repeat(missing % 3)
        ));
        assert_eq!(
            serde_json::to_vec(&message).unwrap().len(),
            MAX_SELECTION_MESSAGE_BYTES
        );
        assert!(parse_selection_message(&message).is_ok());
        message["source"]["html"] =
            json!(format!("{}h", message["source"]["html"].as_str().unwrap()));
        assert_eq!(refused(&message), "message");
    }

    #[test]
    fn numbers_are_bounded_and_finite() {
        let limit = MAX_SELECTION_COORDINATE;
        assert!(parse_selection_message(&with(&["box", "x"], json!(-limit))).is_ok());
        assert_eq!(refused(&with(&["box", "x"], json!(limit + 1.0))), "box.x");
        assert!(parse_selection_message(&with(&["box", "width"], json!(0))).is_ok());
        assert_eq!(refused(&with(&["box", "width"], json!(-0.5))), "box.width");
        assert_eq!(
            refused(&with(&["box", "height"], json!("10"))),
            "box.height"
        );
        let dpr = ["screen", "devicePixelRatio"];
        assert!(
            parse_selection_message(&with(&dpr, json!(MAX_SELECTION_DEVICE_PIXEL_RATIO))).is_ok()
        );
        assert_eq!(
            refused(&with(&dpr, json!(16.01))),
            "screen.devicePixelRatio"
        );
        assert_eq!(refused(&with(&dpr, json!(0))), "screen.devicePixelRatio");
        assert_eq!(
            refused(&with(&["screen", "viewportWidth"], json!(-1))),
            "screen.viewportWidth"
        );
        assert_eq!(refused(&with(&["revision"], json!(-1))), "revision");
        assert_eq!(
            refused(&with(&["revision"], json!(MAX_BRIDGE_REVISION + 1))),
            "revision"
        );
    }

    #[test]
    fn selectors_that_could_escape_a_css_rule_are_refused() {
        assert!(
            parse_selection_message(&with(
                &["selector"],
                json!("body > main:nth-of-type(1) > article:nth-of-type(2)")
            ))
            .is_ok()
        );
        for bad in [
            "",
            "   ",
            "a { color: red }",
            "#x;",
            "a/*",
            "a, b",
            "a[href]",
            "#a\\31",
            "a\nb",
        ] {
            assert_eq!(
                refused(&with(&["selector"], json!(bad))),
                "selector",
                "{bad:?}"
            );
        }
        for bad in ["", "1h", "h 1", "<h1>"] {
            assert_eq!(refused(&with(&["tag"], json!(bad))), "tag", "{bad:?}");
        }
        assert_eq!(
            refused(&with(&["classes"], json!(["two words"]))),
            "classes"
        );
        assert_eq!(refused(&with(&["classes"], json!([""]))), "classes");
    }

    #[test]
    fn shape_errors_are_coded() {
        assert_eq!(
            refused(&with(&["type"], json!("context-action.preview.ready"))),
            "type"
        );
        assert_eq!(refused(&json!("text")), "type");
        let mut extra = message();
        extra["script"] = json!("alert(1)");
        assert_eq!(refused(&extra), "message");
        assert_eq!(refused(&with(&["styles", "zIndex"], json!("1"))), "styles");
        let mut missing = message();
        missing["styles"].as_object_mut().unwrap().remove("color");
        assert_eq!(refused(&missing), "styles.color");
        assert_eq!(refused(&with(&["source"], json!("x"))), "source");
        assert_eq!(refused(&with(&["box"], json!(null))), "box");
        // Without a type, a metadata-form selection still validates.
        let mut bare = message();
        bare.as_object_mut().unwrap().remove("type");
        assert!(PreviewSelection::from_value(&bare).is_ok());
        assert_eq!(parse_selection_message(&bare).unwrap_err().field, "type");
    }

    #[test]
    fn only_preview_documents_carry_design_mode_never_an_export() {
        use crate::file::WorkspaceFile;
        use crate::preview::{PreviewOptions, compile_preview, export_standalone_html};
        let files = [WorkspaceFile::text("index.html", "<h1 id=\"t\">Hi</h1>")];
        let preview = compile_preview(&files, &PreviewOptions::preview(Some(3), "/a/"));
        assert!(preview.html.contains(PREVIEW_SELECTION_MESSAGE));
        let export = export_standalone_html(&files);
        for marker in [
            PREVIEW_SELECTION_MESSAGE,
            DESIGN_MODE_MESSAGE,
            "data-context-action-design",
        ] {
            assert!(!export.html.contains(marker), "export carries {marker}");
        }
        let no_bridge = compile_preview(&files, &PreviewOptions::preview(None, "/a/"));
        assert!(!no_bridge.html.contains(DESIGN_MODE_MESSAGE));
    }

    #[test]
    fn the_script_is_dormant_and_carries_the_host_bounds() {
        let script = design_script();
        assert!(script.contains("var design={active:false"));
        assert!(script.contains(DESIGN_MODE_MESSAGE));
        assert!(script.contains(PREVIEW_SELECTION_MESSAGE));
        assert!(script.contains(PREVIEW_DESIGN_EXIT_MESSAGE));
        assert!(script.contains(&format!("\"bytes\":{}", MAX_SELECTION_MESSAGE_BYTES - 64)));
        assert!(script.contains("event.source!==window.parent"));
        assert!(
            script.contains("event.origin!==parentOrigin"),
            "other parents are ignored"
        );
        assert!(!script.contains("</script"));
    }
}
