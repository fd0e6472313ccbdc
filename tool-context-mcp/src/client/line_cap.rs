//! A stdio server's output, with every message over the size limit answered instead of lost.
//!
//! rmcp drops a line longer than its limit (bounded memory) and the request it answered would
//! then wait for a timeout. This reader sits under rmcp: it passes bytes through untouched,
//! remembers the first and last bytes of each line, and after a line over the limit it adds
//! one line of its own: a JSON-RPC error for that response's id, marked as ours. The call
//! fails at once with `MCP_REMOTE_RESULT_TOO_LARGE`, memory stays bounded, and the connection
//! stays up. A server *request* over the limit (it has a `method`) is dropped without an answer.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::json;
use tokio::io::{AsyncRead, ReadBuf};

/// `error.data` of an answer this reader made up; [`super::call`] turns it into
/// `MCP_REMOTE_RESULT_TOO_LARGE`.
pub(crate) const TOO_LARGE_MARKER: &str = "tool-context-mcp/message-too-large";

/// Bytes kept from each end of a line to find its `id`.
const EDGE: usize = 512;

pub(crate) struct LineCap<R> {
    inner: R,
    limit: usize,
    line_len: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    /// Bytes to hand out before reading more: a made-up answer, then the rest of the read
    /// that was cut after the oversized line's newline.
    pending: VecDeque<u8>,
}

impl<R> LineCap<R> {
    pub(crate) fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            line_len: 0,
            head: Vec::with_capacity(EDGE),
            tail: VecDeque::with_capacity(EDGE),
            pending: VecDeque::new(),
        }
    }

    /// Records `bytes`; returns the index just past a newline that ended an oversized line,
    /// together with the answer to add there.
    fn scan(&mut self, bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
        for (index, &byte) in bytes.iter().enumerate() {
            if byte == b'\n' {
                let answer = (self.line_len > self.limit)
                    .then(|| self.answer())
                    .flatten();
                self.line_len = 0;
                self.head.clear();
                self.tail.clear();
                if let Some(answer) = answer {
                    return Some((index + 1, answer));
                }
                continue;
            }
            self.line_len += 1;
            if self.head.len() < EDGE {
                self.head.push(byte);
            }
            if self.tail.len() == EDGE {
                self.tail.pop_front();
            }
            self.tail.push_back(byte);
        }
        None
    }

    /// The made-up error answer for the oversized line, when it was a response with an id.
    fn answer(&self) -> Option<Vec<u8>> {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if contains(&self.head, b"\"method\"") || contains(&tail, b"\"method\"") {
            return None;
        }
        let id = response_id(&self.head, &tail)?;
        let error = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32603,
                "message": format!("The server's answer was {} bytes, more than the {} bytes one message may have; it was discarded.", self.line_len, self.limit),
                "data": TOO_LARGE_MARKER,
            }
        });
        let mut line = serde_json::to_vec(&error).ok()?;
        line.push(b'\n');
        Some(line)
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineCap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.pending.is_empty() {
            let (first, _) = this.pending.as_slices();
            let count = first.len().min(buf.remaining());
            buf.put_slice(&first[..count]);
            this.pending.drain(..count);
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let read = &buf.filled()[before..];
            if let Some(out) = this.with_answers(read) {
                // Answers were added: hand out what fits, keep the rest for the next reads.
                buf.set_filled(before);
                let count = out.len().min(buf.remaining());
                buf.put_slice(&out[..count]);
                this.pending.extend(&out[count..]);
            }
        }
        polled
    }
}

impl<R> LineCap<R> {
    /// `read` with an answer after each oversized response line that ends in it; `None` when
    /// nothing is added (the common case: no copy).
    fn with_answers(&mut self, read: &[u8]) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        let mut offset = 0;
        while let Some((end, answer)) = self.scan(&read[offset..]) {
            let out = out.get_or_insert_with(|| Vec::with_capacity(read.len() + answer.len()));
            out.extend_from_slice(&read[offset..offset + end]);
            out.extend(answer);
            offset += end;
        }
        if let Some(out) = out.as_mut() {
            out.extend_from_slice(&read[offset..]);
        }
        out
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The top-level `id` of a response from its first and last bytes: before `"result"` or
/// `"error"` in the head (`{"jsonrpc":"2.0","id":1,"result":…`), else the last one in the tail
/// (`{"result":…,"jsonrpc":"2.0","id":1}`).
fn response_id(head: &[u8], tail: &[u8]) -> Option<serde_json::Value> {
    let body_at = ["\"result\"", "\"error\""]
        .iter()
        .filter_map(|key| find(head, key.as_bytes()))
        .min()
        .unwrap_or(head.len());
    if let Some(at) = find(&head[..body_at], b"\"id\"") {
        return id_value(&head[at + 4..]);
    }
    let at = rfind(tail, b"\"id\"")?;
    id_value(&tail[at + 4..])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .rposition(|window| window == needle)
}

/// `: 12` or `: "abc"` after an `"id"` key.
fn id_value(after_key: &[u8]) -> Option<serde_json::Value> {
    let text = std::str::from_utf8(after_key).ok().or_else(|| {
        // A cut in the middle of a character at the end: read up to it.
        let valid = std::str::from_utf8(after_key).err()?.valid_up_to();
        std::str::from_utf8(&after_key[..valid]).ok()
    })?;
    let value = text.trim_start().strip_prefix(':')?.trim_start();
    if let Some(quoted) = value.strip_prefix('"') {
        let end = quoted.find('"')?;
        return Some(json!(&quoted[..end]));
    }
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(value.len());
    value[..end].parse::<i64>().ok().map(|id| json!(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_all(input: Vec<u8>, limit: usize, chunk: usize) -> String {
        let chunks = input.chunks(chunk).map(<[u8]>::to_vec).collect();
        let mut capped = LineCap::new(Chunks(chunks), limit);
        let mut out = Vec::new();
        capped.read_to_end(&mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Hands out the given chunks one read at a time.
    struct Chunks(VecDeque<Vec<u8>>);

    impl AsyncRead for Chunks {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if let Some(mut chunk) = self.0.pop_front() {
                let count = chunk.len().min(buf.remaining());
                buf.put_slice(&chunk[..count]);
                if count < chunk.len() {
                    self.0.push_front(chunk.split_off(count));
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn small_lines_pass_through_untouched() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"a\":1}\n".to_vec();
        for chunk in [1, 3, 64] {
            assert_eq!(
                read_all(input.clone(), 100, chunk).await.as_bytes(),
                &input[..]
            );
        }
    }

    #[tokio::test]
    async fn an_oversized_response_is_followed_by_an_error_for_its_id_head_or_tail() {
        let big = "x".repeat(300);
        let head_first =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{big}\"}}\n{{\"next\":1}}\n");
        let tail_last = format!("{{\"result\":\"{big}\",\"jsonrpc\":\"2.0\",\"id\":\"k9\"}}\n");
        for chunk in [7, 100, 4096] {
            let out = read_all(head_first.clone().into_bytes(), 100, chunk).await;
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 3, "{chunk}");
            let answer: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(
                (answer["id"].clone(), answer["error"]["data"].clone()),
                (json!(7), json!(TOO_LARGE_MARKER))
            );
            assert_eq!(lines[2], "{\"next\":1}");
            let out = read_all(tail_last.clone().into_bytes(), 100, chunk).await;
            let answer: serde_json::Value =
                serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
            assert_eq!(answer["id"], "k9");
        }
    }

    #[tokio::test]
    async fn an_oversized_request_or_notification_gets_no_made_up_answer() {
        let big = "x".repeat(300);
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":\"{big}\"}}\n"
        );
        assert_eq!(
            read_all(request.clone().into_bytes(), 100, 50).await,
            request
        );
    }
}
