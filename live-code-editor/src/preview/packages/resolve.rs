//! Node-style resolution of a specifier to a package file: `node_modules` folders from the
//! importer up to the workspace root; a package's `exports` (subpaths, `*` patterns, the
//! conditions of [`CONDITIONS`] in the package's order), else its `browser`, `module` or
//! `main` entry, else `index`; extensionless paths probed with [`EXTENSIONS`].

use super::manifest::{Exports, Manifest};
use super::{NODE_MODULES, Packages};
use crate::preview::resolve::resolve_local_path;

/// The `exports` conditions a browser ES module build matches (esbuild's for the browser
/// platform): `require` and `node` never match.
pub(crate) const CONDITIONS: [&str; 4] = ["browser", "import", "module", "default"];

/// The module a `browser` replacement of `false` loads: empty (its `exports` are `{}`).
pub(crate) const EMPTY_MODULE: &str = "node_modules/\u{0}empty-browser-module.js";

/// Extensions tried, in order, after a path that names no file (then `/index` with each).
pub(crate) const EXTENSIONS: [&str; 5] = [".js", ".mjs", ".cjs", ".jsx", ".json"];

/// Why a specifier resolved to no file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unresolved {
    /// No `node_modules/<package>/package.json` from the importer up to the root.
    NotInstalled { package: String },
    /// The package's `exports` does not export the subpath.
    NotExported { package: String, subpath: String },
    /// The file a relative import, an `exports` target or an entry field names is absent.
    Missing { path: String },
}

impl Unresolved {
    /// What went wrong and how to fix it, for a diagnostic about `specifier`.
    pub(crate) fn explain(&self, specifier: &str) -> String {
        match self {
            // The transform adds this import for JSX: the file's first line never wrote it.
            Self::NotInstalled { package } if is_jsx_runtime(specifier) => format!(
                "JSX compiles to calls of its runtime {specifier}, which is not installed: \
                 `npm install {package}`, or name your runtime at the top of the file \
                 (/** @jsxImportSource preact */), or map {specifier} in an import map"
            ),
            Self::NotInstalled { package } => format!(
                "Package is not installed: {specifier}. Install it (`npm install {package}`), or map \
                 it to a workspace file with an import map, for example \
                 <script type=\"importmap\">{{\"imports\":{{\"{specifier}\":\"./vendor/{package}.js\"}}}}</script>"
            ),
            Self::NotExported { package, subpath } => format!(
                "Package {package} does not export {subpath} (its package.json \"exports\" has no \
                 entry for it under the browser, import, module or default conditions): {specifier}"
            ),
            Self::Missing { path } => {
                format!("Module file is missing: {specifier} (looked for {path})")
            }
        }
    }
}

/// Whether `specifier` is an automatic JSX runtime (`react/jsx-runtime`, `preact/jsx-dev-runtime`).
fn is_jsx_runtime(specifier: &str) -> bool {
    specifier.ends_with("/jsx-runtime") || specifier.ends_with("/jsx-dev-runtime")
}

/// Resolves `specifier` written in `importer` (a workspace or package path).
pub(super) fn resolve(
    packages: &Packages,
    importer: &str,
    specifier: &str,
) -> Result<String, Unresolved> {
    let owner = owning_package(importer).and_then(|folder| {
        Some((
            packages.manifest(&format!("{folder}/package.json"))?,
            folder,
        ))
    });
    if specifier.starts_with("./") || specifier.starts_with("../") || specifier.starts_with('/') {
        let path = resolve_local_path(importer, specifier).ok_or_else(|| Unresolved::Missing {
            path: specifier.to_owned(),
        })?;
        let path = probe(packages, &path).ok_or(Unresolved::Missing { path })?;
        return match &owner {
            Some((manifest, folder)) => browser_replaced(packages, folder, manifest, path),
            None => Ok(path),
        };
    }
    if let Some((manifest, folder)) = &owner
        && let Some((_, target)) = manifest
            .browser
            .replacements
            .iter()
            .find(|(key, _)| key == specifier)
    {
        return browser_target(packages, folder, target.as_deref());
    }
    let (package, subpath) = split_bare(specifier).ok_or_else(|| Unresolved::NotInstalled {
        package: specifier.to_owned(),
    })?;
    for folder in package_folders(importer, package) {
        if let Some(manifest) = packages.manifest(&format!("{folder}/package.json")) {
            return resolve_in_package(packages, &folder, &manifest, package, &subpath);
        }
    }
    Err(Unresolved::NotInstalled {
        package: package.to_owned(),
    })
}

/// The folder of the installed package `path` is a file of (`node_modules/@s/p/lib/x.js` →
/// `node_modules/@s/p`), or `None` for a workspace file.
fn owning_package(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').collect();
    let at = segments
        .iter()
        .rposition(|segment| *segment == NODE_MODULES)?;
    let name = if segments.get(at + 1)?.starts_with('@') {
        2
    } else {
        1
    };
    (segments.len() > at + name + 1).then(|| segments[..=at + name].join("/"))
}

/// `path` (a file of the package in `folder`) as the package's `browser` replacements have it.
fn browser_replaced(
    packages: &Packages,
    folder: &str,
    manifest: &Manifest,
    path: String,
) -> Result<String, Unresolved> {
    let replaced = manifest.browser.replacements.iter().find(|(key, _)| {
        key.starts_with('.') && {
            let named = join(folder, key);
            named == path || probe(packages, &named).as_deref() == Some(path.as_str())
        }
    });
    match replaced {
        Some((_, target)) => browser_target(packages, folder, target.as_deref()),
        None => Ok(path),
    }
}

/// What a `browser` replacement names: a file of the package, or the empty module (`false`).
fn browser_target(
    packages: &Packages,
    folder: &str,
    target: Option<&str>,
) -> Result<String, Unresolved> {
    let Some(target) = target else {
        return Ok(EMPTY_MODULE.to_owned());
    };
    let path = join(folder, target);
    probe(packages, &path).ok_or(Unresolved::Missing { path })
}

/// `@scope/name/sub` → (`@scope/name`, `./sub`); `name` → (`name`, `.`).
fn split_bare(specifier: &str) -> Option<(&str, String)> {
    let segments = if specifier.starts_with('@') { 2 } else { 1 };
    let end = specifier
        .match_indices('/')
        .nth(segments - 1)
        .map_or(specifier.len(), |(at, _)| at);
    let package = &specifier[..end];
    let valid = !package.is_empty()
        && package.split('/').count() == segments
        && package
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    valid.then(|| (package, format!(".{}", &specifier[end..])))
}

/// Where `package` may be installed for `importer`, nearest first: `node_modules/<package>`
/// in the importer's folder and each folder above it (never `node_modules/node_modules`).
fn package_folders<'p>(importer: &'p str, package: &'p str) -> impl Iterator<Item = String> + 'p {
    let folders: Vec<&str> = importer.split('/').collect();
    let depth = folders.len().saturating_sub(1);
    (0..=depth).rev().filter_map(move |end| {
        let prefix = &folders[..end];
        if prefix.last() == Some(&NODE_MODULES) {
            return None;
        }
        let mut folder = prefix.join("/");
        if !folder.is_empty() {
            folder.push('/');
        }
        Some(format!("{folder}{NODE_MODULES}/{package}"))
    })
}

fn resolve_in_package(
    packages: &Packages,
    folder: &str,
    manifest: &Manifest,
    package: &str,
    subpath: &str,
) -> Result<String, Unresolved> {
    if let Some(exports) = &manifest.exports {
        let Pick::Path(target) = exported(exports, subpath) else {
            return Err(Unresolved::NotExported {
                package: package.to_owned(),
                subpath: subpath.to_owned(),
            });
        };
        let path = join(folder, &target);
        return match packages.read(&path) {
            Some(_) => Ok(path),
            None => Err(Unresolved::Missing { path }),
        };
    }
    let path = if subpath != "." {
        let path = join(folder, subpath);
        probe(packages, &path).ok_or(Unresolved::Missing { path })?
    } else {
        let entry = [&manifest.browser.entry, &manifest.module, &manifest.main]
            .into_iter()
            .flatten()
            .next()
            .map_or_else(|| "./index".to_owned(), |entry| entry.clone());
        let path = join(folder, &entry);
        probe(packages, &path)
            .or_else(|| probe(packages, &join(folder, "./index")))
            .ok_or(Unresolved::Missing { path })?
    };
    browser_replaced(packages, folder, manifest, path)
}

/// `folder` joined with the package-relative `target`, normalized (`..` cannot leave the root).
fn join(folder: &str, target: &str) -> String {
    let target = target.trim_start_matches('/');
    resolve_local_path(&format!("{folder}/package.json"), target)
        .unwrap_or_else(|| folder.to_owned())
}

/// The file `path` names: itself, with an extension, or its folder's `index`.
fn probe(packages: &Packages, path: &str) -> Option<String> {
    if packages.read(path).is_some() {
        return Some(path.to_owned());
    }
    let with_extensions = |base: String| {
        EXTENSIONS
            .iter()
            .map(move |extension| format!("{base}{extension}"))
    };
    with_extensions(path.to_owned())
        .chain(with_extensions(format!("{path}/index")))
        .find(|candidate| packages.read(candidate).is_some())
}

/// What an `exports` lookup found: a target, an explicit exclusion (`null`), or no match (the
/// next condition or fallback is tried).
#[derive(Debug, PartialEq, Eq)]
enum Pick {
    Path(String),
    Excluded,
    NoMatch,
}

/// The target `exports` gives `subpath` (`.` or `./…`).
fn exported(exports: &Exports, subpath: &str) -> Pick {
    let subpaths = match exports {
        Exports::Map(entries) if entries.iter().any(|(key, _)| key.starts_with('.')) => entries,
        other if subpath == "." => return target(other, None),
        _ => return Pick::NoMatch,
    };
    if let Some((_, value)) = subpaths.iter().find(|(key, _)| key == subpath) {
        return target(value, None);
    }
    best_pattern(subpaths, subpath).map_or(Pick::NoMatch, |(value, matched)| {
        target(value, Some(matched))
    })
}

/// The `*` pattern key matching `subpath` with the longest prefix (Node's key order), and
/// what its `*` matched; a legacy folder key (`./lib/`) matches as a prefix.
fn best_pattern<'e>(
    subpaths: &'e [(String, Exports)],
    subpath: &'e str,
) -> Option<(&'e Exports, &'e str)> {
    subpaths
        .iter()
        .filter_map(|(key, value)| {
            let matched = match key.split_once('*') {
                Some((prefix, suffix)) => subpath
                    .strip_prefix(prefix)?
                    .strip_suffix(suffix)
                    .filter(|_| subpath.len() >= prefix.len() + suffix.len())?,
                None if key.ends_with('/') => subpath.strip_prefix(key.as_str())?,
                None => return None,
            };
            let prefix_len = key.find('*').unwrap_or(key.len());
            Some((prefix_len, key.len(), value, matched))
        })
        .max_by_key(|(prefix_len, key_len, _, _)| (*prefix_len, *key_len))
        .map(|(_, _, value, matched)| (value, matched))
}

/// A target value under [`CONDITIONS`]; `star` replaces each `*` (or is appended to a
/// folder target).
fn target(value: &Exports, star: Option<&str>) -> Pick {
    match value {
        Exports::Target(path) if path.starts_with("./") => Pick::Path(match star {
            Some(matched) if path.contains('*') => path.replace('*', matched),
            Some(matched) if path.ends_with('/') => format!("{path}{matched}"),
            _ => path.clone(),
        }),
        Exports::Target(_) | Exports::Null => Pick::Excluded,
        Exports::List(items) => items
            .iter()
            .map(|item| target(item, star))
            .find(|pick| matches!(pick, Pick::Path(_)))
            .unwrap_or(Pick::Excluded),
        Exports::Map(conditions) => {
            for (condition, value) in conditions {
                if CONDITIONS.contains(&condition.as_str()) {
                    match target(value, star) {
                        Pick::NoMatch => continue,
                        found => return found,
                    }
                }
            }
            Pick::NoMatch
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use super::*;
    use crate::preview::packages::PackageFiles;

    struct Files(HashMap<&'static str, &'static str>);

    impl PackageFiles for Files {
        fn read(&self, path: &str) -> Option<Arc<str>> {
            self.0.get(path).map(|text| Arc::from(*text))
        }
    }

    fn packages(files: &[(&'static str, &'static str)]) -> Packages {
        Packages::new(Files(files.iter().copied().collect()))
    }

    #[test]
    fn exports_pick_conditions_in_the_packages_order_and_patterns_by_longest_prefix() {
        let packages = packages(&[
            (
                "node_modules/p/package.json",
                r#"{"exports":{".":{"node":"./node.js","import":"./esm.mjs","browser":"./browser.js"},
                   "./feature/*":{"require":"./cjs/*.js","default":"./esm/*.js"},
                   "./feature/special/*":"./special/*.js","./internal/*":null,"./package.json":"./package.json"}}"#,
            ),
            ("node_modules/p/esm.mjs", ""),
            ("node_modules/p/browser.js", ""),
            ("node_modules/p/esm/a.js", ""),
            ("node_modules/p/special/b.js", ""),
        ]);
        let resolve = |specifier| packages.resolve("src/main.js", specifier);
        assert_eq!(
            resolve("p").unwrap(),
            "node_modules/p/esm.mjs",
            "import is written before browser"
        );
        assert_eq!(resolve("p/feature/a").unwrap(), "node_modules/p/esm/a.js");
        assert_eq!(
            resolve("p/feature/special/b").unwrap(),
            "node_modules/p/special/b.js"
        );
        assert_eq!(
            resolve("p/internal/x"),
            Err(Unresolved::NotExported {
                package: "p".into(),
                subpath: "./internal/x".into()
            })
        );
        assert!(
            matches!(resolve("p/esm.mjs"), Err(Unresolved::NotExported { .. })),
            "exports encapsulate"
        );
        assert_eq!(
            resolve("p/package.json").unwrap(),
            "node_modules/p/package.json"
        );
    }

    #[test]
    fn without_exports_the_browser_module_main_fields_then_index_are_probed() {
        let packages = packages(&[
            (
                "node_modules/m/package.json",
                r#"{"main":"lib/main","module":"es/index.js"}"#,
            ),
            ("node_modules/m/es/index.js", ""),
            ("node_modules/m/lib/main.js", ""),
            ("node_modules/m/lib/util/index.js", ""),
            (
                "node_modules/@s/n/package.json",
                r#"{"main":"./dist/n.cjs"}"#,
            ),
            ("node_modules/@s/n/dist/n.cjs", ""),
            ("node_modules/i/package.json", r#"{}"#),
            ("node_modules/i/index.js", ""),
        ]);
        let resolve = |specifier| packages.resolve("main.js", specifier);
        assert_eq!(resolve("m").unwrap(), "node_modules/m/es/index.js");
        assert_eq!(
            resolve("m/lib/util").unwrap(),
            "node_modules/m/lib/util/index.js"
        );
        assert_eq!(resolve("@s/n").unwrap(), "node_modules/@s/n/dist/n.cjs");
        assert_eq!(resolve("i").unwrap(), "node_modules/i/index.js");
        assert_eq!(
            resolve("absent"),
            Err(Unresolved::NotInstalled {
                package: "absent".into()
            })
        );
        assert_eq!(
            resolve("@s"),
            Err(Unresolved::NotInstalled {
                package: "@s".into()
            })
        );
        assert!(matches!(resolve("m/nope"), Err(Unresolved::Missing { .. })));
    }

    #[test]
    fn the_browser_objects_replacements_apply_to_entries_files_and_modules() {
        let packages = packages(&[
            (
                "node_modules/b/package.json",
                r#"{"main":"lib/node.js","browser":{"./lib/node.js":"./lib/browser.js","./lib/fs-helper":false,"fs":false,"crypto":"./lib/web-crypto.js"}}"#,
            ),
            (
                "node_modules/b/lib/node.js",
                "require('./fs-helper'); require('fs'); require('crypto');",
            ),
            ("node_modules/b/lib/browser.js", ""),
            ("node_modules/b/lib/fs-helper.js", ""),
            ("node_modules/b/lib/web-crypto.js", ""),
        ]);
        assert_eq!(
            packages.resolve("main.js", "b").unwrap(),
            "node_modules/b/lib/browser.js"
        );
        assert_eq!(
            packages.resolve("main.js", "b/lib/node").unwrap(),
            "node_modules/b/lib/browser.js"
        );
        let inside = "node_modules/b/lib/browser.js";
        assert_eq!(
            packages.resolve(inside, "./fs-helper").unwrap(),
            EMPTY_MODULE
        );
        assert_eq!(packages.resolve(inside, "fs").unwrap(), EMPTY_MODULE);
        assert_eq!(
            packages.resolve(inside, "crypto").unwrap(),
            "node_modules/b/lib/web-crypto.js"
        );
        assert_eq!(packages.read(EMPTY_MODULE).as_deref(), Some(""));
        assert_eq!(
            owning_package("node_modules/@s/p/lib/x.js").as_deref(),
            Some("node_modules/@s/p")
        );
        assert_eq!(owning_package("src/x.js"), None);
    }

    #[test]
    fn the_nearest_node_modules_wins_and_relative_imports_stay_in_the_package() {
        let packages = packages(&[
            ("node_modules/a/package.json", r#"{"main":"index.js"}"#),
            ("node_modules/a/index.js", ""),
            ("node_modules/a/lib.js", ""),
            (
                "node_modules/a/node_modules/dep/package.json",
                r#"{"main":"v2.js"}"#,
            ),
            ("node_modules/a/node_modules/dep/v2.js", ""),
            ("node_modules/dep/package.json", r#"{"main":"v1.js"}"#),
            ("node_modules/dep/v1.js", ""),
        ]);
        assert_eq!(
            packages.resolve("node_modules/a/index.js", "dep").unwrap(),
            "node_modules/a/node_modules/dep/v2.js"
        );
        assert_eq!(
            packages.resolve("src/x.js", "dep").unwrap(),
            "node_modules/dep/v1.js"
        );
        assert_eq!(
            packages
                .resolve("node_modules/a/index.js", "./lib")
                .unwrap(),
            "node_modules/a/lib.js"
        );
    }

    #[test]
    fn a_missing_jsx_runtime_is_explained_as_jsxs_not_as_an_import_on_line_one() {
        let text = Unresolved::NotInstalled {
            package: "react".into(),
        }
        .explain("react/jsx-runtime");
        assert!(
            text.starts_with("JSX compiles to calls of its runtime react/jsx-runtime"),
            "{text}"
        );
        assert!(
            text.contains("npm install react") && text.contains("@jsxImportSource"),
            "{text}"
        );
    }

    #[test]
    fn a_fix_names_the_install_command_and_an_import_map_entry() {
        let text = Unresolved::NotInstalled {
            package: "preact".into(),
        }
        .explain("preact/hooks");
        assert!(text.contains("npm install preact"), "{text}");
        assert!(
            text.contains("\"preact/hooks\":\"./vendor/preact.js\""),
            "{text}"
        );
    }
}
