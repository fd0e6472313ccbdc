//! Approval diffs (issue 34), each next to `similar`'s own diff of the same texts:
//! - `diff_5000_lines_50_edits`: `live_code_editor::diff::TextDiff::new` (hunks with line
//!   numbers, counts, bounded display lines) on a 5,000-line file with 50 scattered one-line
//!   edits, against `similar::TextDiff::from_lines` rendered as a unified diff with the same
//!   context (goal ≤ 1.2×), and against similar's diff alone (`from_lines` + `grouped_ops`, no
//!   rendering): what our hunks, line numbers and display bounds cost over the diff itself.
//! - `narrow_half_of_50_hunks`: the text of accepting every other hunk, against the same
//!   baseline (narrowing diffs the texts again, so it should cost about one diff).
//! - `minified_one_line`: a 300 KB one-line file with one change (the bound keeps it cheap).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::diff::{DIFF_CONTEXT_LINES, TextDiff, narrow};

fn texts() -> (String, String) {
    let old: String = (0..5_000)
        .map(|n| format!("    const value{n} = compute({n}, \"label {n}\");\n"))
        .collect();
    let new: String = old
        .lines()
        .enumerate()
        .map(|(n, line)| {
            if n % 100 == 37 {
                format!("{line} // edited\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    (old, new)
}

fn similar_unified(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(DIFF_CONTEXT_LINES)
        .to_string()
}

fn diffs(c: &mut Criterion) {
    let (old, new) = texts();
    assert_eq!(TextDiff::new(&old, &new).hunk_count, 50);
    let mut group = c.benchmark_group("diff_5000_lines_50_edits");
    group.bench_function("baseline_similar_unified", |b| {
        b.iter(|| similar_unified(black_box(&old), black_box(&new)))
    });
    group.bench_function("baseline_similar_grouped_ops", |b| {
        b.iter(|| {
            similar::TextDiff::from_lines(black_box(&old), black_box(&new))
                .grouped_ops(DIFF_CONTEXT_LINES)
        })
    });
    group.bench_function("text_diff", |b| {
        b.iter(|| TextDiff::new(black_box(&old), black_box(&new)))
    });
    group.finish();

    let every_other: Vec<usize> = (0..50).step_by(2).collect();
    let mut group = c.benchmark_group("narrow_half_of_50_hunks");
    group.bench_function("baseline_similar_unified", |b| {
        b.iter(|| similar_unified(black_box(&old), black_box(&new)))
    });
    group.bench_function("narrow", |b| {
        b.iter(|| narrow(black_box(&old), black_box(&new), &every_other).unwrap())
    });
    group.finish();

    let minified_old = "a{b:c}".repeat(50_000);
    let minified_new = format!("{minified_old}d{{e:f}}");
    let mut group = c.benchmark_group("minified_one_line");
    group.bench_function("baseline_similar_unified", |b| {
        b.iter(|| similar_unified(black_box(&minified_old), black_box(&minified_new)))
    });
    group.bench_function("text_diff", |b| {
        b.iter(|| TextDiff::new(black_box(&minified_old), black_box(&minified_new)))
    });
    group.finish();
}

criterion_group!(benches, diffs);
criterion_main!(benches);
