//! Installed npm packages in the preview: bare specifiers (`preact`, `react-dom/client`) resolve
//! from the workspace's `node_modules` the way bundlers do ([`resolve`]), CommonJS packages
//! become ES modules ([`commonjs`]), and every package file is read through [`PackageFiles`],
//! which the CLI's file system and the studio's on-demand folder reads implement. The compiler
//! only asks [`Packages::resolve`] and [`Packages::module`].

mod commonjs;
mod manifest;
mod render;
mod resolve;

use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) use render::PackageModule;
pub(crate) use resolve::Unresolved;

use commonjs::Facts;
use manifest::Manifest;

/// The folder packages are installed in, at the workspace root or beside any importer.
pub const NODE_MODULES: &str = "node_modules";

/// A package file larger than this is not read (it is reported as unreadable): the largest
/// development builds of popular packages are about 1.5 MiB.
pub const MAX_PACKAGE_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// At most this many package modules are loaded into one document; imports past it become
/// modules that throw, reported once.
pub const MAX_PACKAGE_MODULES: usize = 4_096;

/// Reads installed package files by workspace path (`node_modules/react/index.js`). `None`
/// means absent or unreadable; resolution probes paths, so absence is the common answer.
pub trait PackageFiles: Send + Sync {
    /// The text of the file at the workspace path `path`.
    fn read(&self, path: &str) -> Option<Arc<str>>;
}

/// Package files under a folder on disk (the workspace root): paths stay inside it, and so do
/// symbolic links — within the folder or within the tree its own `node_modules` is (pnpm links
/// packages inside `node_modules`; some setups link `node_modules` itself elsewhere); a link
/// anywhere else, say to a private key, reads as absent. Files past [`MAX_PACKAGE_FILE_BYTES`]
/// or not UTF-8 are unreadable.
#[derive(Debug, Clone)]
pub struct FolderPackageFiles {
    root: PathBuf,
    /// Where the files may really be: the canonical root and its `node_modules`' target.
    inside: Vec<PathBuf>,
}

impl FolderPackageFiles {
    /// Package files of the workspace folder `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let inside = [root.clone(), root.join(NODE_MODULES)]
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .collect();
        Self { root, inside }
    }
}

impl PackageFiles for FolderPackageFiles {
    fn read(&self, path: &str) -> Option<Arc<str>> {
        let relative = Path::new(path);
        if !relative
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
        {
            return None;
        }
        let full = self.root.join(relative).canonicalize().ok()?;
        if !self.inside.iter().any(|inside| full.starts_with(inside)) {
            return None;
        }
        let metadata = std::fs::metadata(&full).ok()?;
        if !metadata.is_file() || metadata.len() > MAX_PACKAGE_FILE_BYTES {
            return None;
        }
        std::fs::read_to_string(full).ok().map(Arc::from)
    }
}

/// The installed packages a compile resolves bare specifiers from: a [`PackageFiles`] source
/// with what was read, resolved and rendered from it remembered (a package is parsed and
/// wrapped once per content). Cheap to clone (shared). Two values are equal when they share
/// one cache: after `npm install`, make a new one so every compile sees the new files.
#[derive(Clone)]
pub struct Packages {
    shared: Arc<Shared>,
}

struct Shared {
    files: Box<dyn PackageFiles>,
    reads: Mutex<HashMap<Box<str>, Option<Arc<str>>>>,
    manifests: Mutex<HashMap<Box<str>, Option<Arc<Manifest>>>>,
    facts: Mutex<HashMap<PathIn, Option<Arc<Facts>>>>,
    modules: Mutex<HashMap<PathIn, Arc<PackageModule>>>,
}

/// A package file under one `NODE_ENV` (what is loaded and how depends on both).
type PathIn = (Box<str>, NodeEnv);

/// `process.env.NODE_ENV` in package code: `development` in previews, `production` in exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NodeEnv {
    Development,
    Production,
}

impl NodeEnv {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Development => "development",
            Self::Production => "production",
        }
    }
}

impl Packages {
    /// Packages read from `files`.
    pub fn new(files: impl PackageFiles + 'static) -> Self {
        Self {
            shared: Arc::new(Shared {
                files: Box::new(files),
                reads: Mutex::default(),
                manifests: Mutex::default(),
                facts: Mutex::default(),
                modules: Mutex::default(),
            }),
        }
    }

    /// Packages installed under the workspace folder `root` on disk.
    pub fn folder(root: impl Into<PathBuf>) -> Self {
        Self::new(FolderPackageFiles::new(root))
    }

    /// The text of the package file at `path`, read once.
    pub(crate) fn read(&self, path: &str) -> Option<Arc<str>> {
        if path == resolve::EMPTY_MODULE {
            return Some(Arc::from(""));
        }
        let mut reads = lock(&self.shared.reads);
        if let Some(read) = reads.get(path) {
            return read.clone();
        }
        let read = self.shared.files.read(path);
        reads.insert(path.into(), read.clone());
        read
    }

    /// The parsed `package.json` at `path`, or `None` when absent or not a JSON object.
    fn manifest(&self, path: &str) -> Option<Arc<Manifest>> {
        if let Some(known) = lock(&self.shared.manifests).get(path) {
            return known.clone();
        }
        let parsed = self
            .read(path)
            .and_then(|text| Manifest::parse(&text))
            .map(Arc::new);
        lock(&self.shared.manifests).insert(path.into(), parsed.clone());
        parsed
    }

    /// What one parse of the package file at `path` found under `env`, or `None` when it
    /// is unreadable.
    fn facts(&self, path: &str, env: NodeEnv) -> Option<Arc<Facts>> {
        let key = (Box::<str>::from(path), env);
        if let Some(known) = lock(&self.shared.facts).get(&key) {
            return known.clone();
        }
        let facts = self
            .read(path)
            .map(|source| Arc::new(commonjs::analyze(path, &source, env)));
        lock(&self.shared.facts).insert(key, facts.clone());
        facts
    }

    /// Resolves the bare specifier `specifier` imported by the workspace or package file
    /// `importer` to a package file path.
    pub(crate) fn resolve(&self, importer: &str, specifier: &str) -> Result<String, Unresolved> {
        resolve::resolve(self, importer, specifier)
    }

    /// The package module at `path` (as ES module text and what it imports), rendered once.
    pub(crate) fn module(&self, path: &str, env: NodeEnv) -> Arc<PackageModule> {
        let key = (Box::<str>::from(path), env);
        if let Some(module) = lock(&self.shared.modules).get(&key) {
            return module.clone();
        }
        let module = Arc::new(render::render(self, path, env));
        lock(&self.shared.modules).insert(key, module.clone());
        module
    }
}

impl fmt::Debug for Packages {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Packages")
            .field("read", &lock(&self.shared.reads).len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Packages {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Eq for Packages {}

/// A poisoned cache is still a valid cache (every insert is one whole entry).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a module's import list records for a package file (NUL-prefixed: no workspace path).
pub(crate) fn package_marker(path: &str) -> String {
    format!("{PACKAGE_MARKER}{path}")
}

/// The package file an import list entry is the marker of.
pub(crate) fn package_of_marker(entry: &str) -> Option<&str> {
    entry.strip_prefix(PACKAGE_MARKER)
}

const PACKAGE_MARKER: &str = "\u{0}package\u{0}";
