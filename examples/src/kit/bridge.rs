//! The studio's preview bridge: a browser tab that renders the preview acknowledges each
//! revision from its sandboxed iframe; with no such tab (API clients, MCP, tests) revisions are
//! acknowledged headlessly by compiling them, so no mutation waits for a browser that is not
//! there.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::IncrementalPreviewCompiler;
use live_code_editor::workspace::bridge::{
    HeadlessPreviewBridge, PreviewAcks, PreviewBridge, PreviewSnapshot,
};

use super::events::{EventHub, LiveStylesheets, StudioEvent};
use super::stylesheet_run::StylesheetRun;

/// Counts browser tabs that render the preview.
#[derive(Debug, Clone, Default)]
pub struct PreviewViewers(Arc<AtomicUsize>);

impl PreviewViewers {
    /// Registers a tab; the tab is unregistered when the guard drops.
    pub fn attach(&self) -> ViewerGuard {
        self.0.fetch_add(1, Ordering::SeqCst);
        ViewerGuard(self.0.clone())
    }

    /// Number of attached tabs.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Keeps a tab registered while alive.
#[derive(Debug)]
pub struct ViewerGuard(Arc<AtomicUsize>);

impl Drop for ViewerGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Tells the attached pages that a revision was published.
type Announce = Box<dyn Fn(Announcement) + Send + Sync>;

/// Compiles a published revision and answers its [`CompiledPreview`] stylesheets (`None`:
/// only a reload shows it).
///
/// [`CompiledPreview`]: live_code_editor::preview::CompiledPreview
type StylesheetCompile = Box<dyn Fn(&PreviewSnapshot) -> Option<Vec<Arc<str>>> + Send + Sync>;

/// One published revision as the pages hear of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The revision.
    pub revision: u64,
    /// The same revision again (a preview refresh): a page already showing it must reload so
    /// its iframe acknowledges it once more.
    pub refresh: bool,
    /// For a revision that changed only stylesheets since [`LiveStylesheets::since`], its
    /// compiled stylesheets, so a page can swap them in without asking for them.
    pub live: Option<LiveStylesheets>,
}

/// Browser acknowledgement when a tab renders the preview, headless compilation otherwise.
/// The standalone workspace announces revisions as [`StudioEvent::Workspace`]; another surface
/// passes its own announcement (for example a [`StudioEvent::Surface`] event).
pub struct StudioPreviewBridge {
    viewers: PreviewViewers,
    headless: HeadlessPreviewBridge,
    announce: Announce,
    /// The newest revision announced so far (revisions only grow, so an equal one is a refresh).
    announced: AtomicU64,
    /// The published revisions that differ in stylesheets only, for live stylesheet edits.
    stylesheet_run: Arc<StylesheetRun>,
    /// Compiles a stylesheet-only revision for its announcement (none: pages ask for them).
    announced_stylesheets: Option<StylesheetCompile>,
}

impl std::fmt::Debug for StudioPreviewBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StudioPreviewBridge")
            .field("viewers", &self.viewers.count())
            .finish_non_exhaustive()
    }
}

impl StudioPreviewBridge {
    /// The standalone workspace's bridge: announces revisions on `hub` as
    /// [`StudioEvent::Workspace`] and counts `viewers`.
    pub fn new(viewers: PreviewViewers, hub: EventHub) -> Self {
        let announce = move |announcement: Announcement| {
            hub.publish(StudioEvent::Workspace {
                revision: announcement.revision,
                refresh: announcement.refresh,
                live: announcement.live,
            });
        };
        Self::build(viewers, "/preview/assets/".into(), Box::new(announce))
    }

    /// Announces a revision that changed only stylesheets with the stylesheets `compile`
    /// answers for it (compiled while announcing, into the cache its document is served
    /// from), saving the page the round trip of asking for them. Only while a tab renders the
    /// preview: nobody else swaps stylesheets.
    pub fn announcing_stylesheets(
        mut self,
        compile: impl Fn(&PreviewSnapshot) -> Option<Vec<Arc<str>>> + Send + Sync + 'static,
    ) -> Self {
        self.announced_stylesheets = Some(Box::new(compile));
        self
    }

    /// A bridge for any surface: `announce` is told each published revision, and the headless
    /// compile resolves assets under `asset_base` (the surface's preview asset route).
    pub fn with_announcer(
        viewers: PreviewViewers,
        asset_base: impl Into<String>,
        announce: impl Fn(u64, bool) + Send + Sync + 'static,
    ) -> Self {
        let announce = move |announcement: Announcement| {
            announce(announcement.revision, announcement.refresh);
        };
        Self::build(viewers, asset_base.into(), Box::new(announce))
    }

    fn build(viewers: PreviewViewers, asset_base: String, announce: Announce) -> Self {
        // Preview mode with an asset base, not export mode: the acknowledgement only needs the
        // document to compile, so assets are never base64-encoded into data URLs here.
        // Incremental: a revision that changed one file parses only that file again.
        let compiler = Mutex::new(IncrementalPreviewCompiler::new());
        let headless = HeadlessPreviewBridge::new(move |files: &[WorkspaceFile]| {
            let options = super::preview_http::preview_options(None, asset_base.as_str());
            super::preview_http::lock_compiler(&compiler).compile(files, &options);
            Ok(())
        });
        Self {
            viewers,
            headless,
            announce,
            announced: AtomicU64::new(0),
            stylesheet_run: Arc::default(),
            announced_stylesheets: None,
        }
    }

    /// The stylesheets to announce `snapshot` with: a stylesheet-only step of the run, a tab
    /// that could swap them, and a compile that allows it.
    fn live_stylesheets(&self, snapshot: &PreviewSnapshot) -> Option<LiveStylesheets> {
        let compile = self.announced_stylesheets.as_ref()?;
        if self.viewers.count() == 0 {
            return None;
        }
        let since = self.stylesheet_run.live_since(snapshot.revision)?;
        let stylesheets = compile(snapshot)?;
        Some(LiveStylesheets { since, stylesheets })
    }

    /// The run of published revisions that differ in stylesheets only (the surface's live
    /// stylesheet route reads it).
    pub fn stylesheet_run(&self) -> Arc<StylesheetRun> {
        Arc::clone(&self.stylesheet_run)
    }
}

impl PreviewBridge for StudioPreviewBridge {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        // Recorded before the announcement, so a page that asks for the stylesheets at once
        // finds the revision in the run.
        self.stylesheet_run.record(&snapshot);
        let previous = self
            .announced
            .fetch_max(snapshot.revision, Ordering::SeqCst);
        let refresh = previous >= snapshot.revision;
        let live = if refresh {
            None
        } else {
            self.live_stylesheets(&snapshot)
        };
        (self.announce)(Announcement {
            revision: snapshot.revision,
            refresh,
            live,
        });
        if self.viewers.count() == 0 {
            self.headless.publish(snapshot, acks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

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

    #[tokio::test]
    async fn a_stylesheet_only_revision_is_announced_with_its_stylesheets_while_a_tab_renders() {
        let hub = EventHub::new();
        let mut events = hub.subscribe();
        let viewers = PreviewViewers::default();
        let bridge =
            StudioPreviewBridge::new(viewers.clone(), hub).announcing_stylesheets(|snapshot| {
                Some(vec![format!("css of {}", snapshot.revision).into()])
            });
        let acks = PreviewAcks::new(1);
        let page = viewers.attach();
        for (revision, css, js) in [(1, "a", "1"), (2, "b", "1"), (3, "c", "1"), (4, "c", "2")] {
            bridge.publish(snapshot(revision, css, js), &acks);
        }
        drop(page);
        bridge.publish(snapshot(5, "d", "2"), &acks);
        let mut heard = Vec::new();
        while let Ok(event) = events.try_recv() {
            heard.push(serde_json::to_value(event).unwrap());
        }
        assert_eq!(
            heard,
            [
                serde_json::json!({"type": "workspace", "revision": 1}),
                serde_json::json!({"type": "workspace", "revision": 2, "live": {"since": 1, "stylesheets": ["css of 2"]}}),
                serde_json::json!({"type": "workspace", "revision": 3, "live": {"since": 1, "stylesheets": ["css of 3"]}}),
                serde_json::json!({"type": "workspace", "revision": 4}),
                serde_json::json!({"type": "workspace", "revision": 5}),
            ],
            "a script edit starts a new run; with no tab nothing is compiled for the announcement"
        );
    }

    #[tokio::test]
    async fn the_same_revision_published_again_is_announced_as_a_refresh() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        let viewers = PreviewViewers::default();
        let _page = viewers.attach();
        let bridge =
            StudioPreviewBridge::with_announcer(viewers, "/a/", move |revision, refresh| {
                sink.lock().unwrap().push((revision, refresh));
            });
        let acks = PreviewAcks::new(1);
        for revision in [1, 2, 2, 3] {
            let files = Vec::new();
            bridge.publish(PreviewSnapshot { revision, files }, &acks);
        }
        assert_eq!(
            *heard.lock().unwrap(),
            [(1, false), (2, false), (2, true), (3, false)]
        );
    }
}
