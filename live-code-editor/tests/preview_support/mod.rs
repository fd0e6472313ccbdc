//! Shared helpers for the preview integration tests: fixture loading and headless Chromium.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use live_code_editor::WorkspaceFile;
use live_code_editor::file::is_asset_path;

/// The fixture folder `name` under `tests/fixtures`.
pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Loads a fixture folder as a workspace snapshot (paths relative, `/`-separated, sorted).
pub fn load_fixture(name: &str) -> Vec<WorkspaceFile> {
    let root = fixture_dir(name);
    let mut files = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let bytes = std::fs::read(&path).expect("fixture file");
            files.push(if is_asset_path(&relative) {
                WorkspaceFile::asset(relative, bytes)
            } else {
                WorkspaceFile::text(relative, String::from_utf8(bytes).expect("utf-8 fixture"))
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// The Chromium binary (`CHROMIUM_BIN`, default `/usr/bin/chromium`). Panics when missing:
/// the browser tests fail rather than skip.
pub fn chromium_bin() -> PathBuf {
    let bin = PathBuf::from(
        std::env::var("CHROMIUM_BIN").unwrap_or_else(|_| "/usr/bin/chromium".to_owned()),
    );
    assert!(
        bin.exists(),
        "headless Chromium is required for this test: {} not found (`bash scripts/test.sh` \
         installs Debian's chromium; or set CHROMIUM_BIN)",
        bin.display()
    );
    bin
}

/// Loads `page` in headless Chromium and returns the serialized DOM after the virtual time
/// budget (timers and module loading run to completion in virtual time).
pub fn dump_dom(page: &Path) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let output = Command::new(chromium_bin())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 DOM")
}

/// The esbuild binary (`ESBUILD_BIN`, default the npm peer in `examples/tests/mcp_node`).
/// Panics when missing: the differential tests fail rather than skip.
pub fn esbuild_bin() -> PathBuf {
    let bin = std::env::var_os("ESBUILD_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../examples/tests/mcp_node/node_modules/.bin/esbuild")
        });
    assert!(
        bin.is_file(),
        "esbuild is required for this test: {} not found (`bash scripts/test.sh` installs it \
         with `npm ci` in examples/tests/mcp_node; or set ESBUILD_BIN)",
        bin.display()
    );
    bin
}

/// The element with `id` in a DOM serialized by Chromium (`dump_dom`), from its start tag to
/// the end tag that balances it. Chromium escapes `<` in text, so tags are the only `<`s.
pub fn element_by_id(dom: &str, id: &str) -> Option<String> {
    let start = dom[..dom.find(&format!(" id=\"{id}\""))?].rfind('<')?;
    let name: String = dom[start + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let (open, close) = (format!("<{name}"), format!("</{name}>"));
    let mut depth = 0usize;
    let mut cursor = start;
    loop {
        let next_close = cursor + dom[cursor..].find(&close)?;
        match start_tag(dom, cursor, &open) {
            Some(next_open) if next_open < next_close => {
                depth += 1;
                cursor = next_open + open.len();
            }
            _ => {
                depth -= 1;
                cursor = next_close + close.len();
                if depth == 0 {
                    return Some(dom[start..cursor].to_owned());
                }
            }
        }
    }
}

/// The next `open` (`<div`) from `from` that starts a tag of exactly that name.
fn start_tag(dom: &str, from: usize, open: &str) -> Option<usize> {
    let mut cursor = from;
    loop {
        let at = cursor + dom[cursor..].find(open)?;
        let after = dom[at + open.len()..].chars().next();
        if matches!(after, Some(' ' | '>' | '/')) {
            return Some(at);
        }
        cursor = at + open.len();
    }
}

/// `#root` as Chromium builds it from `page`.
pub fn rendered_root(page: &Path) -> String {
    let dom = dump_dom(page);
    element_by_id(&dom, "root").unwrap_or_else(|| panic!("no #root in\n{dom}"))
}

/// `#root` built by esbuild's bundle (`--bundle --format=esm` plus `args`, the entry among
/// them) of the folder `site`, inlined into a page like our exports (one `#root`), written in
/// `dir`. esbuild must exit 0 and warn of nothing.
pub fn esbuild_root(site: &Path, args: &[String], dir: &Path) -> String {
    let bundle = dir.join("bundle.js");
    let output = Command::new(esbuild_bin())
        .current_dir(site)
        .args([
            "--bundle",
            "--format=esm",
            "--log-level=warning",
            "--log-limit=0",
        ])
        .args(args)
        .arg(format!("--outfile={}", bundle.display()))
        .output()
        .expect("run esbuild");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.trim().is_empty(),
        "esbuild {}: {stderr}",
        output.status
    );
    let script = std::fs::read_to_string(&bundle)
        .unwrap()
        .replace("</script", "<\\/script");
    let page = dir.join("esbuild.html");
    std::fs::write(
        &page,
        format!(
            "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
             <script type=\"module\">{script}</script>\n\
             </head>\n<body>\n<div id=\"root\"></div>\n</body>\n</html>\n"
        ),
    )
    .unwrap();
    rendered_root(&page)
}
