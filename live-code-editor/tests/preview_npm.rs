//! Real npm projects in the preview (issue 57): workspaces importing packages installed in
//! `node_modules` — ES module packages (preact, lodash-es, date-fns, zustand) and CommonJS ones
//! (react, react-dom) — compile with no diagnostics, and headless Chromium builds the same
//! `#root` from our standalone export as from esbuild's bundle of the same folder
//! (`--bundle --format=esm`). An import nothing installs is an error that names its fix.
//!
//! The packages are the `tests/fixtures/npm` lockfile's, installed by `bash scripts/test.sh`
//! (`npm ci`); esbuild and Chromium as for `preview_esbuild`.

mod preview_support;

use std::path::{Path, PathBuf};

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{
    CompiledPreview, DiagnosticKind, Packages, PreviewOptions, Severity, compile_preview,
};
use preview_support::{dump_dom, element_by_id, esbuild_root, fixture_dir, rendered_root};

/// The installed fixture packages (fails with the command to install them).
fn installed_node_modules() -> PathBuf {
    let node_modules = fixture_dir("npm").join("node_modules");
    assert!(
        node_modules.join("react/package.json").is_file(),
        "the npm fixture packages are not installed: run `npm ci` in {} (bash scripts/test.sh does)",
        fixture_dir("npm").display()
    );
    node_modules
}

/// A site folder holding `files` and a link to the installed `node_modules`.
fn site(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<WorkspaceFile>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(installed_node_modules(), root.join("node_modules")).unwrap();
    let mut workspace = vec![WorkspaceFile::text(
        "index.html",
        "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
         <script type=\"module\" src=\"main.jsx\"></script>\n</head>\n\
         <body>\n<div id=\"root\"></div>\n</body>\n</html>\n",
    )];
    workspace.extend(
        files
            .iter()
            .map(|(path, source)| WorkspaceFile::text(*path, *source)),
    );
    for file in &workspace {
        std::fs::write(root.join(&file.path), file.source().unwrap()).unwrap();
    }
    (dir, workspace)
}

fn site_root(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("site")
}

/// `#root` from our standalone export of the site.
fn root_from_export(dir: &tempfile::TempDir, files: &[WorkspaceFile]) -> String {
    let options = PreviewOptions::export().with_packages(Packages::folder(site_root(dir)));
    let compiled = compile_preview(files, &options);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:#?}",
        compiled.diagnostics
    );
    let page = dir.path().join("export.html");
    std::fs::write(&page, &compiled.html).unwrap();
    rendered_root(&page)
}

/// `#root` from esbuild's bundle of the site's `main.jsx`.
fn root_from_esbuild(dir: &tempfile::TempDir) -> String {
    let args = ["main.jsx", "--jsx=automatic"].map(str::to_owned);
    esbuild_root(&site_root(dir), &args, dir.path())
}

/// Our standalone export of the site, its packages read from its `node_modules`.
fn export_site(dir: &tempfile::TempDir, files: &[WorkspaceFile]) -> CompiledPreview {
    let options = PreviewOptions::export().with_packages(Packages::folder(site_root(dir)));
    compile_preview(files, &options)
}

/// Renders `main.jsx` both ways; both must build the same, non-empty `#root`.
fn assert_renders_as_with_esbuild(main: &str, expected_text: &str) {
    let (dir, files) = site(&[("main.jsx", main)]);
    let ours = root_from_export(&dir, &files);
    let theirs = root_from_esbuild(&dir);
    assert!(ours.contains(expected_text), "ours rendered {ours}");
    assert_eq!(
        ours, theirs,
        "#root differs: ours (left) vs esbuild (right)"
    );
}

#[test]
fn preact_with_hooks_renders_as_with_esbuild() {
    assert_renders_as_with_esbuild(
        r#"/** @jsxImportSource preact */
import { render } from 'preact';
import { useState, useMemo } from 'preact/hooks';

function Counter({ start }) {
  const [count] = useState(start);
  const doubled = useMemo(() => count * 2, [count]);
  return <p class="counter">Count {count}, doubled {doubled}</p>;
}

render(<Counter start={21} />, document.getElementById('root'));
"#,
        "Count 21, doubled 42",
    );
}

#[test]
fn react_and_react_dom_from_commonjs_render_as_with_esbuild() {
    assert_renders_as_with_esbuild(
        r#"import React, { useState, Fragment } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';

function List() {
  const [items] = useState(['one', 'two']);
  return <Fragment><ul>{items.map((item) => <li key={item}>{item}</li>)}</ul><p>React {typeof React.createElement}</p></Fragment>;
}

const root = createRoot(document.getElementById('root'));
flushSync(() => root.render(<List />));
"#,
        "<li>two</li>",
    );
}

#[test]
fn lodash_es_date_fns_and_zustand_render_as_with_esbuild() {
    assert_renders_as_with_esbuild(
        r#"import { chunk, capitalize } from 'lodash-es';
import { addDays, format } from 'date-fns';
import { createStore } from 'zustand/vanilla';

const store = createStore((set) => ({ count: 1, add: () => set((state) => ({ count: state.count + 1 })) }));
store.getState().add();
document.getElementById('root').textContent = JSON.stringify([
  chunk([1, 2, 3, 4, 5], 2),
  capitalize('hello'),
  format(addDays(new Date(2024, 0, 30), 3), 'yyyy-MM-dd'),
  store.getState().count,
]);
"#,
        "2024-02-02",
    );
}

#[test]
fn an_import_nothing_installs_is_an_error_that_names_its_fix() {
    let (dir, files) = site(&[(
        "main.jsx",
        "import { render } from 'preact';\nimport confetti from 'canvas-confetti';\nconfetti();\n",
    )]);
    let compiled = export_site(&dir, &files);
    assert!(compiled.has_errors(), "{:#?}", compiled.diagnostics);
    let [diagnostic] = compiled.diagnostics.as_slice() else {
        panic!("one diagnostic: {:#?}", compiled.diagnostics);
    };
    assert_eq!(diagnostic.kind, DiagnosticKind::UnsupportedModuleReference);
    assert_eq!(diagnostic.severity, Severity::Error);
    assert_eq!(diagnostic.source_path, "main.jsx");
    assert_eq!((diagnostic.line, diagnostic.column), (Some(2), Some(22)));
    assert!(
        diagnostic.message.contains("npm install canvas-confetti"),
        "{}",
        diagnostic.message
    );
    assert!(
        diagnostic.message.contains("importmap"),
        "{}",
        diagnostic.message
    );
}

#[test]
fn one_copy_of_react_serves_every_importer() {
    let (dir, files) = site(&[(
        "main.jsx",
        "import { createRoot } from 'react-dom/client';\nimport { useState } from 'react';\nexport { createRoot, useState };\n",
    )]);
    let compiled = export_site(&dir, &files);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:#?}",
        compiled.diagnostics
    );
    let registered = |path: &str| compiled.html.matches(&format!("{path}\":")).count();
    assert_eq!(
        registered("workspace-module/node_modules/react/index.js"),
        1,
        "one react facade"
    );
    assert_eq!(
        registered("commonjs-module/node_modules/react/index.js"),
        1,
        "one react body"
    );
    assert_eq!(
        registered("commonjs-module/node_modules/react/cjs/react.production.js"),
        1,
        "export mode loads the production build"
    );
}

/// The files of create-vite's `react-ts` template (from the fixture lockfile's `create-vite`),
/// copied into `root` as `npm create vite` does.
fn copy_vite_react_ts_template(root: &Path) {
    let template = installed_node_modules().join("create-vite/template-react-ts");
    let mut pending = vec![template.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(&template).unwrap();
            let target = root.join(
                relative
                    .to_string_lossy()
                    .replace("_gitignore", ".gitignore"),
            );
            if path.is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                pending.push(path);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
}

/// `#root` with every `src` value emptied: ours are `data:` URLs of the workspace files, and
/// esbuild's `dataurl` loader encodes the same bytes another way.
fn without_src_values(root: &str) -> String {
    let mut out = String::new();
    let mut rest = root;
    while let Some(at) = rest.find(" src=\"") {
        let value = at + " src=\"".len();
        out.push_str(&rest[..value]);
        rest = &rest[value..];
        rest = &rest[rest.find('"').unwrap()..];
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn the_vite_react_ts_template_renders_as_with_esbuild() {
    use live_code_editor::OsFolder;
    use live_code_editor::workspace::folder::FolderAdapter;

    let dir = tempfile::tempdir().unwrap();
    let root = site_root(&dir);
    std::fs::create_dir_all(&root).unwrap();
    copy_vite_react_ts_template(&root);
    std::os::unix::fs::symlink(installed_node_modules(), root.join("node_modules")).unwrap();
    // The studio's and the CLI's folder read: node_modules is read on demand, not imported.
    let import = OsFolder::open(&root).unwrap().read().await.unwrap();
    assert!(
        import
            .files
            .iter()
            .all(|file| !file.path.starts_with("node_modules"))
    );

    let compiled = export_site(&dir, &import.files);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:#?}",
        compiled.diagnostics
    );
    let page = dir.path().join("export.html");
    std::fs::write(&page, &compiled.html).unwrap();
    let dom = dump_dom(&page);
    for stylesheet in ["src/index.css", "src/App.css"] {
        assert!(
            dom.contains(&format!("<style data-workspace-source=\"{stylesheet}\">")),
            "{stylesheet} is injected by its import"
        );
    }
    let ours = element_by_id(&dom, "root").unwrap();
    assert!(
        ours.contains("<h1>Vite + React</h1>") && ours.contains("count is 0"),
        "{ours}"
    );
    assert_eq!(
        ours.matches("src=\"data:image/svg+xml;base64,").count(),
        2,
        "{ours}"
    );

    // esbuild has no public folder: its copy imports the logo from there by a relative path.
    let app = root.join("src/App.tsx");
    let text = std::fs::read_to_string(&app).unwrap();
    std::fs::write(&app, text.replace("'/vite.svg'", "'../public/vite.svg'")).unwrap();
    let args = ["src/main.tsx", "--jsx=automatic", "--loader:.svg=dataurl"].map(str::to_owned);
    let theirs = esbuild_root(&root, &args, dir.path());
    assert_eq!(
        without_src_values(&ours),
        without_src_values(&theirs),
        "#root differs: ours (left) vs esbuild (right)"
    );
}
