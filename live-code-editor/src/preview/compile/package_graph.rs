//! Installed packages in the module graph: a bare import no import map provides resolves
//! through [`Packages`](crate::preview::Packages), and the package files the workspace's
//! modules reach are added to the import map (their own budget: [`MAX_PACKAGE_MODULES`]).

use std::collections::HashSet;
use std::sync::Arc;

use super::Compiler;
use crate::preview::diagnostics::{DiagnosticKind, Location};
use crate::preview::modules::ModuleRequest;
use crate::preview::packages::{MAX_PACKAGE_MODULES, NodeEnv, PackageModule, package_marker};
use crate::preview::resolve::{throwing_module_url, workspace_module_specifier};

impl Compiler<'_> {
    /// The specifier a bare import resolves to in the installed packages (the file is queued),
    /// or a module that throws why it does not, reported as an error; `None` when the compile
    /// has no packages.
    pub(crate) fn rewrite_package_request(
        &mut self,
        from: &str,
        request: &ModuleRequest,
        at: Option<Location<'_>>,
        enqueue: &mut dyn FnMut(&str),
    ) -> Option<String> {
        let packages = self.options.packages.as_ref()?;
        let requested = request.specifier.trim();
        Some(match packages.resolve(from, requested) {
            Ok(path) => {
                enqueue(&package_marker(&path));
                workspace_module_specifier(&path)
            }
            Err(why) => {
                let message = why.explain(requested);
                let thrown = throwing_module_url(&message, &request.names);
                self.sink.other(
                    DiagnosticKind::UnsupportedModuleReference,
                    from,
                    requested,
                    at,
                    message,
                );
                thrown
            }
        })
    }

    /// Adds the package files `roots` name, and every package file they load, to `modules`.
    pub(crate) fn add_package_modules(
        &mut self,
        roots: Vec<String>,
        modules: &mut Vec<(String, Arc<str>)>,
    ) {
        let Some(packages) = self.options.packages.clone() else {
            return;
        };
        let env = if self.runs_in_preview() {
            NodeEnv::Development
        } else {
            NodeEnv::Production
        };
        let mut queued: HashSet<String> = roots.iter().cloned().collect();
        let mut queue = roots;
        for next in 0.. {
            let Some(path) = queue.get(next).cloned() else {
                break;
            };
            if next == MAX_PACKAGE_MODULES {
                self.report_package_limit(&path);
                break;
            }
            let module = packages.module(&path, env);
            self.report_package_module(&path, &module);
            for (specifier, text) in &module.entries {
                if self.take_or_report(text.len(), &path, &path) {
                    modules.push((specifier.clone(), text.clone()));
                }
            }
            for import in &module.imports {
                if queued.insert(import.clone()) {
                    queue.push(import.clone());
                }
            }
        }
    }

    fn report_package_module(&mut self, path: &str, module: &PackageModule) {
        let source = module.source.as_deref().unwrap_or_default();
        for report in &module.reports {
            let location = report.offset.map(|offset| Location::new(source, offset));
            let kind = DiagnosticKind::UnsupportedModuleReference;
            if report.error {
                self.sink.other(
                    kind,
                    path,
                    &report.requested,
                    location,
                    report.message.clone(),
                );
            } else {
                self.sink.package_warning(
                    kind,
                    path,
                    &report.requested,
                    location,
                    report.message.clone(),
                );
            }
        }
    }

    fn report_package_limit(&mut self, path: &str) {
        self.sink.other(
            DiagnosticKind::ModuleGraphLimit,
            path,
            path,
            None,
            format!(
                "Package module limit ({MAX_PACKAGE_MODULES}) reached; this and later package files were not loaded: {path}"
            ),
        );
    }
}
