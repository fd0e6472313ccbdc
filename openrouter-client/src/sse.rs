//! Server-sent events, decoded incrementally from the bytes of a streamed response.
//!
//! Lines end in LF, CR or CRLF, even when the ending is split across chunks; `data:` lines
//! join with `\n`; a blank line dispatches; comments (`: OPENROUTER PROCESSING`, keep-alives)
//! and unknown fields are ignored. llama.cpp reports a failure as an `error:` field, so that
//! field is kept too.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `data` lines, joined with `\n`.
    pub(crate) data: String,
    /// Whether the payload came from an `error:` field rather than `data:`.
    pub(crate) is_error_field: bool,
}

/// A line could not be read as UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8;

/// Incremental decoder: feed chunks with [`SseDecoder::push`], then call
/// [`SseDecoder::finish`] at the end of the body.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    /// The previous chunk ended in CR: an LF opening the next one belongs to it.
    after_cr: bool,
    data: Option<String>,
    is_error_field: bool,
}

impl SseDecoder {
    /// Decodes a chunk, appending every event it completes to `out`.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), NotUtf8> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let [b'\n', tail @ ..] = rest {
                rest = tail;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let crlf = rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n');
            self.after_cr = rest[end] == b'\r' && end + 1 == rest.len();
            if self.line.is_empty() {
                // The whole line is in this chunk: read it in place.
                self.take_line(&rest[..end], out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..end]);
                let taken = self.take_line(&line, out);
                line.clear();
                self.line = line;
                taken?;
            }
            rest = &rest[end + if crlf { 2 } else { 1 }..];
        }
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// Ends the body: a last line without its ending and a last event without its blank line
    /// are still delivered (servers that close right after `data: [DONE]` are common).
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), NotUtf8> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.take_line(&line, out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    fn take_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), NotUtf8> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| NotUtf8)?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" || field == "error" {
            self.is_error_field |= field == "error";
            let data = self.data.get_or_insert_with(String::new);
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value);
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if let Some(data) = self.data.take() {
            out.push(SseEvent {
                data,
                is_error_field: std::mem::take(&mut self.is_error_field),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(body: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for chunk in body.chunks(piece) {
            decoder.push(chunk, &mut out).unwrap();
        }
        decoder.finish(&mut out).unwrap();
        out
    }

    fn data(text: &str) -> SseEvent {
        SseEvent {
            data: text.into(),
            is_error_field: false,
        }
    }

    #[test]
    fn every_split_of_every_line_ending_gives_the_same_events() {
        let body = b": OPENROUTER PROCESSING\r\n\r\ndata: {\"a\":1}\r\n\r\ndata:x\rdata: y\r\revent: ping\nid: 3\n\ndata: [DONE]\n\n";
        let expected = vec![data("{\"a\":1}"), data("x\ny"), data("[DONE]")];
        for piece in 1..body.len() {
            assert_eq!(decode_in_pieces(body, piece), expected, "piece {piece}");
        }
    }

    #[test]
    fn a_last_event_without_its_blank_line_is_delivered() {
        assert_eq!(decode_in_pieces(b"data: [DONE]", 4), vec![data("[DONE]")]);
        assert_eq!(decode_in_pieces(b"data: a\n", 100), vec![data("a")]);
        assert!(decode_in_pieces(b": keep-alive\n\n\n", 3).is_empty());
    }

    #[test]
    fn error_fields_are_marked_and_invalid_utf8_is_refused() {
        let events = decode_in_pieces(b"error: {\"message\":\"boom\"}\n\n", 5);
        assert_eq!(
            events,
            vec![SseEvent {
                data: "{\"message\":\"boom\"}".into(),
                is_error_field: true
            }]
        );
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        assert_eq!(decoder.push(b"data: \xff\xfe\n", &mut out), Err(NotUtf8));
    }

    #[test]
    fn a_multibyte_character_split_across_chunks_survives() {
        let body = "data: {\"t\":\"é🙂\"}\n\n".as_bytes();
        for piece in 1..body.len() {
            assert_eq!(decode_in_pieces(body, piece), vec![data("{\"t\":\"é🙂\"}")]);
        }
    }
}
