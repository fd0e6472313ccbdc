//! Paged discovery: [`list_all_tools`] follows `nextCursor` safely, and the opaque offset cursor
//! a registry hands out.
//!
//! ```
//! use tool_protocol::paging::{MaxPages, decode_offset_cursor, encode_offset_cursor, list_all_tools};
//! use tool_protocol::{ToolDefinition, ToolListRequest, ToolListResult};
//! let catalog: Vec<ToolDefinition> = (0..5)
//!     .map(|i| ToolDefinition::new(format!("t{i}"), "", serde_json::json!({"type": "object"})))
//!     .collect();
//! let fetch = |request: ToolListRequest| -> Result<ToolListResult, std::convert::Infallible> {
//!     let start = request.cursor.map_or(0, |cursor| decode_offset_cursor(&cursor, catalog.len()).unwrap());
//!     let end = (start + 2).min(catalog.len());
//!     let next_cursor = (end < catalog.len()).then(|| encode_offset_cursor(end));
//!     Ok(ToolListResult { tools: catalog[start..end].to_vec(), next_cursor })
//! };
//! assert_eq!(list_all_tools(fetch, MaxPages::default()).unwrap().len(), 5);
//! ```

use std::collections::HashSet;

use crate::definition::ToolDefinition;
use crate::request::{ToolListRequest, ToolListResult};
use crate::validate::{ValidationIssue, check_tool_list_result};

/// Pages [`list_all_tools`] fetches at most unless told otherwise.
pub const DEFAULT_MAX_PAGES: usize = 1000;

/// Prefix of the offset cursors this crate issues.
const OFFSET_CURSOR_PREFIX: &str = "offset:";

/// How many pages [`list_all_tools`] may fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxPages {
    /// At most this many pages (must be at least 1).
    Limit(usize),
    /// No limit: only for a source the caller has bounded independently.
    Unbounded,
}

impl Default for MaxPages {
    /// [`DEFAULT_MAX_PAGES`].
    fn default() -> Self {
        Self::Limit(DEFAULT_MAX_PAGES)
    }
}

/// Why [`list_all_tools`] stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PagingError<E> {
    /// `MaxPages::Limit(0)`.
    #[error("listAllTools maxPages must be a positive integer or Infinity.")]
    InvalidMaxPages,
    /// The source failed to return a page.
    #[error("tools/list page could not be fetched: {0}")]
    Fetch(E),
    /// A page broke the `tools/list` result contract.
    #[error("Invalid tools/list result.")]
    InvalidResult {
        /// Zero-based index of the page.
        page: usize,
        /// What is wrong with it.
        issues: Vec<ValidationIssue>,
    },
    /// Another page was announced after the limit was reached.
    #[error("Invalid tools/list pagination: page limit exceeded.")]
    PageLimitExceeded {
        /// The limit in force.
        max_pages: usize,
    },
    /// A cursor came back that was already followed.
    #[error("Invalid tools/list pagination: cursor did not advance.")]
    CursorDidNotAdvance {
        /// The repeated cursor.
        cursor: String,
    },
}

/// Fetches every page of a catalog: first `tools/list` without a cursor, then one request per
/// `nextCursor`, checking each page against the result contract. A repeated cursor and a page
/// beyond `max_pages` are errors, so a broken or hostile source cannot loop forever.
pub fn list_all_tools<E>(
    mut fetch: impl FnMut(ToolListRequest) -> Result<ToolListResult, E>,
    max_pages: MaxPages,
) -> Result<Vec<ToolDefinition>, PagingError<E>> {
    let limit = match max_pages {
        MaxPages::Limit(0) => return Err(PagingError::InvalidMaxPages),
        MaxPages::Limit(limit) => Some(limit),
        MaxPages::Unbounded => None,
    };
    let mut tools = Vec::new();
    let mut seen_cursors = HashSet::new();
    let mut request = ToolListRequest::default();
    for page in 0usize.. {
        let result = fetch(request).map_err(PagingError::Fetch)?;
        check_tool_list_result(&result)
            .map_err(|issues| PagingError::InvalidResult { page, issues })?;
        tools.extend(result.tools);
        let Some(cursor) = result.next_cursor else {
            break;
        };
        let fetched = page + 1;
        if let Some(max_pages) = limit.filter(|max_pages| fetched >= *max_pages) {
            return Err(PagingError::PageLimitExceeded { max_pages });
        }
        if !seen_cursors.insert(cursor.clone()) {
            return Err(PagingError::CursorDidNotAdvance { cursor });
        }
        request = ToolListRequest::after(cursor);
    }
    Ok(tools)
}

/// A cursor is not one this registry issued for the current catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid tools/list cursor.")]
pub struct InvalidCursor;

/// The opaque cursor of the page starting at `offset` (`offset:<n>`, the reference format).
/// Clients must treat it as opaque and only send it back.
pub fn encode_offset_cursor(offset: usize) -> String {
    format!("{OFFSET_CURSOR_PREFIX}{offset}")
}

/// The offset of a cursor issued by [`encode_offset_cursor`] for a catalog of `total` tools.
/// Rejects other prefixes, anything but canonical decimal digits (no sign, no leading zero,
/// no whitespace) and offsets beyond `total`.
pub fn decode_offset_cursor(cursor: &str, total: usize) -> Result<usize, InvalidCursor> {
    let digits = cursor
        .strip_prefix(OFFSET_CURSOR_PREFIX)
        .ok_or(InvalidCursor)?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !canonical {
        return Err(InvalidCursor);
    }
    digits
        .parse::<usize>()
        .ok()
        .filter(|offset| *offset <= total)
        .ok_or(InvalidCursor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::convert::Infallible;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::new(name, "", json!({"type": "object"}))
    }

    /// A source serving `pages` pages of one tool each, with cursors `offset:<n>`.
    fn paged(pages: usize) -> impl FnMut(ToolListRequest) -> Result<ToolListResult, Infallible> {
        move |request| {
            let index = request
                .cursor
                .map_or(0, |cursor| decode_offset_cursor(&cursor, pages).unwrap());
            let next_cursor = (index + 1 < pages).then(|| encode_offset_cursor(index + 1));
            Ok(ToolListResult {
                tools: vec![tool(&format!("t{index}"))],
                next_cursor,
            })
        }
    }

    #[test]
    fn follows_cursors_to_the_end() {
        let mut requests = Vec::new();
        let mut source = paged(3);
        let tools = list_all_tools(
            |request: ToolListRequest| {
                requests.push(request.clone());
                source(request)
            },
            MaxPages::default(),
        )
        .unwrap();
        let names: Vec<_> = tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(names, ["t0", "t1", "t2"]);
        assert_eq!(
            requests,
            [
                ToolListRequest::default(),
                ToolListRequest::after("offset:1"),
                ToolListRequest::after("offset:2")
            ]
        );
    }

    #[test]
    fn page_limit_is_enforced_at_the_edge() {
        assert_eq!(
            list_all_tools(paged(3), MaxPages::Limit(3)).unwrap().len(),
            3
        );
        let error = list_all_tools(paged(4), MaxPages::Limit(3)).unwrap_err();
        assert_eq!(error, PagingError::PageLimitExceeded { max_pages: 3 });
        assert_eq!(
            error.to_string(),
            "Invalid tools/list pagination: page limit exceeded."
        );
        assert_eq!(
            list_all_tools(paged(DEFAULT_MAX_PAGES), MaxPages::default())
                .unwrap()
                .len(),
            DEFAULT_MAX_PAGES
        );
        assert!(matches!(
            list_all_tools(paged(DEFAULT_MAX_PAGES + 1), MaxPages::default()),
            Err(PagingError::PageLimitExceeded { max_pages: 1000 })
        ));
        assert_eq!(
            list_all_tools(paged(DEFAULT_MAX_PAGES + 1), MaxPages::Unbounded)
                .unwrap()
                .len(),
            DEFAULT_MAX_PAGES + 1
        );
    }

    #[test]
    fn zero_pages_is_rejected() {
        let error = list_all_tools(paged(1), MaxPages::Limit(0)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "listAllTools maxPages must be a positive integer or Infinity."
        );
    }

    #[test]
    fn a_repeated_cursor_stops_the_walk() {
        let looping = |_request: ToolListRequest| -> Result<ToolListResult, Infallible> {
            Ok(ToolListResult {
                tools: vec![tool("t")],
                next_cursor: Some("same".into()),
            })
        };
        let error = list_all_tools(looping, MaxPages::Unbounded).unwrap_err();
        assert_eq!(
            error,
            PagingError::CursorDidNotAdvance {
                cursor: "same".into()
            }
        );
        assert_eq!(
            error.to_string(),
            "Invalid tools/list pagination: cursor did not advance."
        );
    }

    #[test]
    fn invalid_pages_and_fetch_errors_are_reported() {
        let blank = |_request: ToolListRequest| -> Result<ToolListResult, Infallible> {
            Ok(ToolListResult {
                tools: vec![tool(" ")],
                next_cursor: None,
            })
        };
        let error = list_all_tools(blank, MaxPages::default()).unwrap_err();
        assert!(
            matches!(&error, PagingError::InvalidResult { page: 0, issues } if issues[0].pointer == "/tools/0/name")
        );
        assert_eq!(error.to_string(), "Invalid tools/list result.");
        let failing =
            |_request: ToolListRequest| -> Result<ToolListResult, &'static str> { Err("offline") };
        assert_eq!(
            list_all_tools(failing, MaxPages::default()).unwrap_err(),
            PagingError::Fetch("offline")
        );
    }

    #[test]
    fn offset_cursors_round_trip_and_reject_everything_else() {
        assert_eq!(encode_offset_cursor(20), "offset:20");
        assert_eq!(decode_offset_cursor("offset:0", 0), Ok(0));
        assert_eq!(decode_offset_cursor(&encode_offset_cursor(7), 7), Ok(7));
        for bad in [
            "offset:8",
            "offset:",
            "offset:-1",
            "offset:+1",
            "offset:01",
            "offset:1.0",
            "offset: 1",
            "page:1",
            "",
            "offset:99999999999999999999999",
        ] {
            assert_eq!(decode_offset_cursor(bad, 7), Err(InvalidCursor), "{bad}");
        }
        assert_eq!(InvalidCursor.to_string(), "Invalid tools/list cursor.");
    }
}
