//! Large results the way MCP hosts need them: a result longer than a host should take in
//! one message becomes its first characters plus a `resource_link` to the whole text, which the
//! client reads with `resources/read` ([`ResultLinks`], [`McpToolServer::with_result_links`]),
//! instead of failing the call with `TOOL_OUTPUT_LIMIT_EXCEEDED` after it ran.
//!
//! The full text is kept as a record in the server's durable store (so any host sharing the
//! store serves it), bound to the principal that made the call (another principal gets
//! "resource not found") and readable for [`ResultLinks::with_ttl`]; the store's own retention
//! prunes it after that. Tools whose results a host can take whole are announced with
//! `_meta["anthropic/maxResultSizeChars"]` ([`McpToolServer::with_max_result_size_chars`]),
//! and their results are linked only past that size.
//!
//! [`McpToolServer::with_result_links`]: crate::McpToolServer::with_result_links
//! [`McpToolServer::with_max_result_size_chars`]: crate::McpToolServer::with_max_result_size_chars

use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, ReadResourceResult, Resource, ResourceContents};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tool_context::ToolNamePatterns;
use tool_durable_operations::{ClaimRequest, ClaimStatus, DurableOperationStore, OperationState};
use tool_protocol::{ToolCallResult, ToolContent, stringify_tool_content_block};

use crate::convert::mcp_result;

/// `_meta` key of a tool's `tools/list` entry telling hosts how many characters of its result
/// they may take whole.
pub const MAX_RESULT_SIZE_META_KEY: &str = "anthropic/maxResultSizeChars";
/// Prefix of the URIs of linked results.
pub const RESULT_URI_PREFIX: &str = "tool-context://results/";
/// Characters of a result sent inline unless configured.
pub const DEFAULT_INLINE_CHARS: usize = 25_000;
/// Largest result kept for reading, in UTF-8 bytes, unless configured: also the smallest
/// output budget of a call while links are on (a larger result fails as it would anyway).
pub const DEFAULT_MAX_STORED_BYTES: u64 = 4 * 1024 * 1024;
/// How long a linked result stays readable unless configured.
pub const DEFAULT_RESULT_TTL: Duration = Duration::from_secs(3600);

const KEY_PREFIX: &str = "tool-context-mcp/result-link/";
const FINGERPRINT_PREFIX: &str = "tool-context-mcp/result-link";

/// How large results are linked (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResultLinks {
    /// Characters sent inline; a longer result is cut there and linked.
    pub inline_chars: usize,
    /// Largest result kept, in UTF-8 bytes (the call's output budget is at least this).
    pub max_stored_bytes: u64,
    /// How long a linked result stays readable.
    pub ttl: Duration,
}

impl Default for ResultLinks {
    fn default() -> Self {
        Self {
            inline_chars: DEFAULT_INLINE_CHARS,
            max_stored_bytes: DEFAULT_MAX_STORED_BYTES,
            ttl: DEFAULT_RESULT_TTL,
        }
    }
}

impl ResultLinks {
    /// Links results longer than `inline_chars` characters (at least 1).
    pub fn new(inline_chars: usize) -> Self {
        Self {
            inline_chars: inline_chars.max(1),
            ..Self::default()
        }
    }

    /// Keeps results of up to `bytes` UTF-8 bytes.
    #[must_use]
    pub fn with_max_stored_bytes(mut self, bytes: u64) -> Self {
        self.max_stored_bytes = bytes.max(1);
        self
    }

    /// Keeps linked results readable for `ttl`.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
}

/// Per-tool sizes hosts may take whole, announced in `tools/list`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResultSizes(Vec<(ToolNamePatterns, u64)>);

impl ResultSizes {
    pub(crate) fn push(&mut self, tools: ToolNamePatterns, chars: u64) {
        self.0.push((tools, chars));
    }

    /// The announced size of `tool` (the first matching entry).
    pub(crate) fn of(&self, tool: &str) -> Option<u64> {
        self.0
            .iter()
            .find(|(tools, _)| tools.matches(tool))
            .map(|(_, chars)| *chars)
    }
}

/// Where a linked result is kept and who may read it.
pub(crate) struct LinkStore<'a> {
    pub(crate) store: &'a DurableOperationStore,
    pub(crate) owner: &'a str,
    pub(crate) host: &'a str,
}

/// `result` as sent: whole when it fits in `inline_chars`, else cut with a link to the
/// whole text (kept in `kept`, for as long as `settings` say). Errors and results that fit are
/// converted unchanged.
pub(crate) async fn link_if_large(
    result: ToolCallResult,
    tool: &str,
    inline_chars: usize,
    settings: &ResultLinks,
    kept: LinkStore<'_>,
) -> CallToolResult {
    if result.is_error() {
        return mcp_result(result);
    }
    let text = full_text(&result);
    let chars = text.chars().count();
    if chars <= inline_chars {
        return mcp_result(result);
    }
    let id = uuid::Uuid::new_v4().to_string();
    let uri = format!("{RESULT_URI_PREFIX}{id}");
    let stored = keep(&kept, &id, tool, &text).await;
    let structured = result
        .structured_content
        .clone()
        .filter(|value| value.to_string().chars().count() <= inline_chars);
    let head: String = text.chars().take(inline_chars).collect();
    let note = match &stored {
        Ok(()) => format!(
            "\n\n[Result truncated: {inline_chars} of {chars} characters shown. The whole result is the resource {uri} (resources/read), readable for {} s.]",
            settings.ttl.as_secs()
        ),
        Err(error) => format!(
            "\n\n[Result truncated: {inline_chars} of {chars} characters shown. The whole result could not be kept ({error}); the call itself completed.]"
        ),
    };
    let mut cut = result;
    cut.content = vec![ToolContent::text(head + &note)];
    cut.structured_content = structured;
    let mut converted = mcp_result(cut);
    if stored.is_ok() {
        let link = Resource::new(uri, format!("{tool} result"))
            .with_mime_type("text/plain")
            .with_description(format!("The whole result of {tool} ({chars} characters)."));
        let mut link = link;
        link.size = u64::try_from(text.len()).ok();
        converted.content.push(ContentBlock::resource_link(link));
    }
    converted
}

/// Every content block's text, one per line (JSON blocks serialized).
fn full_text(result: &ToolCallResult) -> String {
    result
        .content
        .iter()
        .map(stringify_tool_content_block)
        .collect::<Vec<_>>()
        .join("\n")
}

async fn keep(kept: &LinkStore<'_>, id: &str, tool: &str, text: &str) -> Result<(), String> {
    let key = format!("{KEY_PREFIX}{id}");
    let claim = kept
        .store
        .claim(ClaimRequest::new(&key, &fingerprint(kept.owner), kept.host))
        .await
        .map_err(|error| error.to_string())?;
    if claim.status != ClaimStatus::Owner {
        return Err("the result id is taken".into());
    }
    let record = json!({"tool": tool, "text": text});
    kept.store
        .complete(&key, kept.host, record, &claim.fence)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// `resources/read` of a linked result: its whole text, for the principal that made the call
/// and within its time to live; anything else is "resource not found".
pub(crate) async fn read(
    store: &DurableOperationStore,
    owner: &str,
    uri: &str,
    ttl: Duration,
) -> Result<ReadResourceResult, McpError> {
    let not_found = || {
        McpError::resource_not_found(
            format!("Unknown resource: {uri}."),
            Some(json!({"uri": uri})),
        )
    };
    let id = uri.strip_prefix(RESULT_URI_PREFIX).ok_or_else(not_found)?;
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(not_found());
    }
    let record = store
        .get(&format!("{KEY_PREFIX}{id}"))
        .await
        .map_err(|error| McpError::internal_error(error.to_string(), None))?
        .ok_or_else(not_found)?;
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    let live = record.created_at.saturating_add(ttl_ms) >= store.now_ms();
    if record.fingerprint != fingerprint(owner)
        || record.state != OperationState::Completed
        || !live
    {
        return Err(not_found());
    }
    let text = record
        .result
        .as_ref()
        .and_then(|result| result.get("text"))
        .and_then(Value::as_str)
        .ok_or_else(not_found)?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/plain"),
    ]))
}

fn fingerprint(owner: &str) -> String {
    let digest = hex::encode(Sha256::digest(owner.as_bytes()));
    format!("{FINGERPRINT_PREFIX} owner={digest}")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use tool_durable_operations::{ManualClock, MemoryBackend};

    fn store() -> DurableOperationStore {
        DurableOperationStore::new(Arc::new(MemoryBackend::new()))
    }

    fn text(value: &str) -> ToolCallResult {
        ToolCallResult::success(json!(value))
    }

    fn kept<'a>(store: &'a DurableOperationStore, owner: &'a str) -> LinkStore<'a> {
        LinkStore {
            store,
            owner,
            host: "host-a",
        }
    }

    fn link_uri(result: &CallToolResult) -> Option<String> {
        result.content.iter().find_map(|block| match block {
            ContentBlock::ResourceLink(link) => Some(link.uri.clone()),
            _ => None,
        })
    }

    #[tokio::test]
    async fn a_result_of_exactly_the_inline_size_is_sent_whole() {
        let store = store();
        let settings = ResultLinks::new(5);
        let whole = text("héllo");
        let sent = link_if_large(whole, "t", 5, &settings, kept(&store, "a")).await;
        assert_eq!(link_uri(&sent), None);
        let over = text("héllo!");
        let sent = link_if_large(over, "t", 5, &settings, kept(&store, "a")).await;
        let uri = link_uri(&sent).expect("a link past the inline size");
        let text = serde_json::to_value(&sent.content[0]).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            text.starts_with("héllo\n\n[Result truncated: 5 of 6 characters"),
            "{text}"
        );
        let read = read(&store, "a", &uri, settings.ttl).await.unwrap();
        let read = serde_json::to_value(&read).unwrap();
        assert_eq!(read["contents"][0]["text"], "héllo!");
    }

    #[tokio::test]
    async fn another_owner_a_foreign_uri_and_an_expired_link_are_not_found() {
        let clock = ManualClock::new(1_000_000);
        let store = store().with_clock(Arc::new(clock.clone()));
        let settings = ResultLinks::new(1).with_ttl(Duration::from_secs(60));
        let over = text("long");
        let sent = link_if_large(over, "t", 1, &settings, kept(&store, "alice")).await;
        let uri = link_uri(&sent).unwrap();
        let missing = |result: Result<ReadResourceResult, McpError>| {
            result.unwrap_err().code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND
        };
        assert!(missing(read(&store, "mallory", &uri, settings.ttl).await));
        assert!(missing(
            read(&store, "alice", "file:///etc/passwd", settings.ttl).await
        ));
        assert!(missing(
            read(
                &store,
                "alice",
                &format!("{RESULT_URI_PREFIX}x"),
                settings.ttl
            )
            .await
        ));
        clock.advance(settings.ttl);
        assert!(
            read(&store, "alice", &uri, settings.ttl).await.is_ok(),
            "live up to its TTL"
        );
        clock.advance(Duration::from_millis(1));
        assert!(missing(read(&store, "alice", &uri, settings.ttl).await));
    }

    #[tokio::test]
    async fn errors_are_never_linked() {
        let store = store();
        let failed =
            ToolCallResult::failure(tool_protocol::ToolCallError::new("X", "x".repeat(50)));
        let sent = link_if_large(failed, "t", 1, &ResultLinks::new(1), kept(&store, "a")).await;
        assert_eq!(link_uri(&sent), None);
        assert_eq!(sent.is_error, Some(true));
    }

    #[test]
    fn the_first_matching_size_is_announced() {
        let mut sizes = ResultSizes::default();
        sizes.push(ToolNamePatterns::new(["logs.*"]), 200_000);
        sizes.push(ToolNamePatterns::all(), 50_000);
        assert_eq!(sizes.of("logs.tail"), Some(200_000));
        assert_eq!(sizes.of("notes.read"), Some(50_000));
        assert_eq!(ResultSizes::default().of("x"), None);
    }
}
