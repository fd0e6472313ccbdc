//! The safe runner scenarios: a fixed list of named data sets handed to the preview, plus the
//! example sources `editor.resetDocument` restores. A scenario is *data* (a `data-scenario`
//! attribute and a JSON block in the preview document), never source the host runs.

use live_code_editor::WorkspaceFile;
use live_code_editor::file::Language;
use lol_html::html_content::ContentType;
use lol_html::{RewriteStrSettings, element, rewrite_str};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `id` of the JSON block carrying the scenario in the preview document.
pub(crate) const SCENARIO_BLOCK_ID: &str = "editor-scenario";
/// Attribute of the preview's `<html>` element naming the scenario.
pub(crate) const SCENARIO_ATTRIBUTE: &str = "data-scenario";

/// One of the editor's named scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// A counter starting at 0, stepping by 1.
    Counter,
    /// Greets a fixed list of names.
    Greeting,
    /// A small to-do list.
    TodoList,
}

/// A scenario as the page lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioInfo {
    /// Wire name (`counter`, `greeting`, `todo-list`).
    pub name: Scenario,
    /// Display title.
    pub title: &'static str,
    /// What it demonstrates.
    pub description: &'static str,
}

impl Scenario {
    /// Every scenario, default first.
    pub const ALL: [Self; 3] = [Self::Counter, Self::Greeting, Self::TodoList];

    /// The scenario a fresh editor starts with.
    pub const DEFAULT: Self = Self::Counter;

    /// Wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Greeting => "greeting",
            Self::TodoList => "todo-list",
        }
    }

    /// The scenario whose name is `name` (also matches `todo` for the to-do list).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "todo" => Some(Self::TodoList),
            _ => Self::ALL
                .into_iter()
                .find(|scenario| scenario.name() == name),
        }
    }

    /// Title and description.
    pub fn info(self) -> ScenarioInfo {
        let (title, description) = match self {
            Self::Counter => (
                "Counter",
                "A counter the runner steps through: start and step.",
            ),
            Self::Greeting => ("Greeting", "A list of names the runner greets one by one."),
            Self::TodoList => ("To-do list", "A to-do list with done and open items."),
        };
        ScenarioInfo {
            name: self,
            title,
            description,
        }
    }

    /// The data the preview receives.
    pub fn data(self) -> Value {
        match self {
            Self::Counter => json!({"start": 0, "step": 1, "label": "Clicks"}),
            Self::Greeting => json!({"names": ["Ada", "Grace", "Linus"], "greeting": "Hello"}),
            Self::TodoList => json!({"items": [
                {"text": "Write the spec", "done": true},
                {"text": "Review the patch", "done": false},
                {"text": "Ship it", "done": false}
            ]}),
        }
    }

    /// The example source of `language` (HTML, CSS and JavaScript have one).
    pub fn example(self, language: Language) -> Option<&'static str> {
        match language {
            Language::Html => Some(match self {
                Self::Counter => COUNTER_HTML,
                Self::Greeting => GREETING_HTML,
                Self::TodoList => TODO_HTML,
            }),
            Language::Css => Some(STYLES_CSS),
            Language::Javascript => Some(RUNNER_JS),
            _ => None,
        }
    }
}

/// The editor's seed workspace: the default scenario's examples and one image asset.
pub(crate) fn seed_files() -> Vec<WorkspaceFile> {
    let scenario = Scenario::DEFAULT;
    let example = |language| scenario.example(language).unwrap_or_default();
    vec![
        WorkspaceFile::text("index.html", example(Language::Html)),
        WorkspaceFile::text("styles.css", example(Language::Css)),
        WorkspaceFile::text("app.js", example(Language::Javascript)),
        WorkspaceFile::asset("assets/logo.svg", LOGO_SVG.as_bytes().to_vec()),
    ]
}

/// Adds the scenario to a compiled preview document: `data-scenario` on `<html>` and a
/// `<script type="application/json" id="editor-scenario">` block at the start of `<head>`
/// (or of the document when it has no head). JSON is escaped so it cannot close the block.
pub(crate) fn inject_scenario(html: &str, scenario: Scenario) -> String {
    let block = scenario_block(scenario);
    let mut injected = false;
    let settings = RewriteStrSettings::new()
        .append_element_content_handler(element!("html", |el| {
            el.set_attribute(SCENARIO_ATTRIBUTE, scenario.name())?;
            Ok(())
        }))
        .append_element_content_handler(element!("head", |el| {
            if !injected {
                el.prepend(&block, ContentType::Html);
                injected = true;
            }
            Ok(())
        }));
    match rewrite_str(html, settings) {
        Ok(rewritten) if injected => rewritten,
        Ok(rewritten) => format!("{block}{rewritten}"),
        Err(_) => format!("{block}{html}"),
    }
}

fn scenario_block(scenario: Scenario) -> String {
    let payload = json!({"name": scenario.name(), "data": scenario.data()}).to_string();
    // `<` never appears unescaped, so no `</script>` or `<!--` can end the block early.
    let payload = payload.replace('<', "\\u003c");
    format!(r#"<script type="application/json" id="{SCENARIO_BLOCK_ID}">{payload}</script>"#)
}

const LOGO_SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#0f766e"/><path d="M9 11l-4 5 4 5M23 11l4 5-4 5M18 8l-4 16" stroke="#fff" stroke-width="2.5" fill="none" stroke-linecap="round"/></svg>"##;

const STYLES_CSS: &str = r#"body {
  font-family: system-ui, sans-serif;
  margin: 0;
  padding: 2rem;
  background: #f0fdfa;
  color: #134e4a;
}

header {
  display: flex;
  align-items: center;
  gap: 0.75rem;
}

#output {
  margin-top: 1.5rem;
  padding: 1rem;
  border-radius: 0.75rem;
  background: #ffffff;
  box-shadow: 0 1px 3px rgb(0 0 0 / 0.12);
}

button {
  font: inherit;
  padding: 0.4rem 1rem;
  border: 0;
  border-radius: 999px;
  background: #0f766e;
  color: #ffffff;
  cursor: pointer;
}

.done {
  text-decoration: line-through;
  opacity: 0.6;
}
"#;

const COUNTER_HTML: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Counter runner</title>
  <link rel="stylesheet" href="styles.css">
</head>
<body>
  <header>
    <img src="assets/logo.svg" alt="" width="32" height="32">
    <h1>Counter runner</h1>
  </header>
  <main id="output">
    <p><span id="label">Count</span>: <strong id="count">0</strong></p>
    <button id="step" type="button">Step</button>
  </main>
  <script src="app.js"></script>
</body>
</html>
"#;

const GREETING_HTML: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Greeting runner</title>
  <link rel="stylesheet" href="styles.css">
</head>
<body>
  <header>
    <img src="assets/logo.svg" alt="" width="32" height="32">
    <h1>Greeting runner</h1>
  </header>
  <main id="output">
    <ul id="greetings"></ul>
  </main>
  <script src="app.js"></script>
</body>
</html>
"#;

const TODO_HTML: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>To-do runner</title>
  <link rel="stylesheet" href="styles.css">
</head>
<body>
  <header>
    <img src="assets/logo.svg" alt="" width="32" height="32">
    <h1>To-do runner</h1>
  </header>
  <main id="output">
    <ol id="items"></ol>
    <p id="summary"></p>
  </main>
  <script src="app.js"></script>
</body>
</html>
"#;

/// The one `app.js` of every scenario: it renders whichever scenario the preview names into
/// `#output`, building missing elements, so switching the scenario (data only) or resetting a
/// single file never leaves the script reaching for another scenario's markup. Its built button
/// is not labelled "Step", so that word stays unique to index.html for the replace example.
const RUNNER_JS: &str = r#"// Renders the runner scenario (data, never code) into #output, whichever scenario it is.
const block = document.getElementById('editor-scenario');
const scenario = block ? JSON.parse(block.textContent) : { name: 'counter', data: {} };
const data = scenario.data || {};
const output = document.getElementById('output') || document.body;
// The counter's label when the scenario names none (one literal, so a replace edits it all).
const defaultLabel = 'Count';

function make(tag, text, id) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (id) node.id = id;
  return node;
}

// Keeps the page's own counter markup when it has one (so edits to it show), else builds it.
function counter() {
  if (!document.getElementById('count') || !document.getElementById('step')) {
    const line = make('p');
    line.append(make('span', defaultLabel, 'label'), ': ', make('strong', '0', 'count'));
    const button = make('button', 'Advance', 'step');
    button.type = 'button';
    output.replaceChildren(line, button);
  }
  let count = Number(data.start || 0);
  const step = Number(data.step || 1);
  const label = document.getElementById('label');
  if (label) label.textContent = data.label || defaultLabel;
  const value = document.getElementById('count');
  value.textContent = String(count);
  document.getElementById('step').addEventListener('click', () => {
    count += step;
    value.textContent = String(count);
  });
}

function greeting() {
  const list = make('ul', undefined, 'greetings');
  for (const name of data.names || []) list.append(make('li', `${data.greeting || 'Hello'}, ${name}!`));
  output.replaceChildren(list);
}

function todoList() {
  const items = data.items || [];
  const list = make('ol', undefined, 'items');
  for (const entry of items) {
    const item = make('li', entry.text);
    item.classList.toggle('done', Boolean(entry.done));
    list.append(item);
  }
  const open = items.filter((entry) => !entry.done).length;
  output.replaceChildren(list, make('p', `${open} open of ${items.length}`, 'summary'));
}

const renderers = { counter, greeting, 'todo-list': todoList };
(renderers[scenario.name] || counter)();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_every_scenario_has_examples() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::parse(scenario.name()), Some(scenario));
            assert_eq!(
                serde_json::to_value(scenario).unwrap(),
                json!(scenario.name())
            );
            for language in [Language::Html, Language::Css, Language::Javascript] {
                assert!(scenario.example(language).is_some());
            }
            assert!(scenario.example(Language::Markdown).is_none());
        }
        assert_eq!(Scenario::parse("todo"), Some(Scenario::TodoList));
        assert_eq!(Scenario::parse("runScript"), None);
    }

    #[test]
    fn one_app_script_renders_every_scenario() {
        // A reset of one file must not pair it with another scenario's script.
        for scenario in Scenario::ALL {
            let script = scenario.example(Language::Javascript).unwrap();
            assert_eq!(script, RUNNER_JS);
            let renderer = format!("'{}'", scenario.name());
            let listed =
                script.contains(&renderer) || script.contains(&format!(" {},", scenario.name()));
            assert!(listed, "app.js renders {}", scenario.name());
        }
    }

    #[test]
    fn the_scenario_is_injected_as_data() {
        let html = inject_scenario(
            "<!doctype html><html><head><title>t</title></head><body></body></html>",
            Scenario::Greeting,
        );
        assert!(
            html.contains(r#"<html data-scenario="greeting">"#),
            "{html}"
        );
        let block_start = html.find(SCENARIO_BLOCK_ID).unwrap();
        assert!(block_start < html.find("<title>").unwrap());
        assert!(html.contains(r#""names":["Ada","Grace","Linus"]"#));
        let headless = inject_scenario("<p>no head</p>", Scenario::Counter);
        assert!(headless.starts_with(r#"<script type="application/json""#));
    }

    #[test]
    fn the_json_block_cannot_be_closed_early() {
        let block = scenario_block(Scenario::TodoList);
        let inner = &block[..block.len() - "</script>".len()];
        assert!(!inner[1..].contains('<'), "{block}");
    }
}
