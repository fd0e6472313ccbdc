//! The entry's phases: stylesheet links, scripts and the module graph, assets, inline styles and
//! CSS references (reported in that order), then the plan the entry is rewritten for.

use std::sync::Arc;

use super::Compiler;
use super::memo::HtmlScanResult;
use super::module_graph::{ModuleSource, RenderedGraph};
use super::pieces::{CachedTemplate, InlinedLink};
use super::stylesheets::CssRoot;
use crate::file::Language;
use crate::preview::PreviewTarget;
use crate::preview::bridge;
use crate::preview::diagnostics::{DiagnosticKind, Location, ReferenceLabel};
use crate::preview::html::{
    self, HtmlPlan, HtmlScan, ScriptAction, StyleElement, Template, escape_attribute,
    escape_raw_text,
};
use crate::preview::import_map::IMPORT_MAP_FILE;
use crate::preview::resolve::{self, WorkspaceIndex, workspace_module_specifier};

impl<'a> Compiler<'a> {
    /// Compiles the entry; diagnostics are emitted in the reference order.
    pub(super) fn compile_entry(
        &mut self,
        entry_path: &'a str,
        source: &'a str,
        scan_result: &Arc<HtmlScanResult>,
        scan: &HtmlScan,
    ) -> (String, usize) {
        let links = self.plan_stylesheet_links(entry_path, source, scan);
        let (scripts, roots) = self.plan_scripts(entry_path, source, scan);
        self.declare_workspace_import_map();
        let graph = self.rendered_module_graph(roots);
        for asset in &scan.assets {
            let location = Some(Location::new(source, asset.offset));
            self.report_reference(
                ReferenceLabel::Asset,
                entry_path,
                &asset.value,
                location,
                true,
            );
        }
        let styles = self.plan_inline_styles(entry_path, source, scan);
        let mut roots = css_roots(&self.index, entry_path, source, scan);
        let imported = std::mem::take(&mut self.module_stylesheets);
        roots.extend(
            imported
                .into_iter()
                .map(|(path, css)| CssRoot::file(path, css)),
        );
        self.report_css_references(roots);
        let module_count = graph.module_count;
        let plan = self.finish_plan(links, scripts, styles, &graph, scan, entry_path);
        match self.rewrite_entry(entry_path, source, scan_result, scan, &plan) {
            Ok(document) => (document, module_count),
            Err(error) => {
                self.live_stylesheets = None;
                (self.unreadable_entry(entry_path, &error.to_string()), 0)
            }
        }
    }

    /// Phase 1: each stylesheet link becomes an inlined `<style>` or is removed.
    fn plan_stylesheet_links(
        &mut self,
        entry_path: &'a str,
        source: &str,
        scan: &HtmlScan,
    ) -> Vec<Option<StyleElement>> {
        let mut links = Vec::with_capacity(scan.links.len());
        let mut stylesheets = Vec::with_capacity(scan.links.len());
        for link in &scan.links {
            let location = Some(Location::new(source, link.href.offset));
            self.report_reference(
                ReferenceLabel::Stylesheet,
                entry_path,
                &link.href.value,
                location,
                false,
            );
            let Some((path, css)) =
                self.index
                    .find_text(entry_path, &link.href.value, Language::Css)
            else {
                links.push(None);
                continue;
            };
            let inlined = self.inlined_link(entry_path, path, css, link.media.as_deref());
            links.push(Some(inlined.element));
            stylesheets.push(inlined.text);
        }
        self.live_stylesheets = Some(stylesheets);
        links
    }

    /// The `<style>` element a link to the stylesheet `path` becomes, as a piece.
    fn inlined_link(
        &mut self,
        entry_path: &str,
        path: &'a str,
        css: &'a str,
        media: Option<&str>,
    ) -> InlinedLink {
        let key = (path.to_owned(), media.map(str::to_owned));
        self.through_cache(
            |pieces| (&mut pieces.changes, &mut pieces.links),
            key,
            |compiler| {
                compiler.index.note_read_of(path);
                let inlined = compiler.inline_stylesheet(path, path, css);
                let text: Arc<str> = Arc::from(escape_raw_text(&inlined, "style").as_ref());
                let media = media
                    .map(|media| format!(" media=\"{}\"", escape_attribute(media)))
                    .unwrap_or_default();
                let element = StyleElement {
                    start: format!(
                        "<style data-workspace-source=\"{}\"{media}>",
                        escape_attribute(path)
                    )
                    .into(),
                    text: text.clone(),
                };
                let element = if compiler.take_or_report(element.len(), entry_path, path) {
                    element
                } else {
                    StyleElement {
                        start: "<style>".into(),
                        text: "".into(),
                    }
                };
                InlinedLink { element, text }
            },
        )
    }

    /// Reads an inline `<script type="importmap">` of the entry (`src` maps are not fetched
    /// by browsers either), reporting one it cannot use.
    fn declare_import_map(&mut self, entry_path: &str, source: &str, script: &html::ScriptTag) {
        let location = Location::new(source, script.text_offset.unwrap_or_default());
        let declared = match &script.src {
            Some(_) => Err("an import map with src is not loaded; write it inline".to_owned()),
            None => self.import_map.declare(entry_path, &script.text),
        };
        self.report_unusable_import_map(entry_path, location, declared);
    }

    /// Reads the workspace's [`IMPORT_MAP_FILE`] after the entry's own maps.
    fn declare_workspace_import_map(&mut self) {
        let Some((path, json)) = self.index.text_of(IMPORT_MAP_FILE, Language::Json) else {
            return;
        };
        let declared = self.import_map.declare(path, json);
        self.report_unusable_import_map(path, Location::new(json, 0), declared);
    }

    fn report_unusable_import_map(
        &mut self,
        path: &str,
        location: Location<'_>,
        declared: Result<(), String>,
    ) {
        if let Err(reason) = declared {
            self.sink.other(
                DiagnosticKind::ModuleSyntaxError,
                path,
                path,
                Some(location),
                format!("Import map could not be used: {reason}"),
            );
        }
    }

    /// Phase 2: classic scripts are inlined, module scripts queued as graph roots.
    fn plan_scripts(
        &mut self,
        entry_path: &'a str,
        source: &'a str,
        scan: &HtmlScan,
    ) -> (Vec<ScriptAction>, Vec<ModuleSource<'a>>) {
        let mut actions = Vec::with_capacity(scan.scripts.len());
        let mut roots = Vec::new();
        for (index, script) in scan.scripts.iter().enumerate() {
            if script.import_map {
                self.declare_import_map(entry_path, source, script);
                actions.push(ScriptAction::Remove);
                continue;
            }
            let Some(src) = &script.src else {
                if script.module {
                    let base = script.text_offset.unwrap_or_default();
                    let text = source
                        .get(base..base + script.text.len())
                        .unwrap_or_default();
                    roots.push(ModuleSource {
                        path: entry_path,
                        source: text,
                        position_source: source,
                        position_base: base,
                        inline_index: Some(index),
                    });
                }
                actions.push(ScriptAction::Keep);
                continue;
            };
            let location = Some(Location::new(source, src.offset));
            self.report_reference(
                ReferenceLabel::Script,
                entry_path,
                &src.value,
                location,
                false,
            );
            let found = if script.module {
                self.index.find_script(entry_path, &src.value)
            } else {
                self.index
                    .find_text(entry_path, &src.value, Language::Javascript)
            };
            let Some((path, javascript)) = found else {
                actions.push(ScriptAction::Remove);
                continue;
            };
            if script.module {
                roots.push(ModuleSource::file(path, javascript));
                let statement = format!(
                    "import {};",
                    resolve::json_string(&workspace_module_specifier(path))
                );
                let statement = self.within_budget(statement, entry_path, path, String::new());
                actions.push(ScriptAction::Inline(statement.into()));
            } else {
                let inlined = self.escaped_script(entry_path, path, javascript);
                actions.push(ScriptAction::Inline(inlined));
            }
        }
        (actions, roots)
    }

    /// The inlined text of the classic script `path`, as a piece.
    fn escaped_script(&mut self, entry_path: &str, path: &'a str, javascript: &str) -> Arc<str> {
        self.through_cache(
            |pieces| (&mut pieces.changes, &mut pieces.scripts),
            path.to_owned(),
            |compiler| {
                compiler.index.note_read_of(path);
                let escaped = escape_raw_text(javascript, "script");
                if compiler.take_or_report(escaped.len(), entry_path, path) {
                    Arc::from(escaped.as_ref())
                } else {
                    Arc::from("")
                }
            },
        )
    }

    /// Inline `<style>` elements get the same `@import` and `url()` treatment as files.
    fn plan_inline_styles(
        &mut self,
        entry_path: &'a str,
        source: &'a str,
        scan: &HtmlScan,
    ) -> Vec<Option<String>> {
        let mut styles = Vec::with_capacity(scan.styles.len());
        for (index, style) in scan.styles.iter().enumerate() {
            let base = style.text_offset.unwrap_or_default();
            let text = source
                .get(base..base + style.text.len())
                .unwrap_or_default();
            let key = inline_style_key(entry_path, index);
            let inlined = self.inline_stylesheet(entry_path, &key, text);
            if self.imports_stylesheet(&key, text) {
                // Its text depends on workspace stylesheets, and only a reload replaces it.
                self.live_stylesheets = None;
            }
            if inlined == text {
                styles.push(None);
            } else {
                let escaped = escape_raw_text(&inlined, "style").into_owned();
                styles.push(Some(self.within_budget(
                    escaped,
                    entry_path,
                    entry_path,
                    String::new(),
                )));
            }
        }
        styles
    }

    /// Assembles the plan: rewritten inline modules, the bootstrap and the head injection.
    fn finish_plan(
        &mut self,
        links: Vec<Option<StyleElement>>,
        mut scripts: Vec<ScriptAction>,
        styles: Vec<Option<String>>,
        graph: &RenderedGraph,
        scan: &HtmlScan,
        entry_path: &str,
    ) -> HtmlPlan {
        for (index, source) in &graph.inline {
            let fallback = "throw new Error(\"Preview output limit reached\");".to_owned();
            let inlined = self.within_budget(
                escape_raw_text(source, "script").into_owned(),
                entry_path,
                entry_path,
                fallback,
            );
            scripts[*index] = ScriptAction::Inline(inlined.into());
        }
        let first_module = scan
            .scripts
            .iter()
            .zip(&scripts)
            .position(|(script, action)| script.module && *action != ScriptAction::Remove);
        let bootstrap = first_module.zip(graph.bootstrap.clone());
        let mut head = String::from("<meta charset=\"utf-8\">");
        if self.options.content_security_policy {
            head.push_str(&format!(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
                escape_attribute(&self.content_security_policy())
            ));
        }
        if let PreviewTarget::Preview {
            revision: Some(revision),
            ..
        } = &self.options.target
        {
            head.push_str(&bridge::bridge_script(*revision));
        }
        HtmlPlan {
            links,
            scripts,
            styles,
            bootstrap,
            head,
        }
    }

    /// Phase 6: the entry rewritten for the plan. An incremental compiler fills the template
    /// it kept when the entry scan and plan shape are the same and every asset URL the
    /// template wrote is asked again (taking its budget, in order) and answered the same.
    fn rewrite_entry(
        &mut self,
        entry_path: &str,
        source: &str,
        scan_result: &Arc<HtmlScanResult>,
        scan: &HtmlScan,
        plan: &HtmlPlan,
    ) -> Result<String, lol_html::errors::RewritingError> {
        let shape = plan.shape();
        let kept = self
            .pieces
            .as_deref_mut()
            .and_then(|pieces| pieces.template.take())
            .filter(|kept| Arc::ptr_eq(&kept.scan, scan_result) && kept.shape == shape);
        let mut answered = Vec::new();
        let template = match kept {
            Some(kept) if self.ask_again(entry_path, &kept.template, &mut answered) => {
                kept.template
            }
            _ => {
                let mut answered = answered.into_iter();
                html::rewrite_template(source, scan, &shape, &mut |value| {
                    answered
                        .next()
                        .unwrap_or_else(|| self.asset_url_for(entry_path, value))
                })?
            }
        };
        let document = template.fill(plan);
        if let Some(pieces) = self.pieces.as_deref_mut() {
            pieces.template = Some(CachedTemplate {
                scan: scan_result.clone(),
                shape,
                template,
            });
        }
        Ok(document)
    }

    /// Asks for each asset URL `template` wrote, in order, until an answer differs; `true`
    /// when none did. `answered` gets every answer (each took its budget).
    fn ask_again(
        &mut self,
        entry_path: &str,
        template: &Template,
        answered: &mut Vec<Option<Arc<str>>>,
    ) -> bool {
        for (requested, answer) in &template.asset_calls {
            let fresh = self.asset_url_for(entry_path, requested);
            let same = fresh == *answer;
            answered.push(fresh);
            if !same {
                return false;
            }
        }
        true
    }

    /// The policy: no network; inline and Blob/data scripts and styles; assets from the host
    /// (preview) or `data:` (export).
    fn content_security_policy(&self) -> String {
        let assets = match &self.options.target {
            PreviewTarget::Preview { asset_base, .. } => asset_source(asset_base),
            PreviewTarget::Export => String::new(),
        };
        format!(
            "default-src 'none'; script-src 'unsafe-inline' blob: data:; style-src 'unsafe-inline' blob: data:{assets}; \
img-src blob: data:{assets}; font-src blob: data:{assets}; media-src blob: data:{assets}; object-src data:{assets}; \
worker-src blob:; base-uri 'none'; form-action 'none'"
        )
    }
}

fn inline_style_key(entry_path: &str, index: usize) -> String {
    format!("{entry_path}\u{0}style\u{0}{index}")
}

/// Phase 5 roots: link stylesheets and inline `<style>` elements in document order.
fn css_roots<'a>(
    index: &WorkspaceIndex<'a>,
    entry_path: &'a str,
    source: &'a str,
    scan: &HtmlScan,
) -> Vec<CssRoot<'a>> {
    let mut roots: Vec<CssRoot<'a>> = Vec::new();
    for link in &scan.links {
        if let Some((path, css)) = index.find_text(entry_path, &link.href.value, Language::Css)
            && !roots.iter().any(|root| root.key == path)
        {
            roots.push(CssRoot::file(path, css));
        }
    }
    for (position, style) in scan.styles.iter().enumerate() {
        let base = style.text_offset.unwrap_or_default();
        let text = source
            .get(base..base + style.text.len())
            .unwrap_or_default();
        roots.push(CssRoot {
            path: entry_path,
            key: inline_style_key(entry_path, position),
            source: text,
            position_source: source,
            position_base: base,
        });
    }
    roots
}

/// CSP source for host-served assets: the origin of an absolute base, else `'self'`.
fn asset_source(asset_base: &str) -> String {
    let Some((scheme, rest)) = asset_base.split_once("://") else {
        return " 'self'".to_owned();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let valid = !scheme.is_empty()
        && scheme
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "+.-".contains(character))
        && !authority.is_empty()
        && authority
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-.:[]".contains(character));
    if valid {
        format!(" {scheme}://{authority}")
    } else {
        " 'self'".to_owned()
    }
}
