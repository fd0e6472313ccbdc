//! [`RegistryInner`]: everything a call reads, frozen when the registry is built (the mounted
//! groups being the one part that changes, swapped whole). The pipeline reads it and the
//! registry builds it, so neither imports the other.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tool_protocol::ToolDefinition;
use tool_protocol::observability::ObservabilityPolicy;

use crate::idempotency::IdempotencyRegistry;
use crate::interaction::ToolInteraction;
use crate::ledger::Ledger;
use crate::mounts::Mounts;
use crate::observer::ToolCallObserver;
use crate::policy::ToolPolicy;
use crate::registered::{NameHasher, RegisteredTool};
use crate::shutdown::RegistryShutdown;
use crate::trace::TraceId;
use crate::validation::ValidationMode;

/// Everything a call needs, frozen when the registry is built.
pub(crate) struct RegistryInner {
    pub(crate) tools: HashMap<String, Arc<RegisteredTool>, NameHasher>,
    /// Visible definitions (allowlist applied) in registration order.
    pub(crate) listed: Vec<ToolDefinition>,
    pub(crate) allowed: Option<HashSet<String, NameHasher>>,
    pub(crate) validation_mode: ValidationMode,
    pub(crate) page_size: Option<usize>,
    pub(crate) policy: Arc<dyn ToolPolicy>,
    pub(crate) interaction: Option<Arc<dyn ToolInteraction>>,
    /// The default bound on a person's approval wait, ms ([`ToolRegistryBuilder::approval_timeout`](crate::ToolRegistryBuilder::approval_timeout)).
    pub(crate) approval_timeout_ms: Option<u64>,
    pub(crate) observers: Vec<Arc<dyn ToolCallObserver>>,
    pub(crate) owner_id: String,
    pub(crate) ledger: Ledger,
    pub(crate) idempotency: IdempotencyRegistry,
    pub(crate) shutdown: RegistryShutdown,
    /// Random per registry: a call's trace id is this and its sequence number.
    pub(crate) trace_registry: u64,
    pub(crate) trace_sequence: AtomicU64,
    /// Tools mounted after the build ([`ToolRegistry::mount`](crate::ToolRegistry::mount)).
    pub(crate) mounts: Mounts,
    /// Records arguments and results on call spans through this policy
    /// ([`ToolRegistryBuilder::record_call_content`](crate::ToolRegistryBuilder::record_call_content)); `None` records neither.
    pub(crate) call_content: Option<ObservabilityPolicy>,
}

impl RegistryInner {
    /// A trace id no other call of any registry shares.
    pub(crate) fn next_trace_id(&self) -> TraceId {
        TraceId::new(
            self.trace_registry,
            self.trace_sequence.fetch_add(1, Ordering::Relaxed),
        )
    }

    /// The tool registered under `name`, built or mounted.
    pub(crate) fn find_tool(&self, name: &str) -> Option<ToolRef<'_>> {
        if let Some(tool) = self.tools.get(name) {
            return Some(ToolRef::Built(tool));
        }
        self.mounts.find(name).map(ToolRef::Mounted)
    }

    /// Every visible definition: the built ones, then each mounted group's (allowlist applied).
    pub(crate) fn listed(&self) -> Cow<'_, [ToolDefinition]> {
        let mounted = self.mounts.snapshot();
        if mounted.is_empty() {
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
