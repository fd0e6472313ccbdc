//! Reviewable diffs: what a proposed change would do to a file or a whole workspace, as
//! unified hunks with line numbers, and the narrowed text when a person accepts only some
//! hunks.
//!
//! A diff is computed on request for the person deciding; nothing here stores or logs it.
//! Every result is bounded: files over [`MAX_DIFF_FILE_BYTES`] and binary assets become
//! summaries, a file shows at most [`MAX_DIFF_HUNKS`] hunks and [`MAX_DIFF_LINES`] lines, a
//! displayed line keeps at most [`MAX_DIFF_LINE_CHARS`] characters (a minified one-line file
//! still diffs in one line), and the line diff itself stops refining after
//! [`DIFF_TIME_BUDGET`] (the result stays correct, only less minimal).
//!
//! ```
//! use live_code_editor::diff::{TextDiff, narrow};
//!
//! let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
//! let new = "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n";
//! let diff = TextDiff::new(old, new);
//! assert_eq!(diff.hunks.len(), 2);
//! assert_eq!((diff.additions, diff.deletions), (2, 2));
//! // Accepting only the second hunk changes only the last line.
//! assert_eq!(narrow(old, new, &[1]).unwrap(), "a\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n");
//! ```

mod narrow;
mod workspace;

use std::time::Duration;

use serde::Serialize;
use similar::{Algorithm, DiffOp, DiffTag};

pub use narrow::{NarrowError, narrow, narrowed_patch};
pub use workspace::{FileChange, FileDiff, FileDiffKind, WorkspaceDiff};

/// Unchanged lines shown around each change; changes closer than twice this share a hunk.
pub const DIFF_CONTEXT_LINES: usize = 3;
/// Files larger than this (either side, bytes) are summarised, never diffed line by line.
pub const MAX_DIFF_FILE_BYTES: usize = 1_000_000;
/// Hunks shown per file; the rest are counted in the summary.
pub const MAX_DIFF_HUNKS: usize = 200;
/// Lines shown per file, all hunks together.
pub const MAX_DIFF_LINES: usize = 5_000;
/// Characters kept of one displayed line (a minified file is one long line).
pub const MAX_DIFF_LINE_CHARS: usize = 2_000;
/// How long the line diff may refine its result before it settles for a coarser one.
pub const DIFF_TIME_BUDGET: Duration = Duration::from_millis(250);

/// What one diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineTag {
    /// Unchanged context.
    Context,
    /// Only in the old text.
    Removed,
    /// Only in the new text.
    Added,
}

/// One displayed line of a hunk. Line numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiffLine {
    /// Context, removed or added.
    pub tag: LineTag,
    /// Line number in the old text (context and removed lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_line: Option<usize>,
    /// Line number in the new text (context and added lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_line: Option<usize>,
    /// The line without its line break, cut to [`MAX_DIFF_LINE_CHARS`].
    pub text: String,
    /// Whether `text` was cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One hunk: a run of changes with their context, as in `@@ -old_start,old_len +new_start,new_len @@`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Hunk {
    /// Position among the file's hunks (what [`narrow`] takes).
    pub index: usize,
    /// First old line (1-based; 0 when the old range is empty at the start).
    pub old_start: usize,
    /// Old lines covered.
    pub old_len: usize,
    /// First new line (1-based; 0 when the new range is empty at the start).
    pub new_start: usize,
    /// New lines covered.
    pub new_len: usize,
    /// Lines added by this hunk.
    pub additions: usize,
    /// Lines removed by this hunk.
    pub deletions: usize,
    /// The lines, or empty once the file's [`MAX_DIFF_LINES`] were shown.
    pub lines: Vec<DiffLine>,
}

impl Hunk {
    /// The `@@ -a,b +c,d @@` header.
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_len, self.new_start, self.new_len
        )
    }
}

/// The line diff of two texts: bounded hunks and totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextDiff {
    /// Added lines, all hunks (also those not shown).
    pub additions: usize,
    /// Removed lines, all hunks (also those not shown).
    pub deletions: usize,
    /// How many hunks the change has (also those not shown).
    pub hunk_count: usize,
    /// The first [`MAX_DIFF_HUNKS`] hunks.
    pub hunks: Vec<Hunk>,
    /// Whether hunks or lines were left out.
    pub truncated: bool,
}

impl TextDiff {
    /// Diffs `old` against `new` line by line (a missing final line break counts as a change
    /// of that line).
    pub fn new(old: &str, new: &str) -> Self {
        let lines = LineDiff::new(old, new);
        let mut diff = Self {
            additions: 0,
            deletions: 0,
            hunk_count: 0,
            hunks: Vec::new(),
            truncated: false,
        };
        let mut shown_lines = 0;
        for (index, group) in lines.groups().iter().enumerate() {
            let mut hunk = lines.hunk(index, group);
            diff.additions += hunk.additions;
            diff.deletions += hunk.deletions;
            diff.hunk_count += 1;
            if index >= MAX_DIFF_HUNKS {
                diff.truncated = true;
                continue;
            }
            if shown_lines + hunk.lines.len() > MAX_DIFF_LINES {
                hunk.lines.clear();
                diff.truncated = true;
            }
            shown_lines += hunk.lines.len();
            diff.hunks.push(hunk);
        }
        diff
    }

    /// Whether the texts differ.
    pub fn is_empty(&self) -> bool {
        self.hunk_count == 0
    }
}

/// The line-level diff both [`TextDiff`] and [`narrow`] read, so the hunks a person sees are
/// exactly the hunks narrowing counts.
pub(crate) struct LineDiff<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    ops: Vec<DiffOp>,
}

impl<'a> LineDiff<'a> {
    pub(crate) fn new(old: &'a str, new: &'a str) -> Self {
        let old: Vec<&str> = old.split_inclusive('\n').collect();
        let new: Vec<&str> = new.split_inclusive('\n').collect();
        let deadline = std::time::Instant::now() + DIFF_TIME_BUDGET;
        let ops =
            similar::capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline));
        Self { old, new, ops }
    }

    pub(crate) fn groups(&self) -> Vec<Vec<DiffOp>> {
        similar::group_diff_ops(self.ops.clone(), DIFF_CONTEXT_LINES)
    }

    pub(crate) fn ops(&self) -> &[DiffOp] {
        &self.ops
    }

    pub(crate) fn old_lines(&self) -> &[&'a str] {
        &self.old
    }

    pub(crate) fn new_lines(&self) -> &[&'a str] {
        &self.new
    }

    fn hunk(&self, index: usize, group: &[DiffOp]) -> Hunk {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut hunk = Hunk {
            index,
            old_start: start_line(old_range.start, old_range.len()),
            old_len: old_range.len(),
            new_start: start_line(new_range.start, new_range.len()),
            new_len: new_range.len(),
            additions: 0,
            deletions: 0,
            lines: Vec::new(),
        };
        for op in group {
            for change in op.iter_changes(&self.old, &self.new) {
                let tag = match change.tag() {
                    similar::ChangeTag::Equal => LineTag::Context,
                    similar::ChangeTag::Delete => LineTag::Removed,
                    similar::ChangeTag::Insert => LineTag::Added,
                };
                match tag {
                    LineTag::Added => hunk.additions += 1,
                    LineTag::Removed => hunk.deletions += 1,
                    LineTag::Context => {}
                }
                let (text, truncated) = display_text(change.value());
                hunk.lines.push(DiffLine {
                    tag,
                    old_line: change.old_index().map(|line| line + 1),
                    new_line: change.new_index().map(|line| line + 1),
                    text,
                    truncated,
                });
            }
        }
        hunk
    }
}

/// Whether an op changes anything.
pub(crate) fn is_change(op: &DiffOp) -> bool {
    op.tag() != DiffTag::Equal
}

/// Unified-diff start line: 1-based, or 0 for an empty range at the very start.
fn start_line(start: usize, len: usize) -> usize {
    if len == 0 { start } else { start + 1 }
}

fn display_text(line: &str) -> (String, bool) {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    match line.char_indices().nth(MAX_DIFF_LINE_CHARS) {
        Some((cut, _)) => (line[..cut].to_owned(), true),
        None => (line.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(count: usize) -> String {
        (1..=count).map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn hunks_carry_unified_line_numbers() {
        let old = numbered(20);
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "");
        let diff = TextDiff::new(&old, &new);
        assert_eq!(diff.hunks.len(), 2);
        assert_eq!(diff.hunks[0].header(), "@@ -1,5 +1,5 @@");
        assert_eq!(diff.hunks[1].header(), "@@ -15,6 +15,5 @@");
        let removed = &diff.hunks[1].lines[3];
        assert_eq!(
            (removed.tag, removed.old_line, removed.new_line),
            (LineTag::Removed, Some(18), None)
        );
        assert_eq!(removed.text, "line 18");
        assert_eq!((diff.additions, diff.deletions), (1, 2));
    }

    #[test]
    fn an_empty_side_starts_at_line_zero() {
        let diff = TextDiff::new("", "a\nb\n");
        assert_eq!(diff.hunks[0].header(), "@@ -0,0 +1,2 @@");
        assert!(TextDiff::new("same\n", "same\n").is_empty());
    }

    #[test]
    fn a_minified_line_is_cut_for_display_only() {
        let old = "x".repeat(MAX_DIFF_LINE_CHARS * 50);
        let new = format!("{old}y");
        let diff = TextDiff::new(&old, &new);
        let line = &diff.hunks[0].lines[0];
        assert!(line.truncated);
        assert_eq!(line.text.chars().count(), MAX_DIFF_LINE_CHARS);
        assert_eq!(narrow(&old, &new, &[0]).unwrap(), new);
    }

    #[test]
    fn hunks_beyond_the_bound_are_counted_not_shown() {
        let count = (MAX_DIFF_HUNKS + 5) * 10;
        let old = numbered(count);
        let new: String = old
            .lines()
            .enumerate()
            .map(|(n, line)| {
                if n % 10 == 0 {
                    format!("{line} changed\n")
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        let diff = TextDiff::new(&old, &new);
        assert_eq!(diff.hunk_count, MAX_DIFF_HUNKS + 5);
        assert_eq!(diff.hunks.len(), MAX_DIFF_HUNKS);
        assert_eq!(diff.additions, MAX_DIFF_HUNKS + 5);
        assert!(diff.truncated);
    }
}
