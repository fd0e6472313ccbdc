//! The bridge protocol: the message `type`s and bounds shared by the host and the script the
//! bridge injects into a preview page (see [`super::bridge`], [`super::live`],
//! [`super::runtime_errors`] and [`super::selection`]). A leaf, so each part of the bridge
//! script can name the messages without depending on the others.

/// `type` of the message posted when the document finished loading without an error.
pub const PREVIEW_READY_MESSAGE: &str = "context-action.preview.ready";
/// `type` of the message posted on the first runtime error or unhandled rejection.
pub const PREVIEW_ERROR_MESSAGE: &str = "context-action.preview.error";
/// `type` of the message posted when Escape is pressed inside the preview (and Design Mode did
/// not take it): keyboard focus in the iframe hides the key from the parent, which uses this to
/// leave full screen.
pub const PREVIEW_ESCAPE_MESSAGE: &str = "context-action.preview.escape";
/// Error messages posted by the bridge are cut to this many characters.
pub const MAX_BRIDGE_ERROR_MESSAGE_CHARS: usize = 1_000;
/// The largest revision a bridge message can carry exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_BRIDGE_REVISION: u64 = (1 << 53) - 1;

/// `type` of the message posted for each runtime error of a preview document.
pub const PREVIEW_RUNTIME_ERROR_MESSAGE: &str = "context-action.preview.runtimeError";

/// `type` of the message the parent posts into the iframe with a newer revision's stylesheets:
/// `{type, revision: <shown>, next: <newer>, stylesheets: [<css>…]}`.
pub const PREVIEW_STYLESHEETS_MESSAGE: &str = "context-action.preview.stylesheets";

/// `type` of the message the parent posts into the iframe to turn Design Mode on or off.
pub const DESIGN_MODE_MESSAGE: &str = "context-action.design.set";
/// `type` of the selection message the bridge posts on a Design Mode click.
pub const PREVIEW_SELECTION_MESSAGE: &str = "context-action.preview.selection";
/// `type` of the message the bridge posts when Esc pressed inside the preview left Design Mode.
pub const PREVIEW_DESIGN_EXIT_MESSAGE: &str = "context-action.preview.designExit";
