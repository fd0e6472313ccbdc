//! Tool-call arguments read as they stream: a JSON object checked one character at a time,
//! so a stream that can never become an object is refused at the first character that shows
//! it, and the arguments so far can be shown (open strings, arrays and objects closed).
//!
//! Each character is looked at once; [`PartialJson::partial`] parses the text so far, so its
//! callers decide how often to ask.

use serde_json::{Map, Value};

/// Why a stream of arguments can never be a JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartialJsonError {
    /// The first value is not an object.
    NotObject,
    /// Not JSON from this byte offset on.
    Syntax(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Object,
    Array,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The top-level value (an object).
    Start,
    KeyOrEnd,
    Key,
    Colon,
    Value,
    ValueOrEnd,
    CommaOrEnd,
    /// After the top-level object: whitespace only.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// Hex digits of a `\u` escape still to come.
    Unicode(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    None,
    /// A string opened at byte `start` (its quote).
    String {
        key: bool,
        start: usize,
        escape: Escape,
    },
    /// A number or literal opened at byte `start`.
    Scalar {
        start: usize,
    },
}

/// An incremental JSON-object scanner over streamed argument text.
#[derive(Debug, Clone)]
pub(crate) struct PartialJson {
    text: String,
    stack: Vec<Frame>,
    expect: Expect,
    token: Token,
    /// The text up to here plus `safe_closers` is valid JSON.
    safe_len: usize,
    safe_closers: String,
    /// Top-level fields whose value is complete.
    fields_completed: usize,
    error: Option<PartialJsonError>,
}

impl Default for PartialJson {
    fn default() -> Self {
        Self {
            text: String::new(),
            stack: Vec::new(),
            expect: Expect::Start,
            token: Token::None,
            safe_len: 0,
            safe_closers: String::new(),
            fields_completed: 0,
            error: None,
        }
    }
}

impl PartialJson {
    /// Reads more text. Once an error is returned, every later push returns it too.
    pub(crate) fn push(&mut self, fragment: &str) -> Result<(), PartialJsonError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let base = self.text.len();
        self.text.push_str(fragment);
        for (offset, c) in fragment.char_indices() {
            if let Err(error) = self.step(base + offset, c) {
                self.error = Some(error);
                return Err(error);
            }
        }
        Ok(())
    }

    /// The text so far.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// How many top-level fields have a complete value so far.
    pub(crate) fn fields_completed(&self) -> usize {
        self.fields_completed
    }

    /// The arguments so far: complete values, plus a string value still streaming; `None`
    /// before the object opens.
    pub(crate) fn partial(&self) -> Option<Map<String, Value>> {
        if let Token::String {
            key: false,
            escape: Escape::None,
            ..
        } = self.token
        {
            let candidate = format!("{}\"{}", self.text, self.closers());
            if let Ok(map) = serde_json::from_str(&candidate) {
                return Some(map);
            }
        }
        if self.safe_len == 0 {
            return None;
        }
        serde_json::from_str(&format!(
            "{}{}",
            &self.text[..self.safe_len],
            self.safe_closers
        ))
        .ok()
    }

    fn closers(&self) -> String {
        self.stack
            .iter()
            .rev()
            .map(|frame| match frame {
                Frame::Object => '}',
                Frame::Array => ']',
            })
            .collect()
    }

    fn mark_safe(&mut self, end: usize) {
        self.safe_len = end;
        self.safe_closers = self.closers();
    }

    fn step(&mut self, at: usize, c: char) -> Result<(), PartialJsonError> {
        match self.token {
            Token::String { key, start, escape } => self.string_char(at, c, key, start, escape),
            Token::Scalar { start } => {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-') {
                    return self.check_scalar_prefix(start, at + c.len_utf8());
                }
                self.end_scalar(start, at)?;
                self.structural(at, c)
            }
            Token::None => self.structural(at, c),
        }
    }

    fn string_char(
        &mut self,
        at: usize,
        c: char,
        key: bool,
        start: usize,
        escape: Escape,
    ) -> Result<(), PartialJsonError> {
        let next = match (escape, c) {
            (Escape::None, '"') => return self.end_string(at, key),
            (Escape::None, '\\') => Escape::Backslash,
            (_, c) if (c as u32) < 0x20 => return Err(PartialJsonError::Syntax(at)),
            (Escape::None, _) => Escape::None,
            (Escape::Backslash, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => Escape::None,
            (Escape::Backslash, 'u') => Escape::Unicode(4),
            (Escape::Unicode(left), c) if c.is_ascii_hexdigit() => match left {
                1 => Escape::None,
                left => Escape::Unicode(left - 1),
            },
            _ => return Err(PartialJsonError::Syntax(at)),
        };
        self.token = Token::String {
            key,
            start,
            escape: next,
        };
        Ok(())
    }

    fn end_string(&mut self, at: usize, key: bool) -> Result<(), PartialJsonError> {
        self.token = Token::None;
        if !key {
            return self.value_ended(at + 1);
        }
        self.expect = Expect::Colon;
        Ok(())
    }

    /// A literal must stay a prefix of `true`, `false` or `null`; a number is checked whole.
    fn check_scalar_prefix(&mut self, start: usize, end: usize) -> Result<(), PartialJsonError> {
        let so_far = &self.text[start..end];
        let literal = so_far.starts_with(|c: char| c.is_ascii_alphabetic());
        if literal
            && !["true", "false", "null"]
                .iter()
                .any(|w| w.starts_with(so_far))
        {
            return Err(PartialJsonError::Syntax(start));
        }
        Ok(())
    }

    fn end_scalar(&mut self, start: usize, end: usize) -> Result<(), PartialJsonError> {
        self.token = Token::None;
        match serde_json::from_str::<Value>(&self.text[start..end]) {
            Ok(Value::Number(_) | Value::Bool(_) | Value::Null) => self.value_ended(end),
            _ => Err(PartialJsonError::Syntax(start)),
        }
    }

    fn structural(&mut self, at: usize, c: char) -> Result<(), PartialJsonError> {
        if c.is_ascii_whitespace() {
            return Ok(());
        }
        let syntax = PartialJsonError::Syntax(at);
        match (self.expect, c) {
            (Expect::Start, '{') => self.open(at, Frame::Object),
            (Expect::Start, _) => Err(PartialJsonError::NotObject),
            (Expect::KeyOrEnd | Expect::Key, '"') => {
                self.token = Token::String {
                    key: true,
                    start: at,
                    escape: Escape::None,
                };
                Ok(())
            }
            (Expect::KeyOrEnd, '}') | (Expect::ValueOrEnd, ']') => self.close(at),
            (Expect::Colon, ':') => {
                self.expect = Expect::Value;
                Ok(())
            }
            (Expect::Value | Expect::ValueOrEnd, c) => self.value_start(at, c),
            (Expect::CommaOrEnd, ',') => {
                self.expect = match self.stack.last() {
                    Some(Frame::Object) => Expect::Key,
                    _ => Expect::Value,
                };
                Ok(())
            }
            (Expect::CommaOrEnd, '}') if self.stack.last() == Some(&Frame::Object) => {
                self.close(at)
            }
            (Expect::CommaOrEnd, ']') if self.stack.last() == Some(&Frame::Array) => self.close(at),
            _ => Err(syntax),
        }
    }

    fn value_start(&mut self, at: usize, c: char) -> Result<(), PartialJsonError> {
        match c {
            '{' => self.open(at, Frame::Object),
            '[' => self.open(at, Frame::Array),
            '"' => {
                self.token = Token::String {
                    key: false,
                    start: at,
                    escape: Escape::None,
                };
                Ok(())
            }
            '-' | '0'..='9' | 't' | 'f' | 'n' => {
                self.token = Token::Scalar { start: at };
                self.check_scalar_prefix(at, at + 1)
            }
            _ => Err(PartialJsonError::Syntax(at)),
        }
    }

    fn open(&mut self, at: usize, frame: Frame) -> Result<(), PartialJsonError> {
        self.stack.push(frame);
        self.expect = match frame {
            Frame::Object => Expect::KeyOrEnd,
            Frame::Array => Expect::ValueOrEnd,
        };
        self.mark_safe(at + 1);
        Ok(())
    }

    fn close(&mut self, at: usize) -> Result<(), PartialJsonError> {
        self.stack.pop();
        self.value_ended(at + 1)
    }

    fn value_ended(&mut self, end: usize) -> Result<(), PartialJsonError> {
        if self.stack.is_empty() {
            self.expect = Expect::End;
        } else {
            self.expect = Expect::CommaOrEnd;
            if self.stack.len() == 1 {
                self.fields_completed += 1;
            }
        }
        self.mark_safe(end);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scan(text: &str) -> (PartialJson, Result<(), PartialJsonError>) {
        let mut scanner = PartialJson::default();
        let mut result = Ok(());
        for c in text.chars() {
            result = result.and_then(|()| scanner.push(&c.to_string()));
        }
        (scanner, result)
    }

    #[test]
    fn valid_objects_scan_clean_and_complete_whatever_the_split() {
        let text = r#" {"path": "a\"b\u00e9", "n": -1.5e3, "ok": true, "none": null, "list": [1, {"x": []}], "o": {}} "#;
        let (scanner, result) = scan(text);
        assert_eq!(result, Ok(()));
        assert_eq!(
            (scanner.expect, &scanner.token),
            (Expect::End, &Token::None)
        );
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(Value::Object(scanner.partial().unwrap()), expected);
    }

    #[test]
    fn prefixes_show_the_fields_so_far() {
        let text = r#"{"path": "src/app.ts", "content": "hello wor"#;
        let (scanner, result) = scan(text);
        assert_eq!(result, Ok(()));
        assert_eq!(
            Value::Object(scanner.partial().unwrap()),
            json!({"path": "src/app.ts", "content": "hello wor"})
        );
        let (half_key, _) = scan(r#"{"path": "a", "con"#);
        assert_eq!(
            Value::Object(half_key.partial().unwrap()),
            json!({"path": "a"})
        );
        let (mid_escape, _) = scan(r#"{"a": [1, 2], "b": "x\u00"#);
        assert_eq!(
            Value::Object(mid_escape.partial().unwrap()),
            json!({"a": [1, 2]})
        );
        let (nested, _) = scan(r#"{"a": {"b": [1, "t"#);
        assert_eq!(
            Value::Object(nested.partial().unwrap()),
            json!({"a": {"b": [1, "t"]}})
        );
        assert_eq!(scan("  ").0.partial(), None);
    }

    #[test]
    fn a_stream_that_can_never_be_an_object_fails_at_once() {
        for (text, error) in [
            ("[", PartialJsonError::NotObject),
            ("\"x", PartialJsonError::NotObject),
            ("{\"a\" 1", PartialJsonError::Syntax(5)),
            ("{\"a\": tx", PartialJsonError::Syntax(6)),
            ("{\"a\": 1,}", PartialJsonError::Syntax(8)),
            ("{\"a\": \"\\q", PartialJsonError::Syntax(8)),
            ("{\"a\": 1} x", PartialJsonError::Syntax(9)),
            ("{\"a\": 01,", PartialJsonError::Syntax(6)),
            ("{\"a\":\"\n", PartialJsonError::Syntax(6)),
            ("{]", PartialJsonError::Syntax(1)),
        ] {
            let (mut scanner, result) = scan(text);
            assert_eq!(result, Err(error), "{text}");
            assert_eq!(scanner.push("}"), Err(error), "sticky: {text}");
        }
    }

    #[test]
    fn completed_top_level_fields_are_counted() {
        let (scanner, _) = scan(r#"{"a": "x", "b": [1, {"n": 2}], "c": {"d": 2}, "e": 3"#);
        assert_eq!(
            scanner.fields_completed(),
            3,
            "e's number is not complete yet"
        );
        let (done, _) = scan(r#"{"a": "x", "b": [1, {"n": 2}], "c": {"d": 2}, "e": 3}"#);
        assert_eq!(done.fields_completed(), 4);
    }
}
