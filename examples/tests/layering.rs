//! The studio's layering (stated at the top of `src/lib.rs`) holds: imports flow from the
//! composition root down, with no import cycle between folders; and in the studio and every
//! workspace crate, sibling modules (the children of one module) never import each other in a
//! circle, so each folder reads as a stack from its leaves up.
//!
//! The check reads the sources: every `use` tree and every `crate::`/`super::`/`self::`/child
//! module path outside test modules is an edge from its file to the module file it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the top down; each may import only modules listed after it.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["host"],
    &["surfaces"],
    &["agent"],
    &["kit", "seed"],
    &["preview_edits"],
];

type Module = Vec<String>;

struct Tree {
    /// Module path -> source text (test modules cut off).
    sources: BTreeMap<Module, String>,
    /// Module path -> the child modules it declares.
    children: BTreeMap<Module, BTreeSet<String>>,
}

fn read_tree(src: &Path) -> Tree {
    let mut sources = BTreeMap::new();
    collect(src, src, &mut sources);
    let children = sources
        .iter()
        .map(|(module, text)| (module.clone(), declared_children(text)))
        .collect();
    Tree { sources, children }
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<Module, String>) {
    for entry in std::fs::read_dir(dir).expect("source folder readable") {
        let path = entry.expect("source entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "bin") {
                collect(root, &path, out);
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let text = std::fs::read_to_string(&path).expect("source file readable");
            out.insert(module_of(root, &path), without_tests(&strip(&text)));
        }
    }
}

fn module_of(root: &Path, file: &Path) -> Module {
    let relative = file.strip_prefix(root).expect("file under root");
    let mut parts: Module = relative
        .with_extension("")
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Source without comments and string contents (a path in a doc or a message is no import).
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut previous = ' ';
                for next in chars.by_ref() {
                    if previous == '*' && next == '/' {
                        break;
                    }
                    previous = next;
                }
            }
            '"' => {
                let mut escaped = false;
                for next in chars.by_ref() {
                    if !escaped && next == '"' {
                        break;
                    }
                    escaped = !escaped && next == '\\';
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Test modules sit at the end of a file and import their parent (`use super::*`).
fn without_tests(text: &str) -> String {
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_owned(),
        None => text.to_owned(),
    }
}

fn declared_children(text: &str) -> BTreeSet<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter(|pair| pair[0] == "mod" && pair[1].ends_with(';'))
        .map(|pair| pair[1].trim_end_matches(';').to_owned())
        .collect()
}

/// Every path a file mentions: expanded `use` trees and inline `a::b` paths.
fn mentioned_paths(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut remaining = text;
    while let Some(at) = find_use(remaining) {
        rest.push_str(&remaining[..at]);
        let tail = &remaining[at + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        expand_use(&[], &tail[..end], &mut paths);
        remaining = &tail[(end + 1).min(tail.len())..];
    }
    rest.push_str(remaining);
    for token in rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
        if token.contains("::") {
            paths.push(token.split("::").map(str::to_owned).collect());
        }
    }
    paths
}

fn find_use(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices("use ")
        .map(|(at, _)| at)
        .find(|&at| at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_'))
}

fn expand_use(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    for part in split_top_level(tree) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let mut path = prefix.to_vec();
        if let Some(open) = part.find('{') {
            let close = part.rfind('}').unwrap_or(part.len());
            path.extend(segments(&part[..open]));
            expand_use(&path, &part[open + 1..close], out);
        } else {
            let part = part.split(" as ").next().unwrap_or(part);
            path.extend(segments(part));
            out.push(path);
        }
    }
}

fn segments(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split("::")
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
}

fn split_top_level(tree: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (at, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&tree[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    parts
}

/// The module file `path` (mentioned in `module`) names, if it names one of ours.
fn resolve(tree: &Tree, module: &Module, path: &[String]) -> Option<Module> {
    let first = path.first()?.as_str();
    let mut full: Module = match first {
        "crate" => path[1..].to_vec(),
        "self" => module.iter().chain(&path[1..]).cloned().collect(),
        "super" => {
            let ups = path
                .iter()
                .take_while(|segment| *segment == "super")
                .count();
            let base = &module[..module.len().checked_sub(ups)?];
            base.iter().chain(&path[ups..]).cloned().collect()
        }
        child if tree.children[module].contains(child) => {
            module.iter().chain(path).cloned().collect()
        }
        _ => return None,
    };
    while !tree.sources.contains_key(&full) {
        full.pop()?;
    }
    Some(full)
}

fn import_graph(tree: &Tree) -> BTreeMap<Module, BTreeSet<Module>> {
    tree.sources
        .iter()
        .map(|(module, text)| {
            let targets = mentioned_paths(text)
                .iter()
                .filter_map(|path| resolve(tree, module, path))
                .filter(|target| target != module)
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

/// The folder a module belongs to: its own when it has children, else its parent's.
fn folder(tree: &Tree, module: &Module) -> String {
    if tree.children[module].is_empty() {
        module[..module.len().saturating_sub(1)].join("/")
    } else {
        module.join("/")
    }
}

/// Strongly connected components (Tarjan), largest first.
fn cycles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        components: Vec<Vec<Module>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a Module) {
        let order = state.index.len();
        state.index.insert(node, (order, order));
        state.stack.push(node);
        state.on_stack.insert(node);
        for next in &state.graph[node] {
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.index[next].1.min(state.index[node].1);
                state.index.get_mut(node).expect("visited").1 = low;
            } else if state.on_stack.contains(next) {
                let low = state.index[next].0.min(state.index[node].1);
                state.index.get_mut(node).expect("visited").1 = low;
            }
        }
        if state.index[node].0 == state.index[node].1 {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.push(member.clone());
                if member == node {
                    break;
                }
            }
            state.components.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.components
}

fn layer_of(module: &Module) -> Option<usize> {
    let top = module.first()?;
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top.as_str()))
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `src` folders of every workspace crate with a library, the studio's included.
const CRATE_SOURCES: &[&str] = &[
    "tool-protocol",
    "tool-context",
    "tool-context-macros",
    "tool-context-mcp",
    "tool-durable-operations",
    "durable-faults",
    "live-code-editor",
    "openrouter-client",
    "examples",
    "benches",
];

fn crate_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

/// The import graph seen between siblings: an import from `a::x::…` of `a::y::…` is an edge
/// `a::x -> a::y`. Imports between a module and its own ancestors (a child using its parent's
/// items, a parent re-exporting a child's) are not sibling edges.
fn sibling_graph(graph: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut siblings: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, targets) in graph {
        for to in targets {
            let shared = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if shared < from.len() && shared < to.len() {
                let (from, to) = (from[..=shared].to_vec(), to[..=shared].to_vec());
                siblings.entry(to.clone()).or_default();
                siblings.entry(from).or_default().insert(to);
            }
        }
    }
    siblings
}

/// Every circle among sibling modules, each as its members' paths.
fn sibling_cycles(src: &Path) -> Vec<Vec<String>> {
    let tree = read_tree(src);
    cycles(&sibling_graph(&import_graph(&tree)))
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut names: Vec<_> = component.iter().map(|m| m.join("::")).collect();
            names.sort();
            names
        })
        .collect()
}

#[test]
fn no_import_cycle_spans_two_folders() {
    let tree = read_tree(&source_root());
    let graph = import_graph(&tree);
    let crossing: Vec<_> = cycles(&graph)
        .into_iter()
        .filter(|component| {
            let folders: BTreeSet<_> = component.iter().map(|m| folder(&tree, m)).collect();
            folders.len() > 1
        })
        .map(|component| component.iter().map(|m| m.join("::")).collect::<Vec<_>>())
        .collect();
    assert!(
        crossing.is_empty(),
        "import cycles across folders: {crossing:#?}"
    );
}

#[test]
fn imports_flow_from_the_composition_root_down() {
    let tree = read_tree(&source_root());
    let mut upward = Vec::new();
    for (module, targets) in import_graph(&tree) {
        let Some(from) = layer_of(&module) else {
            continue;
        };
        for target in targets {
            if let Some(to) = layer_of(&target)
                && to < from
            {
                upward.push(format!("{} -> {}", module.join("::"), target.join("::")));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the layering: {upward:#?}"
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let tree = read_tree(&source_root());
    let unplaced: BTreeSet<_> = tree
        .sources
        .keys()
        .filter_map(|module| module.first())
        .filter(|top| !LAYERS.iter().any(|layer| layer.contains(&top.as_str())))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules outside the layering: {unplaced:?}"
    );
}

#[test]
fn no_crate_has_sibling_modules_importing_each_other_in_a_circle() {
    let circles: BTreeMap<_, _> = CRATE_SOURCES
        .iter()
        .map(|name| (*name, sibling_cycles(&crate_source(name))))
        .filter(|(_, circles)| !circles.is_empty())
        .collect();
    assert!(
        circles.is_empty(),
        "sibling modules importing each other in a circle: {circles:#?}"
    );
}

#[test]
fn the_sibling_check_sees_a_circle_through_nested_modules_but_not_a_parent_link() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |path: &str, text: &str| {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    };
    write(
        "lib.rs",
        "mod pipeline;\nmod registry;\nmod leaf;\npub use registry::Registry;\n",
    );
    write("pipeline.rs", "use crate::registry::frozen::Frozen;\n");
    write("registry/mod.rs", "pub mod frozen;\nuse super::leaf::X;\n");
    write("registry/frozen.rs", "fn f() { crate::pipeline::run(); }\n");
    write("leaf.rs", "use crate::Registry;\n");
    let circles = sibling_cycles(dir.path());
    assert_eq!(
        circles,
        vec![vec!["pipeline".to_owned(), "registry".to_owned()]]
    );
    write("registry/frozen.rs", "fn f() { super::run(); }\n");
    assert!(
        sibling_cycles(dir.path()).is_empty(),
        "a child using its parent and a module using the crate root are no circle"
    );
}

#[test]
fn the_check_sees_a_cycle_and_an_upward_import() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |path: &str, text: &str| {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    };
    write("lib.rs", "pub mod host;\npub mod kit;\n");
    write(
        "host/mod.rs",
        "pub mod server;\nuse crate::kit::{events::Hub, x};\n",
    );
    write("host/server.rs", "fn f() { super::run(); }\n");
    write("kit/mod.rs", "pub mod events;\n");
    write(
        "kit/events.rs",
        "// crate::host in a comment is no import\nuse crate::host::server;\n",
    );
    let tree = read_tree(dir.path());
    let graph = import_graph(&tree);
    let host = vec!["host".to_owned()];
    let events = vec!["kit".to_owned(), "events".to_owned()];
    assert!(graph[&host].contains(&events));
    let server = vec!["host".to_owned(), "server".to_owned()];
    assert!(graph[&server].contains(&host));
    assert!(graph[&events].contains(&server));
    let spanning = cycles(&graph)
        .into_iter()
        .any(|component| component.contains(&host) && component.contains(&events));
    assert!(
        spanning,
        "host -> kit::events -> host::server -> host is a cycle"
    );
    assert!(layer_of(&events) > layer_of(&host));
}
