//! Which published revisions differ in stylesheets only: a preview showing one of them can
//! take a newer one by swapping its stylesheets instead of reloading (live stylesheet edits).

use std::sync::{Arc, Mutex};

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::only_stylesheets_changed;
use live_code_editor::workspace::bridge::PreviewSnapshot;

/// The newest published revision and the oldest one before it from which every step changed
/// stylesheets only ([`only_stylesheets_changed`]), so a preview showing any revision of that
/// run can take the newest one by swapping stylesheets instead of reloading.
#[derive(Debug, Default)]
pub struct StylesheetRun {
    state: Mutex<RunState>,
}

#[derive(Debug, Default)]
struct RunState {
    since: u64,
    current: u64,
    files: Vec<Arc<WorkspaceFile>>,
}

impl StylesheetRun {
    /// Takes a published snapshot into the run (a republished revision changes nothing).
    pub fn record(&self, snapshot: &PreviewSnapshot) {
        self.record_with(snapshot, false);
    }

    /// [`Self::record`]; `context_changed` (something besides the files changed that only a
    /// reload shows, such as the scenario the editor injects) starts a new run.
    pub fn record_with(&self, snapshot: &PreviewSnapshot, context_changed: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if snapshot.revision == state.current {
            return;
        }
        let continues = !context_changed
            && state.current != 0
            && snapshot.revision > state.current
            && only_stylesheets_changed(&state.files, &snapshot.files);
        if !continues {
            state.since = snapshot.revision;
        }
        state.current = snapshot.revision;
        state.files = snapshot.files.clone();
    }

    /// Whether a preview showing revision `from` can take revision `to` by swapping
    /// stylesheets: `to` is the newest published revision and `from` an earlier one of its run.
    pub fn live_from(&self, from: u64, to: u64) -> bool {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.current == to && state.since <= from && from < to
    }

    /// The start of the run when `to` is its newest revision and not its first: a preview
    /// showing any revision from there up to `to` can take `to` in place (pages read it with
    /// the state, as `liveStylesheetsSince`, so they never ask for what must reload).
    pub fn live_since(&self, to: u64) -> Option<u64> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        (state.current == to && state.since < to).then_some(state.since)
    }

    /// What pages read as `liveStylesheetsSince` for `revision`: the start of its run, or the
    /// revision itself when it starts one (or was superseded), so only a reload reaches it.
    pub fn reload_boundary(&self, revision: u64) -> u64 {
        self.live_since(revision).unwrap_or(revision)
    }

    /// Whether a preview document of `revision` may load the assets of revision `current`: it
    /// is that revision, or one of its stylesheet run (a document that took newer stylesheets
    /// in place still references its own revision's asset URLs, and no asset changed since).
    pub fn serves_assets_of(&self, revision: u64, current: u64) -> bool {
        revision == current || self.live_from(revision, current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(revision: u64, css: &str, js: &str) -> PreviewSnapshot {
        let files = [
            WorkspaceFile::text("index.html", "<link rel=stylesheet href=a.css>"),
            WorkspaceFile::text("a.css", css),
            WorkspaceFile::text("a.js", js),
        ];
        PreviewSnapshot {
            revision,
            files: files.into_iter().map(Arc::new).collect(),
        }
    }
    #[test]
    fn a_run_of_stylesheet_edits_is_live_from_any_of_its_revisions_and_a_script_edit_ends_it() {
        let run = StylesheetRun::default();
        run.record(&snapshot(1, "a", "1"));
        assert!(!run.live_from(0, 1), "nothing before the first revision");
        run.record(&snapshot(2, "b", "1"));
        run.record(&snapshot(3, "c", "1"));
        assert!(run.live_from(1, 3) && run.live_from(2, 3));
        assert!(!run.live_from(2, 2) && !run.live_from(2, 4) && !run.live_from(1, 2));
        run.record(&snapshot(3, "c", "1"));
        assert!(run.live_from(1, 3), "a refresh keeps the run");
        run.record(&snapshot(4, "c", "2"));
        assert!(!run.live_from(3, 4), "a script edit reloads");
        run.record(&snapshot(5, "d", "2"));
        assert!(run.live_from(4, 5) && !run.live_from(3, 5));
    }

    #[test]
    fn a_changed_context_starts_a_new_run_even_when_only_stylesheets_changed() {
        let run = StylesheetRun::default();
        run.record(&snapshot(1, "a", "1"));
        run.record_with(&snapshot(2, "b", "1"), false);
        assert!(run.live_from(1, 2));
        run.record_with(&snapshot(3, "b", "1"), true);
        assert!(
            !run.live_from(2, 3),
            "the same files under a new scenario reload"
        );
        run.record_with(&snapshot(4, "c", "1"), false);
        assert!(run.live_from(3, 4) && !run.live_from(2, 4));
    }
}
