//! Narrowing: the text a person's partial acceptance stands for, and the smallest literal
//! patch that produces it.

use super::{LineDiff, is_change};

/// Why a narrowing was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NarrowError {
    /// An accepted hunk index the diff does not have.
    #[error("the change has {count} hunks; hunk {index} does not exist")]
    UnknownHunk {
        /// The index given.
        index: usize,
        /// Hunks the change has.
        count: usize,
    },
}

/// The text `old` becomes when only the `accepted` hunks of its diff to `new` are applied
/// (hunk indices as [`TextDiff`](super::TextDiff) numbers them). Accepting every hunk gives
/// `new`, accepting none gives `old`.
pub fn narrow(old: &str, new: &str, accepted: &[usize]) -> Result<String, NarrowError> {
    let lines = LineDiff::new(old, new);
    let groups = lines.groups();
    if let Some(&index) = accepted.iter().find(|&&index| index >= groups.len()) {
        return Err(NarrowError::UnknownHunk {
            index,
            count: groups.len(),
        });
    }
    // Grouping only trims unchanged runs, so the changes appear in the groups in diff order.
    let mut hunk_of_change = groups.iter().enumerate().flat_map(|(index, group)| {
        group
            .iter()
            .filter(|op| is_change(op))
            .map(move |_| accepted.contains(&index))
    });
    let mut text = String::with_capacity(old.len().max(new.len()));
    for op in lines.ops() {
        let take_new = is_change(op) && hunk_of_change.next().unwrap_or(false);
        let chosen = if take_new {
            &lines.new_lines()[op.new_range()]
        } else {
            &lines.old_lines()[op.old_range()]
        };
        chosen.iter().for_each(|line| text.push_str(line));
    }
    Ok(text)
}

/// The smallest literal `(search, replace)` whose first occurrence in `current` turns it into
/// `target`: the differing middle of the two texts, widened until its first occurrence is the
/// one that differs (and by one character when the change is a pure insertion, since a search
/// is never empty). `None` when the texts are equal or `current` is empty (no literal can
/// match in an empty text).
pub fn narrowed_patch(current: &str, target: &str) -> Option<(String, String)> {
    if current == target || current.is_empty() {
        return None;
    }
    let prefix = common_prefix(current, target);
    let suffix = common_suffix(&current[prefix..], &target[prefix..]);
    let (mut start, mut end) = (prefix, current.len() - suffix);
    let target_end = target.len() - suffix;
    if start == end {
        // A pure insertion: take in a neighbouring character so the search is not empty.
        match current[end..].chars().next() {
            Some(next) => end += next.len_utf8(),
            None => start = previous_boundary(current, start),
        }
    }
    // Widen backwards a line at a time until the first match is this one (at 0 it must be).
    while current.find(&current[start..end]) != Some(start) {
        start = current[..previous_boundary(current, start)]
            .rfind('\n')
            .map_or(0, |at| at + 1);
    }
    let replace = format!(
        "{}{}{}",
        &current[start..prefix],
        &target[prefix..target_end],
        &current[current.len() - suffix..end]
    );
    Some((current[start..end].to_owned(), replace))
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or_else(|| a.len().min(b.len()), |((at, _), _)| at)
}

fn common_suffix(a: &str, b: &str) -> usize {
    a.chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum()
}

fn previous_boundary(text: &str, at: usize) -> usize {
    text[..at].char_indices().next_back().map_or(0, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn apply_first(current: &str, search: &str, replace: &str) -> String {
        current.replacen(search, replace, 1)
    }

    #[test]
    fn accepting_a_subset_changes_exactly_those_hunks() {
        let gap = "1\n2\n3\n4\n5\n6\n7\n";
        let old = format!("a\n{gap}b\n{gap}c\n");
        let new = format!("A\n{gap}B\n{gap}C\n");
        let (old, new) = (old.as_str(), new.as_str());
        assert_eq!(narrow(old, new, &[]).unwrap(), old);
        assert_eq!(narrow(old, new, &[0, 1, 2]).unwrap(), new);
        assert_eq!(
            narrow(old, new, &[0, 2]).unwrap(),
            format!("A\n{gap}b\n{gap}C\n")
        );
        assert_eq!(
            narrow(old, new, &[3]),
            Err(NarrowError::UnknownHunk { index: 3, count: 3 })
        );
    }

    #[test]
    fn the_patch_for_a_narrowed_text_is_the_differing_middle() {
        let (search, replace) = narrowed_patch("color: red;\nx\n", "color: blue;\nx\n").unwrap();
        assert_eq!((search.as_str(), replace.as_str()), ("red", "blue"));
        assert_eq!(narrowed_patch("same", "same"), None);
    }

    #[test]
    fn a_patch_widens_until_its_first_match_is_the_change() {
        let current = "red\nred\n";
        let (search, replace) = narrowed_patch(current, "red\nblue\n").unwrap();
        assert_eq!(apply_first(current, &search, &replace), "red\nblue\n");
        let (search, replace) = narrowed_patch("ab", "aXb").unwrap();
        assert!(!search.is_empty());
        assert_eq!(apply_first("ab", &search, &replace), "aXb");
        let (search, replace) = narrowed_patch("ab", "abX").unwrap();
        assert_eq!(apply_first("ab", &search, &replace), "abX");
        let (search, replace) = narrowed_patch("é", "éé").unwrap();
        assert_eq!(apply_first("é", &search, &replace), "éé");
    }

    fn lines() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(
            prop::sample::select(vec!["a", "b", "c", "é", "", "a b"]),
            0..30,
        )
        .prop_map(|lines| lines.into_iter().map(|l| format!("{l}\n")).collect())
    }

    proptest! {
        #[test]
        fn narrowing_all_gives_new_and_none_gives_old(old in lines(), new in lines(), drop_newline: bool) {
            let old = old.concat();
            let mut new = new.concat();
            if drop_newline { new.pop(); }
            let count = super::super::TextDiff::new(&old, &new).hunk_count;
            let all: Vec<usize> = (0..count).collect();
            prop_assert_eq!(narrow(&old, &new, &all).unwrap(), new.clone());
            prop_assert_eq!(narrow(&old, &new, &[]).unwrap(), old.clone());
        }

        #[test]
        fn narrowing_one_hunk_touches_only_its_lines(old in lines(), new in lines()) {
            let (old, new) = (old.concat(), new.concat());
            let diff = super::super::TextDiff::new(&old, &new);
            for hunk in &diff.hunks {
                let narrowed = narrow(&old, &new, &[hunk.index]).unwrap();
                let again = super::super::TextDiff::new(&old, &narrowed);
                prop_assert_eq!(again.additions, hunk.additions);
                prop_assert_eq!(again.deletions, hunk.deletions);
            }
        }

        #[test]
        fn a_narrowed_patch_applied_first_gives_the_target(current in "[ab\né]{0,12}", target in "[ab\né]{0,12}") {
            match narrowed_patch(&current, &target) {
                None => prop_assert!(current == target || current.is_empty()),
                Some((search, replace)) => {
                    prop_assert!(!search.is_empty());
                    prop_assert_eq!(apply_first(&current, &search, &replace), target);
                }
            }
        }
    }
}
