//! The studio's preview bridge: a browser tab that renders the preview acknowledges each
//! revision from its sandboxed iframe; with no such tab (API clients, MCP, tests) revisions are
//! acknowledged headlessly by compiling them, so no mutation waits for a browser that is not
//! there.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions};
use live_code_editor::workspace::bridge::{
    HeadlessPreviewBridge, PreviewAcks, PreviewBridge, PreviewSnapshot,
};

use super::events::{EventHub, StudioEvent};

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

/// Tells the attached pages that a revision was published: `(revision, republished)`, where
/// `republished` means the same revision again (a preview refresh), which a page already
/// showing it must reload so its iframe acknowledges it once more.
type Announce = Box<dyn Fn(u64, bool) + Send + Sync>;

/// Browser acknowledgement when a tab renders the preview, headless compilation otherwise.
/// The standalone workspace announces revisions as [`StudioEvent::Workspace`]; another surface
/// passes its own announcement (for example a [`StudioEvent::Surface`] event).
pub struct StudioPreviewBridge {
    viewers: PreviewViewers,
    headless: HeadlessPreviewBridge,
    announce: Announce,
    /// The newest revision announced so far (revisions only grow, so an equal one is a refresh).
    announced: AtomicU64,
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
        Self::with_announcer(viewers, "/preview/assets/", move |revision, refresh| {
            hub.publish(StudioEvent::Workspace { revision, refresh });
        })
    }

    /// A bridge for any surface: `announce` is told each published revision, and the headless
    /// compile resolves assets under `asset_base` (the surface's preview asset route).
    pub fn with_announcer(
        viewers: PreviewViewers,
        asset_base: impl Into<String>,
        announce: impl Fn(u64, bool) + Send + Sync + 'static,
    ) -> Self {
        let asset_base = asset_base.into();
        // Preview mode with an asset base, not export mode: the acknowledgement only needs the
        // document to compile, so assets are never base64-encoded into data URLs here.
        // Incremental: a revision that changed one file parses only that file again.
        let compiler = Mutex::new(IncrementalPreviewCompiler::new());
        let headless = HeadlessPreviewBridge::new(move |files: &[WorkspaceFile]| {
            let options = PreviewOptions::preview(None, asset_base.as_str());
            super::preview_http::lock_compiler(&compiler).compile(files, &options);
            Ok(())
        });
        Self {
            viewers,
            headless,
            announce: Box::new(announce),
            announced: AtomicU64::new(0),
        }
    }
}

impl PreviewBridge for StudioPreviewBridge {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        let previous = self
            .announced
            .fetch_max(snapshot.revision, Ordering::SeqCst);
        (self.announce)(snapshot.revision, previous >= snapshot.revision);
        if self.viewers.count() == 0 {
            self.headless.publish(snapshot, acks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

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
