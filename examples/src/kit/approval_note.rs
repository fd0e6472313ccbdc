//! The note a narrowed (per-hunk) approval appends to a call's result: what the person applied
//! and rejected, in hunk numbers and counts, never text. The host writes it; the local agent's
//! reply repeats it, so no run reports a partial change as simply done.

/// How every such note starts.
pub(crate) const APPROVED_WITH_CHANGES: &str = "Approved with changes:";

/// The note for applying the `accepted` hunks (0-based, sorted) of `count` hunks of `path`.
pub(crate) fn changes_note(path: &str, accepted: &[usize], count: usize) -> String {
    // Hunk numbers read as `#2`, never as a count.
    let numbers = |indices: &mut dyn Iterator<Item = usize>| {
        indices
            .map(|index| format!("#{}", index + 1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rejected = numbers(&mut (0..count).filter(|index| !accepted.contains(index)));
    let applied = if accepted.is_empty() {
        "none".to_owned()
    } else {
        numbers(&mut accepted.iter().copied())
    };
    format!(
        "{APPROVED_WITH_CHANGES} a person applied {} of {count} hunks of {path} (hunks applied: {applied}; rejected: {rejected}). The rejected hunks were not made; read the file before building on them.",
        accepted.len(),
    )
}

/// Whether a result text block is such a note.
pub(crate) fn is_changes_note(text: &str) -> bool {
    text.starts_with(APPROVED_WITH_CHANGES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_numbers_hunks_from_one_and_is_recognised() {
        let note = changes_note("a.css", &[0, 2], 3);
        assert!(
            note.contains("applied 2 of 3 hunks of a.css (hunks applied: #1, #3; rejected: #2)")
        );
        assert!(is_changes_note(&note));
        assert!(!is_changes_note("Done."));
    }
}
