//! Tools added to a built registry in named groups, each group replaced atomically: an MCP
//! server's tools, mounted when it connects and swapped whole when it changes its list.
//!
//! The builder's tools stay frozen and are looked up first, so a registry without mounts pays
//! one empty-map check on a miss and nothing on a hit. A mounted tool goes through the same
//! pipeline as a built one (allowlist, validation, policy, approval, timeout, budget,
//! idempotency); only its lifetime differs.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use crate::registered::{NameHasher, RegisteredTool, register};
use crate::tool::Tool;

/// What [`ToolRegistry::mount`](crate::ToolRegistry::mount) did with a group's tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MountReport {
    /// Names now callable, in the order given.
    pub mounted: Vec<String>,
    /// Tools left out, each with why.
    pub skipped: Vec<SkippedTool>,
}

/// A tool a mount left out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedTool {
    /// The name it was offered under.
    pub name: String,
    /// Why it was left out (an invalid schema, a name another tool already has...).
    pub reason: String,
}

impl SkippedTool {
    /// A skipped tool and its reason.
    pub fn new(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            reason: reason.into(),
        }
    }
}

/// The mounted groups of one registry and a counter that moves whenever they change.
pub(crate) struct Mounts {
    current: RwLock<Arc<MountedCatalog>>,
    changes: watch::Sender<u64>,
}

impl Default for Mounts {
    fn default() -> Self {
        Self {
            current: RwLock::default(),
            changes: watch::Sender::new(0),
        }
    }
}

#[derive(Default)]
pub(crate) struct MountedCatalog {
    /// Groups in mount order, each with its tools in the order given.
    groups: Vec<(String, Vec<Arc<RegisteredTool>>)>,
    by_name: HashMap<String, Arc<RegisteredTool>, NameHasher>,
}

impl Mounts {
    /// The groups as they are now; a later mount swaps in another catalog, not this one.
    pub(crate) fn snapshot(&self) -> Arc<MountedCatalog> {
        Arc::clone(
            &self
                .current
                .read()
                .unwrap_or_else(|poison| poison.into_inner()),
        )
    }

    fn swap(&self, change: impl FnOnce(&MountedCatalog) -> MountedCatalog) {
        {
            let mut current = self
                .current
                .write()
                .unwrap_or_else(|poison| poison.into_inner());
            let next = change(&current);
            *current = Arc::new(next);
        }
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// The mounted tool named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.snapshot().by_name.get(name).map(Arc::clone)
    }

    /// Mounts `tools` as `group`, replacing what it held; a name `built` (the frozen
    /// catalog), another group or an earlier tool of this group already has is skipped.
    pub(crate) fn mount(
        &self,
        group: &str,
        tools: Vec<Tool>,
        built: &HashMap<String, Arc<RegisteredTool>, NameHasher>,
    ) -> MountReport {
        let mut report = MountReport::default();
        self.swap(|current| {
            let mut others = current.without(group);
            let mut registered = Vec::with_capacity(tools.len());
            for tool in tools {
                let name = tool.definition.name.clone();
                if built.contains_key(&name) || others.by_name.contains_key(&name) {
                    report.skipped.push(SkippedTool::new(
                        name,
                        "another tool of the registry already has this name",
                    ));
                    continue;
                }
                match register(tool) {
                    Ok(tool) => {
                        let tool = Arc::new(tool);
                        others.by_name.insert(name.clone(), Arc::clone(&tool));
                        registered.push(tool);
                        report.mounted.push(name);
                    }
                    Err(error) => report
                        .skipped
                        .push(SkippedTool::new(name, error.to_string())),
                }
            }
            others.groups.push((group.to_owned(), registered));
            others
        });
        report
    }

    /// Removes `group`; `false` when no such group was mounted.
    pub(crate) fn unmount(&self, group: &str) -> bool {
        let mut found = false;
        self.swap(|current| {
            found = current.groups.iter().any(|(name, _)| name == group);
            current.without(group)
        });
        found
    }

    /// Names of the tools mounted as `group`, in mount order.
    pub(crate) fn tool_names(&self, group: &str) -> Vec<String> {
        self.snapshot()
            .groups
            .iter()
            .filter(|(name, _)| name == group)
            .flat_map(|(_, tools)| tools.iter().map(|tool| tool.definition.name.clone()))
            .collect()
    }

    /// A receiver whose value moves on every change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

impl MountedCatalog {
    fn without(&self, group: &str) -> Self {
        let groups: Vec<_> = self
            .groups
            .iter()
            .filter(|(name, _)| name != group)
            .cloned()
            .collect();
        Self::from_groups(groups)
    }

    fn from_groups(groups: Vec<(String, Vec<Arc<RegisteredTool>>)>) -> Self {
        let by_name = groups
            .iter()
            .flat_map(|(_, tools)| tools)
            .map(|tool| (tool.definition.name.clone(), Arc::clone(tool)))
            .collect();
        Self { groups, by_name }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Every mounted tool, group by group.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.groups.iter().flat_map(|(_, tools)| tools)
    }
}
