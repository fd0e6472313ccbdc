//! CSS: finds `@import` rules and `url()` references with the `cssparser` tokenizer, inlines
//! local import chains (media, `layer` and `supports` conditions preserved, each stylesheet
//! resolving `url()` against its own path) and reports what it could not resolve.
//!
//! Comments and strings are tokens, so `/* @import "x.css"; */` or `content: "url(x)"` are
//! never taken for references.

use std::ops::Range;

use cssparser::{ParseError, Parser, ParserInput, Token};

/// At most this many `@import` rules are inlined per top-level stylesheet (shared across the
/// whole recursion), which also bounds the import depth.
pub const MAX_INLINE_CSS_IMPORTS: usize = 32;

/// `url()` references nested deeper than this many blocks are not looked for.
pub const MAX_CSS_SCAN_DEPTH: usize = 32;

/// One reference found in a stylesheet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CssReference {
    pub(crate) kind: CssReferenceKind,
    /// The URL as written (unescaped by the tokenizer).
    pub(crate) requested: String,
    /// Bytes replaced when the reference is rewritten (the whole rule for `@import`).
    pub(crate) range: Range<usize>,
    /// Where the URL itself starts, for diagnostics.
    pub(crate) offset: usize,
}

/// `@import` (with its condition text) or `url()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CssReferenceKind {
    /// `@import <url> <condition>;` — the condition is the raw text after the URL, trimmed.
    Import { condition: String },
    /// `url(...)` anywhere else.
    Url,
}

type ScanResult<'i> = Result<(), ParseError<'i, ()>>;

/// Every `@import` (top level only, where browsers honour it) and `url()` in source order.
pub(crate) fn scan_css_references(source: &str) -> Vec<CssReference> {
    let mut input = ParserInput::new(source);
    let mut parser = Parser::new(&mut input);
    let mut references = Vec::new();
    let _ = scan_block(&mut parser, source, 0, &mut references);
    references
}

fn scan_block<'i>(
    parser: &mut Parser<'i, '_>,
    source: &str,
    depth: usize,
    out: &mut Vec<CssReference>,
) -> ScanResult<'i> {
    loop {
        // Whitespace and comments are never references: skipped without building tokens,
        // which were most of the tokens of a typical stylesheet.
        parser.skip_whitespace();
        let start = parser.position().byte_index();
        let step = match parser.next_including_whitespace_and_comments() {
            Ok(token) => ScanStep::after(token, depth),
            Err(_) => return Ok(()),
        };
        match step {
            ScanStep::Import => scan_import(parser, source, start, out),
            ScanStep::Url(requested) => out.push(CssReference {
                kind: CssReferenceKind::Url,
                requested,
                range: start..parser.position().byte_index(),
                offset: start + 4,
            }),
            ScanStep::UrlFunction => {
                if let Ok(Some((url, offset))) = parser.parse_nested_block(quoted_url_argument) {
                    let end = parser.position().byte_index();
                    out.push(CssReference {
                        kind: CssReferenceKind::Url,
                        requested: url,
                        range: start..end,
                        offset,
                    });
                }
            }
            ScanStep::Nested => {
                let _ =
                    parser.parse_nested_block(|nested| scan_block(nested, source, depth + 1, out));
            }
            ScanStep::Skip => {}
        }
    }
}

/// What the scan does after one token (decided from a borrow of it: tokens are not cloned).
enum ScanStep {
    Import,
    Url(String),
    UrlFunction,
    Nested,
    Skip,
}

impl ScanStep {
    fn after(token: &Token<'_>, depth: usize) -> Self {
        match token {
            Token::AtKeyword(name) if depth == 0 && name.eq_ignore_ascii_case("import") => {
                Self::Import
            }
            Token::UnquotedUrl(url) => Self::Url(url.to_string()),
            Token::Function(name) if name.eq_ignore_ascii_case("url") => Self::UrlFunction,
            Token::Function(_)
            | Token::ParenthesisBlock
            | Token::SquareBracketBlock
            | Token::CurlyBracketBlock
                if depth < MAX_CSS_SCAN_DEPTH =>
            {
                Self::Nested
            }
            _ => Self::Skip,
        }
    }
}

/// The string inside `url( "…" )`, with the offset of its opening quote.
fn quoted_url_argument<'i>(
    parser: &mut Parser<'i, '_>,
) -> Result<Option<(String, usize)>, ParseError<'i, ()>> {
    parser.skip_whitespace();
    let offset = parser.position().byte_index();
    let url = match parser.next() {
        Ok(Token::QuotedString(url)) => url.to_string(),
        _ => return Ok(None),
    };
    parser.skip_whitespace();
    Ok(parser.is_exhausted().then_some((url, offset)))
}

/// Parses the prelude after `@import`: a URL, a condition, then `;` (or the end of input).
fn scan_import(
    parser: &mut Parser<'_, '_>,
    source: &str,
    start: usize,
    out: &mut Vec<CssReference>,
) {
    parser.skip_whitespace();
    let offset = parser.position().byte_index();
    let requested = match parser.next() {
        Ok(Token::QuotedString(url) | Token::UnquotedUrl(url)) => url.to_string(),
        Ok(Token::Function(name)) if name.eq_ignore_ascii_case("url") => {
            match parser.parse_nested_block(quoted_url_argument) {
                Ok(Some((url, _))) => url,
                _ => return,
            }
        }
        _ => return,
    };
    let condition_start = parser.position().byte_index();
    let condition_end;
    loop {
        let before = parser.position().byte_index();
        match parser.next() {
            Ok(Token::Semicolon) => {
                condition_end = before;
                break;
            }
            // A block makes the prelude invalid: it is not an import.
            Ok(Token::CurlyBracketBlock) => return,
            // Consume nested blocks now so the position after them is exact.
            Ok(Token::Function(_) | Token::ParenthesisBlock | Token::SquareBracketBlock) => {
                let _ = parser.parse_nested_block(exhaust);
            }
            Ok(_) => {}
            Err(_) => {
                condition_end = parser.position().byte_index();
                break;
            }
        }
    }
    let condition = source
        .get(condition_start..condition_end)
        .unwrap_or_default();
    out.push(CssReference {
        kind: CssReferenceKind::Import {
            condition: condition.trim().to_owned(),
        },
        requested,
        range: start..parser.position().byte_index(),
        offset,
    });
}

fn exhaust<'i>(parser: &mut Parser<'i, '_>) -> ScanResult<'i> {
    while parser.next_including_whitespace_and_comments().is_ok() {}
    Ok(())
}

/// The wrappers an import condition needs: `layer`, `supports(...)` and a media query list.
pub(crate) fn condition_wrappers(condition: &str) -> Vec<String> {
    let mut wrappers = Vec::new();
    let mut input = ParserInput::new(condition);
    let mut parser = Parser::new(&mut input);
    let mut media_start = 0;
    loop {
        parser.skip_whitespace();
        let state = parser.state();
        let Ok(token) = parser.next().cloned() else {
            break;
        };
        match token {
            Token::Ident(name) if name.eq_ignore_ascii_case("layer") => {
                wrappers.push("@layer".to_owned())
            }
            Token::Function(name)
                if name.eq_ignore_ascii_case("layer") || name.eq_ignore_ascii_case("supports") =>
            {
                let inner_start = parser.position();
                let _ = parser.parse_nested_block(exhaust);
                let inner = parser.slice(inner_start..parser.position());
                let inner = inner.strip_suffix(')').unwrap_or(inner).trim();
                if name.eq_ignore_ascii_case("layer") {
                    wrappers.push(format!("@layer {inner}"));
                } else {
                    wrappers.push(format!("@supports ({inner})"));
                }
            }
            _ => {
                media_start = state.position().byte_index();
                break;
            }
        }
        media_start = parser.position().byte_index();
    }
    let media = condition[media_start.min(condition.len())..].trim();
    if !media.is_empty() {
        wrappers.push(format!("@media {media}"));
    }
    wrappers
}

/// Text safe inside a CSS comment.
pub(crate) fn comment_safe(text: &str) -> String {
    text.replace("*/", "*\\/")
}

/// A CSS string literal for `url("…")`.
/// Appends `value` to `out` as a double-quoted CSS string, copying the runs between the
/// characters it escapes (an export's `data:` URLs are tens of kilobytes of base64).
pub(crate) fn push_css_string(out: &mut String, value: &str) {
    out.reserve(value.len() + 2);
    out.push('"');
    let mut rest = value;
    while let Some(index) = memchr::memchr3(b'"', b'\\', b'\n', rest.as_bytes()) {
        out.push_str(&rest[..index]);
        out.push_str(match rest.as_bytes()[index] {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            _ => "\\a ",
        });
        rest = &rest[index + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requested(source: &str) -> Vec<(String, Option<String>)> {
        scan_css_references(source)
            .into_iter()
            .map(|reference| match reference.kind {
                CssReferenceKind::Import { condition } => (reference.requested, Some(condition)),
                CssReferenceKind::Url => (reference.requested, None),
            })
            .collect()
    }

    #[test]
    fn finds_imports_in_every_syntax_with_conditions() {
        let found = requested(
            "@import 'a.css';\n@IMPORT url(b.css) screen and (min-width: 10px);\n@import url( \"c d.css\" ) print ;@import \"e.css\"",
        );
        assert_eq!(
            found,
            [
                ("a.css".into(), Some(String::new())),
                ("b.css".into(), Some("screen and (min-width: 10px)".into())),
                ("c d.css".into(), Some("print".into())),
                ("e.css".into(), Some(String::new())),
            ]
        );
    }

    #[test]
    fn css_strings_escape_quotes_backslashes_and_newlines_only() {
        let mut out = String::from("url(");
        push_css_string(&mut out, "data:a\"b\\c\nd é\"");
        assert_eq!(out, "url(\"data:a\\\"b\\\\c\\a d é\\\"\"");
        let mut plain = String::new();
        push_css_string(&mut plain, "x.png");
        assert_eq!(plain, "\"x.png\"");
    }

    #[test]
    fn ranges_start_at_the_reference_after_whitespace_and_comments() {
        let source =
            "/* a */ @import  'a.css' ;\n.x { b: /* url(no) */ \t url( \"i.png\" ) url(j.png) }";
        let found: Vec<(&str, usize)> = scan_css_references(source)
            .iter()
            .map(|reference| (&source[reference.range.clone()], reference.offset))
            .collect();
        let at = |needle: &str| source.find(needle).unwrap();
        assert_eq!(
            found,
            [
                ("@import  'a.css' ;", at("'a.css'")),
                ("url( \"i.png\" )", at("\"i.png\"")),
                ("url(j.png)", at("j.png")),
            ]
        );
    }

    #[test]
    fn comments_strings_and_nested_imports_are_not_references() {
        let found = requested(
            "/* @import 'x.css'; url(y.png) */ a { content: \"url(z.png)\"; } b { @import 'n.css'; }",
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn finds_urls_inside_blocks_and_functions() {
        let found = requested(
            "a{background:url(a.png) , image-set(url('b c.png') 1x)} @font-face{src:url(\"f.woff2\")}",
        );
        let urls: Vec<_> = found.into_iter().map(|(url, _)| url).collect();
        assert_eq!(urls, ["a.png", "b c.png", "f.woff2"]);
    }

    #[test]
    fn ranges_cover_the_whole_rule_and_url_token() {
        let source = "x{} @import url(a.css) print; b{background:url( 'p.png' )}";
        let references = scan_css_references(source);
        assert_eq!(
            &source[references[0].range.clone()],
            "@import url(a.css) print;"
        );
        assert_eq!(&source[references[1].range.clone()], "url( 'p.png' )");
        assert_eq!(&source[references[1].offset..references[1].offset + 1], "'");
    }

    #[test]
    fn an_import_with_a_block_is_not_an_import() {
        assert!(requested("@import 'a.css' { color: red }").is_empty());
    }

    #[test]
    fn conditions_become_layer_supports_and_media_wrappers() {
        assert_eq!(condition_wrappers(""), Vec::<String>::new());
        assert_eq!(condition_wrappers("print"), ["@media print"]);
        assert_eq!(
            condition_wrappers("layer(base) supports(display: grid) screen and (min-width: 1px)"),
            [
                "@layer base",
                "@supports (display: grid)",
                "@media screen and (min-width: 1px)"
            ]
        );
        assert_eq!(condition_wrappers("layer"), ["@layer"]);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let source = format!("{}url(x.png){}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(scan_css_references(&source).is_empty());
        let shallow = format!(
            "{}url(x.png){}",
            "(".repeat(MAX_CSS_SCAN_DEPTH),
            ")".repeat(MAX_CSS_SCAN_DEPTH)
        );
        assert_eq!(scan_css_references(&shallow).len(), 1);
    }
}
