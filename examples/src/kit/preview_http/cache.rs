//! The compiled-preview cache: each surface's latest revision, compiled once by that
//! surface's incremental compiler however many requests (or tabs) ask for it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use live_code_editor::preview::{CompiledPreview, IncrementalPreviewCompiler};
use tokio::sync::OnceCell;

/// A compiled preview revision as the cache keeps it: the document, and the stylesheets a
/// running preview of an earlier revision swaps in (`None`: only a reload shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedPreview {
    /// The document (shared bytes: serving it again copies nothing).
    pub html: Bytes,
    /// [`CompiledPreview::stylesheets`] of the compile.
    pub stylesheets: Option<Vec<Arc<str>>>,
}

impl ServedPreview {
    /// A document that can only be reloaded (for example one the host rewrote after compiling).
    pub fn reload_only(html: String) -> Self {
        Self {
            html: Bytes::from(html),
            stylesheets: None,
        }
    }
}

impl From<CompiledPreview> for ServedPreview {
    fn from(compiled: CompiledPreview) -> Self {
        Self {
            html: Bytes::from(compiled.html),
            stylesheets: compiled.stylesheets,
        }
    }
}

/// Compiled preview documents, the latest revision of each surface only, so a document is
/// compiled once per revision however often (or however many tabs) request it: an
/// unauthenticated `GET /preview/{rev}` must not be a way to make the host compile again. The
/// cache holds one document per surface (a new revision replaces the old one), and each
/// surface keeps one [`IncrementalPreviewCompiler`], so a revision that changed one file
/// parses only that file again.
#[derive(Debug, Default)]
pub struct PreviewDocuments {
    slots: Mutex<HashMap<&'static str, DocumentSlot>>,
    compilers: Mutex<HashMap<&'static str, SharedCompiler>>,
    compiles: AtomicU64,
}

/// One surface's cached revision and its document (filled by the first request).
type DocumentSlot = (u64, Arc<OnceCell<Arc<ServedPreview>>>);

/// A surface's incremental compiler, used by one blocking compile at a time.
type SharedCompiler = Arc<Mutex<IncrementalPreviewCompiler>>;

impl PreviewDocuments {
    /// The document of `surface` at `revision`, compiled by `compile` with the surface's
    /// incremental compiler on a blocking thread the first time it is asked for; concurrent
    /// requests wait for that one compile. `None` when the compiler panicked (the next request
    /// tries again, with a fresh compiler).
    pub async fn get_or_compile(
        &self,
        surface: &'static str,
        revision: u64,
        compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static,
    ) -> Option<Arc<ServedPreview>> {
        let cell = self.slot(surface, revision);
        let compiler = self.compiler(surface);
        cell.get_or_try_init(|| async {
            self.compiles.fetch_add(1, Ordering::Relaxed);
            tokio::task::spawn_blocking(move || compile(&mut lock_compiler(&compiler)))
                .await
                .map(Arc::new)
        })
        .await
        .ok()
        .cloned()
    }

    /// [`Self::get_or_compile`] on the calling thread, for a caller that cannot wait (the
    /// preview bridge compiles a stylesheet-only revision while announcing it): the result
    /// fills the same cache slot, so serving the revision afterwards compiles nothing.
    pub fn compile_now(
        &self,
        surface: &'static str,
        revision: u64,
        compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview,
    ) -> Option<Arc<ServedPreview>> {
        let cell = self.slot(surface, revision);
        if let Some(served) = cell.get() {
            return Some(Arc::clone(served));
        }
        let compiler = self.compiler(surface);
        self.compiles.fetch_add(1, Ordering::Relaxed);
        // A panicking compile poisons the compiler's lock, so the next one starts afresh.
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compile(&mut lock_compiler(&compiler))
        }))
        .ok()?;
        let served = Arc::new(compiled);
        // A request compiling the same revision meanwhile produced the same document.
        let _ = cell.set(Arc::clone(&served));
        Some(served)
    }

    fn compiler(&self, surface: &'static str) -> SharedCompiler {
        let mut compilers = self
            .compilers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Arc::clone(compilers.entry(surface).or_default())
    }

    /// How many compiles ran (tests and diagnostics).
    pub fn compiles(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    fn slot(&self, surface: &'static str, revision: u64) -> Arc<OnceCell<Arc<ServedPreview>>> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let slot = slots
            .entry(surface)
            .or_insert_with(|| (revision, Arc::default()));
        if slot.0 != revision {
            *slot = (revision, Arc::default());
        }
        Arc::clone(&slot.1)
    }
}

/// Locks an incremental compiler; after a compile panicked midway it starts over with a fresh
/// one rather than trust what the interrupted compile left behind.
pub fn lock_compiler(
    compiler: &Mutex<IncrementalPreviewCompiler>,
) -> MutexGuard<'_, IncrementalPreviewCompiler> {
    let guard = compiler.lock().unwrap_or_else(|poisoned| {
        let mut guard = poisoned.into_inner();
        *guard = IncrementalPreviewCompiler::new();
        guard
    });
    compiler.clear_poison();
    guard
}

#[cfg(test)]
mod tests {
    use live_code_editor::WorkspaceFile;
    use live_code_editor::preview::{PreviewOptions, compile_preview};

    use super::*;

    fn site(color: &str) -> Vec<WorkspaceFile> {
        vec![
            WorkspaceFile::text("index.html", "<link rel=stylesheet href=a.css><h1>Hi</h1>"),
            WorkspaceFile::text("a.css", format!("h1 {{ color: {color} }}")),
        ]
    }

    async fn serve(previews: &PreviewDocuments, surface: &'static str, revision: u64) -> String {
        let files = site(&format!("#{revision:06}"));
        let options = PreviewOptions::preview(Some(revision), "/assets/");
        let html = previews
            .get_or_compile(surface, revision, move |compiler| {
                compiler.compile(&files, &options).into()
            })
            .await
            .expect("a document");
        String::from_utf8(html.html.to_vec()).expect("UTF-8 document")
    }

    #[tokio::test]
    async fn a_revision_served_twice_compiles_once_and_each_surface_keeps_one_document() {
        let previews = PreviewDocuments::default();
        let first = serve(&previews, "editor", 1).await;
        assert_eq!(serve(&previews, "editor", 1).await, first);
        assert_eq!(
            previews.compiles(),
            1,
            "the second request is served from the cache"
        );
        serve(&previews, "web", 1).await;
        assert_eq!(previews.compiles(), 2, "surfaces are cached apart");
        let second = serve(&previews, "editor", 2).await;
        let files = site("#000002");
        let full = compile_preview(&files, &PreviewOptions::preview(Some(2), "/assets/"));
        assert_eq!(
            second, full.html,
            "the incremental compile equals a full one"
        );
        assert_eq!(previews.compiles(), 3);
        serve(&previews, "editor", 1).await;
        assert_eq!(
            previews.compiles(),
            4,
            "a surface keeps only its latest revision, so the cache stays bounded"
        );
        assert_eq!(previews.slots.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_revision_compiled_now_is_served_from_the_cache() {
        let previews = PreviewDocuments::default();
        let files = site("#000001");
        let options = PreviewOptions::preview(Some(1), "/assets/");
        let now = previews
            .compile_now("editor", 1, move |compiler| {
                compiler.compile(&files, &options).into()
            })
            .expect("a document");
        assert_eq!(
            now.stylesheets,
            Some(vec![Arc::from("h1 { color: #000001 }")])
        );
        assert_eq!(
            serve(&previews, "editor", 1).await.as_bytes(),
            &now.html[..]
        );
        assert_eq!(
            previews.compiles(),
            1,
            "served from the slot compile_now filled"
        );
        assert!(
            previews
                .compile_now("editor", 2, |_| panic!("compiler bug"))
                .is_none()
        );
        assert!(serve(&previews, "editor", 2).await.contains("#000002"));
    }

    #[tokio::test]
    async fn a_panicking_compile_is_retried_with_a_fresh_compiler() {
        let previews = PreviewDocuments::default();
        let failed = previews
            .get_or_compile("editor", 1, |_| panic!("compiler bug"))
            .await;
        assert!(failed.is_none());
        assert!(serve(&previews, "editor", 1).await.contains("#000001"));
    }
}
