//! The preview bridge: a small script injected first into a preview document that tells the
//! parent window whether the document revision loaded (`ready`) or failed (`error`, with the
//! workspace position when a module's stack names one), reports each runtime error (see
//! [`super::runtime_errors`]), and the parser the parent uses to accept those messages.

use serde::{Deserialize, Serialize};

use super::protocol::{
    MAX_BRIDGE_ERROR_MESSAGE_CHARS, MAX_BRIDGE_REVISION, PREVIEW_ERROR_MESSAGE,
    PREVIEW_ESCAPE_MESSAGE, PREVIEW_READY_MESSAGE,
};
use super::{live, runtime_errors, selection};

/// A message the bridge posts to its parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PreviewBridgeMessage {
    /// The revision loaded (`DOMContentLoaded`) and no error was reported before.
    #[serde(rename = "context-action.preview.ready")]
    Ready {
        /// The document revision.
        revision: u64,
    },
    /// The first runtime error or unhandled rejection of the revision.
    #[serde(rename = "context-action.preview.error")]
    Error {
        /// The document revision.
        revision: u64,
        /// The error message.
        message: String,
    },
}

impl PreviewBridgeMessage {
    /// The revision the message is about.
    pub fn revision(&self) -> u64 {
        match self {
            Self::Ready { revision } | Self::Error { revision, .. } => *revision,
        }
    }
}

/// Accepts a posted message only if it is a bridge message: `revision` a safe integer ≥ 0 and
/// `type` ready, or error with a string `message`. Anything else is `None`.
pub fn parse_bridge_message(value: &serde_json::Value) -> Option<PreviewBridgeMessage> {
    let object = value.as_object()?;
    let revision = object.get("revision")?;
    let revision = revision.as_u64().or_else(|| {
        let float = revision.as_f64()?;
        (float.fract() == 0.0 && float >= 0.0).then_some(float as u64)
    })?;
    if revision > MAX_BRIDGE_REVISION {
        return None;
    }
    match object.get("type")?.as_str()? {
        PREVIEW_READY_MESSAGE => Some(PreviewBridgeMessage::Ready { revision }),
        PREVIEW_ERROR_MESSAGE => {
            let message = object.get("message")?.as_str()?;
            Some(PreviewBridgeMessage::Error {
                revision,
                message: message.to_owned(),
            })
        }
        _ => None,
    }
}

/// The bridge script for `revision`. Served from a host, it posts only to a parent of the
/// document URL's own origin (a sandboxed document's own origin is opaque, its
/// `location.origin` is not), never to `'*'`; only a document without such an origin
/// (`srcdoc`, `file:`, `data:`), which no parent could match, posts to any. It posts `ready`
/// on `DOMContentLoaded` unless an error
/// was already reported; the first `error`/`unhandledrejection` posts `error` and suppresses
/// the later `ready`. Module scripts run before `DOMContentLoaded`, so their failures win. The
/// error listener captures, so a module script whose graph fails to load (an element `error`
/// event, e.g. an unresolvable bare specifier) counts too; failed images and media do not.
/// A newer revision's stylesheets posted by the parent are swapped in place (see
/// [`super::live`]), after which the bridge reports that revision.
/// The dormant Design Mode picker rides along (see [`super::selection`]); only preview
/// documents carry the bridge, so a standalone export never contains it.
pub(crate) fn bridge_script(revision: u64) -> String {
    let revision = revision.min(MAX_BRIDGE_REVISION);
    format!(
        "<script>(function(){{var revision={revision};{}",
        *BRIDGE_BODY
    )
}

/// Everything of the bridge after the revision: the same for every document, built once.
static BRIDGE_BODY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "var failed=false;\
var parentOrigin=location.origin&&location.origin!=='null'?location.origin:'*';\
function send(message){{message.revision=revision;try{{window.parent.postMessage(message,parentOrigin)}}catch(ignored){{}}}}\
function fail(message){{if(failed)return;failed=true;send({{type:'{PREVIEW_ERROR_MESSAGE}',message:String(message||'Preview runtime error').slice(0,{MAX_BRIDGE_ERROR_MESSAGE_CHARS})}})}}\
{capture}\
window.addEventListener('error',function(event){{var target=event.target;\
if(target&&target!==window&&target.tagName){{if(target.tagName==='SCRIPT'){{var failure='Script failed to load'+(target.src?': '+target.src:'');runtimeError('error',failure,null);fail(failure)}}return}}\
var message=event.message||'Preview runtime error',source=where(event.filename,event.lineno,event.colno)||fromStack(event.error&&event.error.stack);\
runtimeError('error',message,source);fail(message+at(source))}},true);\
window.addEventListener('unhandledrejection',function(event){{var reason=event.reason,message=reason&&reason.message?String(reason.message):String(reason||'Unhandled preview rejection'),source=fromStack(reason&&reason.stack);\
runtimeError('rejection',message,source);fail(message+at(source))}});\
window.addEventListener('DOMContentLoaded',function(){{if(!failed)send({{type:'{PREVIEW_READY_MESSAGE}'}})}});\
window.addEventListener('keydown',function(event){{if(event.key==='Escape'&&!event.defaultPrevented)send({{type:'{PREVIEW_ESCAPE_MESSAGE}'}})}});\
{swap}{design}}})();</script>",
        capture = runtime_errors::capture_script(),
        swap = live::stylesheet_swap_script(),
        design = selection::design_script()
    )
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_ready_and_error_messages() {
        assert_eq!(
            parse_bridge_message(&json!({"revision": 3, "type": PREVIEW_READY_MESSAGE})),
            Some(PreviewBridgeMessage::Ready { revision: 3 })
        );
        let error = parse_bridge_message(
            &json!({"revision": 0, "type": PREVIEW_ERROR_MESSAGE, "message": "boom"}),
        );
        assert_eq!(
            error,
            Some(PreviewBridgeMessage::Error {
                revision: 0,
                message: "boom".into()
            })
        );
        assert_eq!(error.unwrap().revision(), 0);
        assert_eq!(
            parse_bridge_message(&json!({"revision": 2.0, "type": PREVIEW_READY_MESSAGE}))
                .map(|m| m.revision()),
            Some(2)
        );
    }

    #[test]
    fn rejects_anything_else() {
        for value in [
            json!(null),
            json!({"type": PREVIEW_READY_MESSAGE}),
            json!({"revision": -1, "type": PREVIEW_READY_MESSAGE}),
            json!({"revision": 1.5, "type": PREVIEW_READY_MESSAGE}),
            json!({"revision": "1", "type": PREVIEW_READY_MESSAGE}),
            json!({"revision": MAX_BRIDGE_REVISION + 1, "type": PREVIEW_READY_MESSAGE}),
            json!({"revision": 1, "type": PREVIEW_ERROR_MESSAGE}),
            json!({"revision": 1, "type": PREVIEW_ERROR_MESSAGE, "message": 5}),
            json!({"revision": 1, "type": "other"}),
        ] {
            assert_eq!(parse_bridge_message(&value), None, "{value}");
        }
        assert!(
            parse_bridge_message(
                &json!({"revision": MAX_BRIDGE_REVISION, "type": PREVIEW_READY_MESSAGE})
            )
            .is_some()
        );
    }

    #[test]
    fn messages_serialize_in_the_posted_shape() {
        let value = serde_json::to_value(PreviewBridgeMessage::Error {
            revision: 4,
            message: "x".into(),
        })
        .unwrap();
        assert_eq!(
            value,
            json!({"type": PREVIEW_ERROR_MESSAGE, "revision": 4, "message": "x"})
        );
    }

    #[test]
    fn the_script_embeds_the_revision_and_both_message_types() {
        let script = bridge_script(42);
        assert!(script.starts_with("<script>") && script.ends_with("</script>"));
        assert!(script.contains("var revision=42;"));
        assert!(script.contains(PREVIEW_READY_MESSAGE) && script.contains(PREVIEW_ERROR_MESSAGE));
        assert!(
            script.contains(PREVIEW_ESCAPE_MESSAGE),
            "Escape is forwarded to the parent"
        );
        assert!(script.contains(super::super::protocol::PREVIEW_SELECTION_MESSAGE));
        assert_eq!(script.matches("</script>").count(), 1);
        assert!(script.contains("postMessage(message,parentOrigin)"));
        assert!(
            script.contains(
                "var parentOrigin=location.origin&&location.origin!=='null'?location.origin:'*';"
            ),
            "a served document posts to its own origin only"
        );
    }
}
