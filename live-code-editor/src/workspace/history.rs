//! Bounded undo/redo history over workspace content, with same-path edit coalescing.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::model::WorkspaceContent;

/// Most undo checkpoints kept; the oldest is dropped beyond this.
pub const MAX_HISTORY_ENTRIES: usize = 100;
/// Same-path source edits closer than this share one undo checkpoint.
pub const COALESCE_WINDOW: Duration = Duration::from_millis(750);

/// A monotonic millisecond clock, injectable so coalescing can be tested without sleeping.
pub trait Clock: Send + Sync {
    /// Milliseconds since an arbitrary fixed origin; never decreases.
    fn now_ms(&self) -> u64;
}

/// The process clock (monotonic, from the first call's origin).
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A clock tests advance by hand.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A shared manual clock at 0 ms.
    pub fn shared() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let millis = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.now.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// How a change is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind<'a> {
    /// A source edit of one path; coalesces with the previous edit of the same path when
    /// `coalesce` is set and it happened within [`COALESCE_WINDOW`].
    SourceEdit {
        /// The edited (normalized) path.
        path: &'a str,
        /// Whether this edit may join the previous checkpoint.
        coalesce: bool,
    },
    /// A structural change (create, rename, delete, revert, patch): always its own checkpoint.
    Checkpoint,
}

/// Undo/redo stacks of content snapshots.
#[derive(Debug, Default)]
pub struct History {
    undo: VecDeque<WorkspaceContent>,
    redo: Vec<WorkspaceContent>,
    last_edit: Option<(String, u64)>,
}

impl History {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `before` (the content prior to a change made at `now_ms`) and clears redo.
    pub fn record(&mut self, before: &WorkspaceContent, kind: RecordKind<'_>, now_ms: u64) {
        self.redo.clear();
        if let RecordKind::SourceEdit { path, coalesce } = kind {
            let joins = coalesce
                && !self.undo.is_empty()
                && self.last_edit.as_ref().is_some_and(|(last_path, at)| {
                    last_path == path && now_ms.saturating_sub(*at) < window_ms()
                });
            self.last_edit = Some((path.to_owned(), now_ms));
            if joins {
                return;
            }
        } else {
            self.last_edit = None;
        }
        if self.undo.len() == MAX_HISTORY_ENTRIES {
            self.undo.pop_front();
        }
        self.undo.push_back(before.clone());
    }

    /// Takes the content to undo to, pushing `current` onto the redo stack.
    pub fn undo(&mut self, current: &WorkspaceContent) -> Option<WorkspaceContent> {
        let target = self.undo.pop_back()?;
        self.redo.push(current.clone());
        self.last_edit = None;
        Some(target)
    }

    /// Takes the content to redo to, pushing `current` onto the undo stack.
    pub fn redo(&mut self, current: &WorkspaceContent) -> Option<WorkspaceContent> {
        let target = self.redo.pop()?;
        self.undo.push_back(current.clone());
        self.last_edit = None;
        Some(target)
    }

    /// Puts back a target that could not be applied (e.g. it failed the source limit).
    pub fn cancel_undo(&mut self, target: WorkspaceContent) {
        self.redo.pop();
        self.undo.push_back(target);
    }

    /// Puts back a redo target that could not be applied.
    pub fn cancel_redo(&mut self, target: WorkspaceContent) {
        self.undo.pop_back();
        self.redo.push(target);
    }

    /// Forgets everything (the workspace was replaced).
    pub fn clear(&mut self) {
        self.undo.clear();
        self.redo.clear();
        self.last_edit = None;
    }

    /// The content undo would restore, without taking it.
    pub fn peek_undo(&self) -> Option<&WorkspaceContent> {
        self.undo.back()
    }

    /// The content redo would restore, without taking it.
    pub fn peek_redo(&self) -> Option<&WorkspaceContent> {
        self.redo.last()
    }

    /// Whether undo has a target.
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Whether redo has a target.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Number of undo checkpoints.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }
}

fn window_ms() -> u64 {
    u64::try_from(COALESCE_WINDOW.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::WorkspaceFile;
    use crate::workspace::model::{Operation, Workspace};

    fn ws() -> Workspace {
        Workspace::new(vec![WorkspaceFile::text("index.html", "0")]).unwrap()
    }

    fn write(ws: &Workspace, source: &str) -> Workspace {
        ws.apply(&Operation::Write {
            path: "index.html".into(),
            source: source.into(),
        })
        .unwrap()
    }

    const EDIT: RecordKind<'static> = RecordKind::SourceEdit {
        path: "index.html",
        coalesce: true,
    };

    #[test]
    fn edits_within_the_window_coalesce_and_at_the_window_do_not() {
        let mut history = History::new();
        let clock = ManualClock::default();
        let v0 = ws();
        history.record(v0.content(), EDIT, clock.now_ms());
        let v1 = write(&v0, "1");
        clock.advance(COALESCE_WINDOW - Duration::from_millis(1));
        history.record(v1.content(), EDIT, clock.now_ms());
        assert_eq!(history.undo_len(), 1, "749 ms later: same checkpoint");
        let v2 = write(&v1, "2");
        clock.advance(COALESCE_WINDOW);
        history.record(v2.content(), EDIT, clock.now_ms());
        assert_eq!(history.undo_len(), 2, "750 ms later: a new checkpoint");
    }

    #[test]
    fn coalesce_false_and_other_paths_always_checkpoint() {
        let mut history = History::new();
        let v0 = ws();
        history.record(v0.content(), EDIT, 0);
        history.record(
            v0.content(),
            RecordKind::SourceEdit {
                path: "index.html",
                coalesce: false,
            },
            1,
        );
        history.record(
            v0.content(),
            RecordKind::SourceEdit {
                path: "a.css",
                coalesce: true,
            },
            2,
        );
        history.record(v0.content(), RecordKind::Checkpoint, 3);
        assert_eq!(history.undo_len(), 4);
    }

    #[test]
    fn bounded_to_the_latest_checkpoints() {
        let mut history = History::new();
        let mut current = ws();
        for step in 0..=MAX_HISTORY_ENTRIES {
            history.record(current.content(), RecordKind::Checkpoint, 0);
            current = write(&current, &step.to_string());
        }
        assert_eq!(history.undo_len(), MAX_HISTORY_ENTRIES);
        let mut oldest = None;
        while let Some(target) = history.undo(current.content()) {
            oldest = Some(target);
        }
        let restored = current.restore_content(&oldest.unwrap()).unwrap();
        assert_eq!(
            restored.file("index.html").unwrap().source(),
            Some("0"),
            "entry 0 was dropped"
        );
    }

    #[test]
    fn undo_then_redo_returns_the_same_content() {
        let mut history = History::new();
        let v0 = ws();
        history.record(v0.content(), RecordKind::Checkpoint, 0);
        let v1 = write(&v0, "1");
        let back = history.undo(v1.content()).unwrap();
        assert_eq!(&back, v0.content());
        assert!(history.can_redo());
        let forward = history.redo(&back).unwrap();
        assert_eq!(&forward, v1.content());
        assert!(history.undo(&forward).is_some());
        history.record(v0.content(), RecordKind::Checkpoint, 0);
        assert!(!history.can_redo(), "a new change clears redo");
    }
}
