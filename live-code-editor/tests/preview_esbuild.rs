//! The TypeScript/JSX preview compiler against esbuild (issue 38): each module of the `tsx-app`
//! fixture, and small snippets written here, is mounted into `#root` by an entry module; headless
//! Chromium must build the same `#root` from our standalone export as from esbuild's bundle of
//! the same workspace (`--bundle --format=esm`, the import map given as aliases, decorators as
//! TypeScript's experimental ones, inlined into a page opened from `file://`).
//!
//! Needs esbuild (`ESBUILD_BIN`, else the npm peer in `examples/tests/mcp_node`) and Chromium
//! (`CHROMIUM_BIN`); `bash scripts/test.sh` installs both. Without them the tests fail.

mod preview_support;

use std::path::Path;

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::export_standalone_html;
use preview_support::{esbuild_root, load_fixture, rendered_root};

/// The import map every case's entry declares (the `tsx-app` fixture's), as specifier and target.
const IMPORTS: [(&str, &str); 3] = [
    ("mini", "./vendor/mini/index.js"),
    ("mini/jsx-runtime", "./vendor/mini/jsx-runtime.js"),
    ("react/jsx-runtime", "./vendor/mini/jsx-runtime.js"),
];

/// The `tsx-app` fixture with `entry` as its page's module and `files` added.
fn workspace(entry: &str, files: &[(&str, &str)]) -> Vec<WorkspaceFile> {
    let mut workspace: Vec<WorkspaceFile> = load_fixture("tsx-app")
        .into_iter()
        .filter(|file| file.path != "index.html")
        .collect();
    workspace.extend(
        files
            .iter()
            .map(|(path, source)| WorkspaceFile::text(*path, *source)),
    );
    workspace.push(WorkspaceFile::text("index.html", index_html(entry)));
    workspace
}

fn index_html(entry: &str) -> String {
    let imports: serde_json::Map<String, serde_json::Value> = IMPORTS
        .iter()
        .map(|(specifier, target)| ((*specifier).to_owned(), (*target).into()))
        .collect();
    format!(
        "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
         <script type=\"importmap\">{}</script>\n\
         <script type=\"module\" src=\"{entry}\"></script>\n\
         </head>\n<body>\n<div id=\"root\"></div>\n</body>\n</html>\n",
        serde_json::json!({ "imports": imports })
    )
}

/// `#root` built by our standalone export of `files`.
fn root_from_export(files: &[WorkspaceFile], dir: &Path) -> String {
    let compiled = export_standalone_html(files);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    let page = dir.join("export.html");
    std::fs::write(&page, &compiled.html).unwrap();
    rendered_root(&page)
}

/// `#root` built by esbuild's bundle of `files` from `entry`, inlined into a page like ours.
fn root_from_esbuild(files: &[WorkspaceFile], entry: &str, dir: &Path) -> String {
    let site = dir.join("site");
    for file in files {
        let target = site.join(&file.path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, file.source().expect("a text file")).unwrap();
    }
    let mut args = vec![entry.to_owned(), "--jsx=automatic".to_owned()];
    // esbuild resolves an alias's target from its working directory, as the map does from the
    // page.
    args.extend(
        IMPORTS
            .iter()
            .map(|(specifier, target)| format!("--alias:{specifier}={target}")),
    );
    // Decorators compile as TypeScript's experimental ones, as the preview compiler's do.
    args.push(r#"--tsconfig-raw={"compilerOptions":{"experimentalDecorators":true}}"#.to_owned());
    esbuild_root(&site, &args, dir)
}

/// Mounts `entry` (with `files` added to the fixture) both ways and compares the `#root`s.
fn assert_same_root_as_esbuild(entry: &str, files: &[(&str, &str)]) {
    let files = workspace(entry, files);
    let dir = tempfile::tempdir().unwrap();
    let ours = root_from_export(&files, dir.path());
    let theirs = root_from_esbuild(&files, entry, dir.path());
    assert_ne!(ours, r#"<div id="root"></div>"#, "{entry} rendered nothing");
    assert_eq!(
        ours, theirs,
        "#root differs for {entry}: ours (left) vs esbuild (right)"
    );
}

#[test]
fn the_fixture_entry_main_tsx_renders_as_with_esbuild() {
    assert_same_root_as_esbuild("src/main.tsx", &[]);
}

#[test]
fn the_fixture_app_tsx_renders_as_with_esbuild() {
    let probe = r#"import { mount } from 'mini';
import { App } from './App';

const root = document.getElementById('root')!;
mount(<App start={40} />, root);
(root.querySelector('#inc') as HTMLButtonElement).click();
"#;
    assert_same_root_as_esbuild("src/probe.tsx", &[("src/probe.tsx", probe)]);
}

#[test]
fn the_fixture_color_ts_renders_as_with_esbuild() {
    let probe = r#"import { Color, label, Palette } from './color.js';

document.getElementById('root')!.textContent = JSON.stringify({
  Color,
  tag: Palette.tag ?? 'none',
  red: label(Color.Red),
  green: label(Color.Green),
  missing: label(7 as Color) ?? null,
});
"#;
    assert_same_root_as_esbuild("src/probe.ts", &[("src/probe.ts", probe)]);
}

#[test]
fn the_fixture_legacy_jsx_renders_as_with_esbuild() {
    let probe = r#"import { mount } from 'mini';
import { Legacy } from './legacy.jsx';

mount(<Legacy />, document.getElementById('root'));
"#;
    assert_same_root_as_esbuild("src/probe.jsx", &[("src/probe.jsx", probe)]);
}

#[test]
fn the_fixture_types_ts_renders_as_with_esbuild() {
    // A module of types only: nothing of it is left at run time.
    let probe = r#"import type { Props } from './types';
import * as types from './types';

const props: Props = { start: 1 };
document.getElementById('root')!.textContent = JSON.stringify({ props, exports: Object.keys(types) });
"#;
    assert_same_root_as_esbuild("src/probe.ts", &[("src/probe.ts", probe)]);
}

#[test]
fn enums_and_namespaces_render_as_with_esbuild() {
    let enums = r#"import { mount } from 'mini';

enum Direction {
  Up = 1,
  Down,
  Left = Up + 10,
  Right,
}
enum Direction {
  Center = 100,
}
enum Answer {
  Yes = 'yes',
  No = 'no',
}
const enum Flag {
  A = 1 << 0,
  B = 1 << 1,
  AB = A | B,
}
namespace Geometry {
  export const unit = 2;
  export function area(side: number): number {
    return side * side * unit;
  }
}

mount(
  <dl>
    {Object.entries(Direction).map(([name, value]) => (
      <div data-name={name}>{String(value)}</div>
    ))}
    <dd>{Answer.No}</dd>
    <dd>{Flag.AB}</dd>
    <dd>{Direction[Direction.Right]}</dd>
    <dd>{Geometry.area(3)}</dd>
  </dl>,
  document.getElementById('root')!,
);
"#;
    assert_same_root_as_esbuild("src/enums.tsx", &[("src/enums.tsx", enums)]);
}

#[test]
fn generics_type_only_imports_and_satisfies_render_as_with_esbuild() {
    let model = r#"export interface Item {
  id: number;
  name: string;
}
export type Sorter<T> = (a: T, b: T) => number;
export const byName: Sorter<Item> = (a, b) => a.name.localeCompare(b.name);

export class Shelf<T extends Item> {
  readonly #items: T[] = [];
  constructor(public readonly title: string) {}
  add(...items: T[]): this {
    this.#items.push(...items);
    return this;
  }
  sorted(sorter: Sorter<T>): T[] {
    return [...this.#items].sort(sorter);
  }
}
"#;
    let generics = r#"import { mount } from 'mini';
import type { Item } from './model';
import { type Sorter, byName, Shelf } from './model';

type ListProps<T> = { items: readonly T[]; render: (item: T) => string };

function List<T extends Item>({ items, render }: ListProps<T>) {
  return <ol>{items.map((item) => <li data-id={item.id}>{render(item)}</li>)}</ol>;
}

const first = <T,>(items: readonly T[]): T | undefined => items[0];
const reverse: Sorter<Item> = (a, b) => byName(b, a);
const config = { title: 'Shelf', limit: 3 } satisfies Record<string, string | number>;
const shelf = new Shelf<Item>(config.title).add(
  { id: 2, name: 'beta' },
  { id: 1, name: 'alpha' },
  { id: 3, name: 'gamma' },
);
const items = shelf.sorted(byName);

mount(
  <section title={shelf.title}>
    <List<Item> items={items} render={(item) => `${item.id}:${item.name}`} />
    <List items={shelf.sorted(reverse)} render={(item) => item.name.toUpperCase()} />
    <p>{first(items)!.name as string}</p>
    <p>{(config.limit satisfies number) * 2}</p>
  </section>,
  document.getElementById('root')!,
);
"#;
    assert_same_root_as_esbuild(
        "src/generics.tsx",
        &[("src/model.ts", model), ("src/generics.tsx", generics)],
    );
}

#[test]
fn fragments_text_and_entities_render_as_with_esbuild() {
    let fragments = r#"import { mount } from 'mini';
import { Fragment } from 'mini/jsx-runtime';

const words = ['one', 'two', 'three'];
const empty: string[] = [];

function Pair({ left, right }: { left: string; right?: string }) {
  return (
    <>
      <dt>{left}</dt>
      {right && <dd>{right}</dd>}
    </>
  );
}

mount(
  <>
    <dl>
      {words.map((word, index) => (
        <Fragment key={word}>
          <Pair left={word} right={index % 2 ? undefined : word.toUpperCase()} />
        </Fragment>
      ))}
    </dl>
    <p>
      Text   across
      lines &amp; entities&nbsp;&copy; {'{braces}'}   stays{' '}
      <b>bold</b>{empty.length === 0 ? <i>none</i> : null}
    </p>
    <p title="quote &quot; amp &amp;">{false}{null}{undefined}{0}{''}</p>
    <>
      <></>
      nested
    </>
  </>,
  document.getElementById('root')!,
);
"#;
    assert_same_root_as_esbuild("src/fragments.tsx", &[("src/fragments.tsx", fragments)]);
}

#[test]
fn a_classic_pragma_jsx_module_renders_as_with_esbuild() {
    let classic = r#"/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
import { h, Fragment, mount } from 'mini';

const attributes = { id: 'spread', 'data-x': '1' };

function Card({ title, children }) {
  return (
    <article {...attributes} data-title={title}>
      {children}
    </article>
  );
}

mount(
  <>
    <Card title="first">
      <span>a</span>
      {' '}
      <span>b</span>
    </Card>
    <p {...attributes} id="override">last wins</p>
    {[1, 2].map((n) => <em>{n}</em>)}
  </>,
  document.getElementById('root'),
);
"#;
    assert_same_root_as_esbuild("src/classic.jsx", &[("src/classic.jsx", classic)]);
}
