//! The studio's preview bridge: a browser tab that renders the preview acknowledges each
//! revision from its sandboxed iframe; with no such tab (API clients, MCP, tests) revisions are
//! acknowledged headlessly by compiling them, so no mutation waits for a browser that is not
//! there.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{PreviewOptions, compile_preview};
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

/// Tells the attached pages that a revision was published.
type Announce = Box<dyn Fn(u64) + Send + Sync>;

/// Browser acknowledgement when a tab renders the preview, headless compilation otherwise.
/// The standalone workspace announces revisions as [`StudioEvent::Workspace`]; another surface
/// passes its own announcement (for example a [`StudioEvent::Surface`] event).
pub struct StudioPreviewBridge {
    viewers: PreviewViewers,
    headless: HeadlessPreviewBridge,
    announce: Announce,
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
        Self::with_announcer(viewers, "/preview/assets/", move |revision| {
            hub.publish(StudioEvent::Workspace { revision });
        })
    }

    /// A bridge for any surface: `announce` is told each published revision, and the headless
    /// compile resolves assets under `asset_base` (the surface's preview asset route).
    pub fn with_announcer(
        viewers: PreviewViewers,
        asset_base: impl Into<String>,
        announce: impl Fn(u64) + Send + Sync + 'static,
    ) -> Self {
        let asset_base = asset_base.into();
        // Preview mode with an asset base, not export mode: the acknowledgement only needs the
        // document to compile, so assets are never base64-encoded into data URLs here.
        let headless = HeadlessPreviewBridge::new(move |files: &[WorkspaceFile]| {
            compile_preview(files, &PreviewOptions::preview(None, asset_base.as_str()));
            Ok(())
        });
        Self {
            viewers,
            headless,
            announce: Box::new(announce),
        }
    }
}

impl PreviewBridge for StudioPreviewBridge {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        (self.announce)(snapshot.revision);
        if self.viewers.count() == 0 {
            self.headless.publish(snapshot, acks);
        }
    }
}
