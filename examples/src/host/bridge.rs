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

/// Browser acknowledgement when a tab renders the preview, headless compilation otherwise.
pub struct StudioPreviewBridge {
    viewers: PreviewViewers,
    headless: HeadlessPreviewBridge,
    hub: EventHub,
}

impl std::fmt::Debug for StudioPreviewBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StudioPreviewBridge")
            .field("viewers", &self.viewers.count())
            .finish_non_exhaustive()
    }
}

impl StudioPreviewBridge {
    /// A bridge announcing revisions on `hub` and counting `viewers`.
    pub fn new(viewers: PreviewViewers, hub: EventHub) -> Self {
        // Preview mode with an asset base, not export mode: the acknowledgement only needs the
        // document to compile, so assets are never base64-encoded into data URLs here.
        let headless = HeadlessPreviewBridge::new(|files: &[WorkspaceFile]| {
            compile_preview(files, &PreviewOptions::preview(None, "/preview/assets/"));
            Ok(())
        });
        Self {
            viewers,
            headless,
            hub,
        }
    }
}

impl PreviewBridge for StudioPreviewBridge {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        self.hub.publish(StudioEvent::Workspace {
            revision: snapshot.revision,
        });
        if self.viewers.count() == 0 {
            self.headless.publish(snapshot, acks);
        }
    }
}
