//! Criterion benchmarks live in `benches/benches/`; this library holds what several of them
//! share: a ratio of a subject to its baseline, measured interleaved in one process.

use std::time::{Duration, Instant};

/// Medians of a subject and its baseline, each round timing one run of both back to back, so
/// load from other processes on the machine falls on both alike.
#[derive(Debug, Clone, Copy)]
pub struct Ratio {
    /// Median time of one subject run.
    pub subject: Duration,
    /// Median time of one baseline run.
    pub baseline: Duration,
}

impl Ratio {
    /// `subject / baseline`.
    pub fn times(&self) -> f64 {
        self.subject.as_secs_f64() / self.baseline.as_secs_f64()
    }

    /// `baseline / subject` (how many times faster the subject is).
    pub fn faster(&self) -> f64 {
        self.baseline.as_secs_f64() / self.subject.as_secs_f64()
    }
}

/// Times `rounds` alternating runs of `subject` and `baseline` (the order flips every round)
/// and returns both medians.
pub fn interleaved(rounds: usize, mut subject: impl FnMut(), mut baseline: impl FnMut()) -> Ratio {
    let mut subjects = Vec::with_capacity(rounds);
    let mut baselines = Vec::with_capacity(rounds);
    for round in 0..rounds.max(1) {
        let mut time_subject = || {
            let started = Instant::now();
            subject();
            subjects.push(started.elapsed());
        };
        let mut time_baseline = || {
            let started = Instant::now();
            baseline();
            baselines.push(started.elapsed());
        };
        if round % 2 == 0 {
            time_subject();
            time_baseline();
        } else {
            time_baseline();
            time_subject();
        }
    }
    Ratio {
        subject: median(&mut subjects),
        baseline: median(&mut baselines),
    }
}

/// The median of `samples` (sorted in place).
pub fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// The median of millisecond samples (sorted in place): for benches that time in a browser.
pub fn median_ms(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Whether a bench binary named `name` should skip this run: `cargo bench` passes `--bench`, and
/// a filter argument other than the bench's name (a part of it) skips it, as criterion does.
pub fn filtered_out(name: &str) -> bool {
    std::env::args()
        .skip(1)
        .find(|argument| !argument.starts_with('-'))
        .is_some_and(|filter| !name.contains(filter.as_str()))
}
