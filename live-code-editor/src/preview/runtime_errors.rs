//! Runtime errors a running preview reports: uncaught errors, unhandled rejections and
//! `console.error` calls, each posted to the parent as a `runtimeError` bridge message with
//! the revision and, when the error comes from a workspace module, its position in the file the
//! person wrote (a Blob URL is traced back to its workspace path, and a transformed module's
//! inline source map back to the TypeScript or JSX line). The bridge bounds what it posts
//! (count per document, rate, length), and a host checks every field again on arrival.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::protocol::{
    MAX_BRIDGE_ERROR_MESSAGE_CHARS, MAX_BRIDGE_REVISION, PREVIEW_RUNTIME_ERROR_MESSAGE,
};
use super::resolve::WORKSPACE_MODULE_SPECIFIER_PREFIX;

/// Most runtime errors one preview document posts; later ones are only counted.
pub const MAX_RUNTIME_ERRORS_PER_DOCUMENT: u32 = 20;
/// Most runtime errors a document posts per second; the rest are counted in the next one's
/// `dropped`.
pub const MAX_RUNTIME_ERRORS_PER_SECOND: u32 = 5;
/// Longest workspace path a reported position may name.
pub const MAX_RUNTIME_ERROR_PATH_CHARS: usize = 512;

/// What raised a runtime error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum RuntimeErrorKind {
    /// An uncaught exception (`error` event).
    Error,
    /// An unhandled promise rejection.
    Rejection,
    /// A `console.error` call.
    Console,
}

/// Where in the workspace a runtime error happened (1-based line and column of the file as
/// written, after source maps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct RuntimeErrorSource {
    /// The workspace path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// One runtime error of a preview revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PreviewRuntimeError {
    /// The document revision it happened in.
    pub revision: u64,
    /// What raised it.
    pub kind: RuntimeErrorKind,
    /// The message (at most [`MAX_BRIDGE_ERROR_MESSAGE_CHARS`] characters).
    pub message: String,
    /// Its position in a workspace file, when the stack names one.
    pub source: Option<RuntimeErrorSource>,
    /// Errors the document left out just before this one (over the rate).
    pub dropped: u32,
}

impl PreviewRuntimeError {
    /// `path:line:col: message`, or the message alone without a position.
    pub fn describe(&self) -> String {
        match &self.source {
            Some(source) => format!(
                "{}:{}:{}: {}",
                source.path, source.line, source.column, self.message
            ),
            None => self.message.clone(),
        }
    }
}

/// Accepts a posted runtime error message only if every field has its shape and bound:
/// `revision` a safe integer, `kind` known, `message` a string of at most
/// [`MAX_BRIDGE_ERROR_MESSAGE_CHARS`] characters, `source` absent/null or a path of at most
/// [`MAX_RUNTIME_ERROR_PATH_CHARS`] characters with positive line and column, `dropped` absent
/// or a count.
pub fn parse_runtime_error_message(value: &Value) -> Option<PreviewRuntimeError> {
    let object = value.as_object()?;
    if object.get("type")?.as_str()? != PREVIEW_RUNTIME_ERROR_MESSAGE {
        return None;
    }
    let revision = object.get("revision")?.as_u64()?;
    let kind = serde_json::from_value(object.get("kind")?.clone()).ok()?;
    let message = object.get("message")?.as_str()?;
    if revision > MAX_BRIDGE_REVISION || message.chars().count() > MAX_BRIDGE_ERROR_MESSAGE_CHARS {
        return None;
    }
    let source = match object.get("source") {
        None | Some(Value::Null) => None,
        Some(source) => Some(parse_source(source)?),
    };
    let dropped = match object.get("dropped") {
        None => 0,
        Some(count) => u32::try_from(count.as_u64()?).ok()?,
    };
    Some(PreviewRuntimeError {
        revision,
        kind,
        message: message.to_owned(),
        source,
        dropped,
    })
}

fn parse_source(value: &Value) -> Option<RuntimeErrorSource> {
    let path = value.get("path")?.as_str()?;
    let position = |name| {
        u32::try_from(value.get(name)?.as_u64()?)
            .ok()
            .filter(|n| *n > 0)
    };
    let (line, column) = (position("line")?, position("column")?);
    let bounded = !path.is_empty() && path.chars().count() <= MAX_RUNTIME_ERROR_PATH_CHARS;
    bounded.then(|| RuntimeErrorSource {
        path: path.to_owned(),
        line,
        column,
    })
}

/// The bridge's runtime error capture (part of the bridge script; `send` and the module table
/// the bootstrap publishes are in scope). `where(url, line, column)` turns a Blob URL position
/// into the workspace position, through the module's inline source map when it has one.
pub(crate) fn capture_script() -> String {
    format!(
        "var RT='{PREVIEW_RUNTIME_ERROR_MESSAGE}',rtSent=0,rtDropped=0,rtSecond=0,rtInSecond=0;\
var B64='ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';\
function vlq(text){{var out=[],shift=0,value=0;for(var i=0;i<text.length;i++){{var digit=B64.indexOf(text[i]);if(digit<0)return out;value+=(digit&31)<<shift;if(digit&32){{shift+=5}}else{{out.push(value&1?-(value>>>1):value>>>1);value=0;shift=0}}}}return out}}\
function mapped(text,line,column){{var at=text.lastIndexOf('//# sourceMappingURL=data:application/json');if(at<0)return null;var map;try{{map=JSON.parse(atob(text.slice(text.indexOf(',',at)+1).trim()))}}catch(ignored){{return null}}\
var lines=String(map.mappings||'').split(';'),source=0,origLine=0,origColumn=0,best=null;\
for(var i=0;i<line&&i<lines.length;i++){{var generated=0,segments=lines[i].split(',');for(var j=0;j<segments.length;j++){{if(!segments[j])continue;var v=vlq(segments[j]);generated+=v[0]||0;if(v.length>=4){{source+=v[1];origLine+=v[2];origColumn+=v[3];if(i===line-1&&generated<=column-1)best=[origLine+1,origColumn+1]}}}}}}return best}}\
function where(url,line,column){{var modules=window.__contextActionModules;if(!modules||!url||!line)return null;\
for(var specifier in modules.urls){{if(modules.urls[specifier]!==url)continue;\
var path=specifier.slice({prefix_len}).split('/').map(decodeURIComponent).join('/').slice(0,{MAX_RUNTIME_ERROR_PATH_CHARS});\
var original=mapped(modules.sources[specifier],line,column||1);\
return{{path:path,line:original?original[0]:line,column:original?original[1]:(column||1)}}}}return null}}\
function fromStack(stack){{var found=/(blob:[^\\s)]+):(\\d+):(\\d+)/.exec(String(stack||''));return found?where(found[1],+found[2],+found[3]):null}}\
function at(source){{return source?' ('+source.path+':'+source.line+':'+source.column+')':''}}\
function runtimeError(kind,message,source){{var now=Date.now();if(now-rtSecond>=1000){{rtSecond=now;rtInSecond=0}}\
if(rtSent>={MAX_RUNTIME_ERRORS_PER_DOCUMENT}||rtInSecond>={MAX_RUNTIME_ERRORS_PER_SECOND}){{rtDropped++;return}}rtSent++;rtInSecond++;\
send({{type:RT,kind:kind,message:String(message||'').slice(0,{MAX_BRIDGE_ERROR_MESSAGE_CHARS}),source:source,dropped:rtDropped}});rtDropped=0}}\
var consoleError=console.error;console.error=function(){{try{{var parts=[];for(var i=0;i<arguments.length;i++){{var part=arguments[i];parts.push(part&&part.message?String(part.message):String(part))}}\
runtimeError('console',parts.join(' '),fromStack(arguments[0]&&arguments[0].stack)||fromStack(new Error().stack))}}catch(ignored){{}}return consoleError.apply(console,arguments)}};",
        prefix_len = WORKSPACE_MODULE_SPECIFIER_PREFIX.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(extra: Value) -> Value {
        let mut value = json!({"type": PREVIEW_RUNTIME_ERROR_MESSAGE, "revision": 4, "kind": "error", "message": "boom"});
        for (key, field) in extra.as_object().unwrap() {
            value[key] = field.clone();
        }
        value
    }

    #[test]
    fn accepts_each_kind_with_and_without_a_position() {
        let parsed = parse_runtime_error_message(&message(
            json!({"source": {"path": "src/App.tsx", "line": 12, "column": 5}, "dropped": 2}),
        ))
        .unwrap();
        assert_eq!(parsed.describe(), "src/App.tsx:12:5: boom");
        assert_eq!(parsed.dropped, 2);
        for kind in ["error", "rejection", "console"] {
            let parsed =
                parse_runtime_error_message(&message(json!({"kind": kind, "source": null})))
                    .unwrap();
            assert_eq!(parsed.source, None);
            assert_eq!(parsed.describe(), "boom");
        }
    }

    #[test]
    fn refuses_every_field_out_of_shape_or_bound() {
        let long = "x".repeat(MAX_BRIDGE_ERROR_MESSAGE_CHARS + 1);
        let long_path = "p".repeat(MAX_RUNTIME_ERROR_PATH_CHARS + 1);
        for extra in [
            json!({"type": "context-action.preview.error"}),
            json!({"revision": -1}),
            json!({"revision": MAX_BRIDGE_REVISION + 1}),
            json!({"kind": "warning"}),
            json!({"message": 5}),
            json!({"message": long}),
            json!({"source": {"path": "a.js", "line": 0, "column": 1}}),
            json!({"source": {"path": "", "line": 1, "column": 1}}),
            json!({"source": {"path": long_path, "line": 1, "column": 1}}),
            json!({"source": "a.js:1:1"}),
            json!({"dropped": -1}),
            json!({"dropped": u64::from(u32::MAX) + 1}),
        ] {
            assert_eq!(
                parse_runtime_error_message(&message(extra.clone())),
                None,
                "{extra}"
            );
        }
        let at_edge = "x".repeat(MAX_BRIDGE_ERROR_MESSAGE_CHARS);
        assert!(parse_runtime_error_message(&message(json!({"message": at_edge}))).is_some());
    }

    #[test]
    fn the_capture_script_carries_its_bounds() {
        let script = capture_script();
        assert!(script.contains(&format!("rtSent>={MAX_RUNTIME_ERRORS_PER_DOCUMENT}")));
        assert!(script.contains(&format!("rtInSecond>={MAX_RUNTIME_ERRORS_PER_SECOND}")));
        assert!(script.contains(&format!(".slice(0,{MAX_BRIDGE_ERROR_MESSAGE_CHARS})")));
        assert!(!script.contains("</script"));
    }
}
