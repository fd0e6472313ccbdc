//! Tools added to a built registry in named groups, each group replaced atomically: an MCP
//! server's tools, mounted when it connects and swapped whole when it changes its list.
//!
//! The builder's tools stay frozen and are looked up first, so a registry without mounts pays
//! one empty-map check on a miss and nothing on a hit. A mounted tool goes through the same
//! pipeline as a built one (allowlist, validation, policy, approval, timeout, budget,
//! idempotency); only its lifetime differs.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;
use tool_protocol::ToolDefinition;

use crate::registry::{NameHasher, RegisteredTool, RegistryInner, ToolRegistry, register};
use crate::tool::Tool;

/// What [`ToolRegistry::mount`] did with a group's tools.
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
    fn snapshot(&self) -> Arc<MountedCatalog> {
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

    fn tools(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.groups.iter().flat_map(|(_, tools)| tools)
    }
}

/// A tool found by name: borrowed from the frozen catalog, or held from a mounted group (which
/// may be swapped out while the call runs; the call keeps the tool it started with).
pub(crate) enum ToolRef<'r> {
    Built(&'r RegisteredTool),
    Mounted(Arc<RegisteredTool>),
}

impl Deref for ToolRef<'_> {
    type Target = RegisteredTool;

    fn deref(&self) -> &RegisteredTool {
        match self {
            Self::Built(tool) => tool,
            Self::Mounted(tool) => tool,
        }
    }
}

impl RegistryInner {
    /// The tool registered under `name`, built or mounted.
    pub(crate) fn find_tool(&self, name: &str) -> Option<ToolRef<'_>> {
        if let Some(tool) = self.tools.get(name) {
            return Some(ToolRef::Built(tool));
        }
        self.mounts
            .snapshot()
            .by_name
            .get(name)
            .map(|tool| ToolRef::Mounted(Arc::clone(tool)))
    }

    /// Every visible definition: the built ones, then each mounted group's (allowlist applied).
    pub(crate) fn listed(&self) -> Cow<'_, [ToolDefinition]> {
        let mounted = self.mounts.snapshot();
        if mounted.by_name.is_empty() {
            return Cow::Borrowed(&self.listed);
        }
        let visible = mounted
            .tools()
            .filter(|tool| self.is_allowed(&tool.definition.name))
            .map(|tool| tool.definition.clone());
        Cow::Owned(self.listed.iter().cloned().chain(visible).collect())
    }

    pub(crate) fn is_allowed(&self, name: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|allowed| allowed.contains(name))
    }
}

impl ToolRegistry {
    /// Mounts `tools` as the group `group`, replacing whatever that group held, in one step:
    /// a call sees either the old group or the new one. A tool whose schema does not compile,
    /// whose name is blank, or whose name a built tool, another group or an earlier tool of
    /// this group already has, is skipped and reported; the rest are mounted. Calls already
    /// running on a replaced tool finish on it.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_context::{Tool, ToolInvocation, ToolRegistry};
    /// use tool_protocol::{ToolCallError, ToolDefinition};
    /// let tool = |name: &str, schema: Value| Tool::new(
    ///     ToolDefinition::new(name, "t", schema),
    ///     |_: Value, _: ToolInvocation| async { Ok::<_, ToolCallError>(()) },
    /// );
    /// let registry = ToolRegistry::builder().build().unwrap();
    /// let report = registry.mount("docs", vec![
    ///     tool("docs.search", json!({"type": "object"})),
    ///     tool("docs.broken", json!({"type": "object", "properties": {"q": {"type": 7}}})),
    /// ]);
    /// assert_eq!(report.mounted, ["docs.search"]);
    /// assert_eq!(report.skipped[0].name, "docs.broken");
    /// assert_eq!(registry.tool_names(), ["docs.search"]);
    /// registry.unmount("docs");
    /// assert!(registry.tool_names().is_empty());
    /// ```
    pub fn mount(&self, group: &str, tools: Vec<Tool>) -> MountReport {
        let inner = &self.inner;
        let mut report = MountReport::default();
        inner.mounts.swap(|current| {
            let mut others = current.without(group);
            let mut registered = Vec::with_capacity(tools.len());
            for tool in tools {
                let name = tool.definition.name.clone();
                if inner.tools.contains_key(&name) || others.by_name.contains_key(&name) {
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

    /// Removes the group `group` and its tools; `false` when no such group was mounted.
    /// Calls already running on its tools finish on them.
    pub fn unmount(&self, group: &str) -> bool {
        let mut found = false;
        self.inner.mounts.swap(|current| {
            found = current.groups.iter().any(|(name, _)| name == group);
            current.without(group)
        });
        found
    }

    /// Names of the tools mounted as `group` (allowlist not applied), in mount order.
    pub fn mounted_tool_names(&self, group: &str) -> Vec<String> {
        self.inner
            .mounts
            .snapshot()
            .groups
            .iter()
            .filter(|(name, _)| name == group)
            .flat_map(|(_, tools)| tools.iter().map(|tool| tool.definition.name.clone()))
            .collect()
    }

    /// A receiver whose value moves on every [`Self::mount`] and [`Self::unmount`]: an MCP
    /// server sends `notifications/tools/list_changed` from it, a page refreshes its catalog.
    pub fn catalog_changes(&self) -> watch::Receiver<u64> {
        self.inner.mounts.changes.subscribe()
    }
}
