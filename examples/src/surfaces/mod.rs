//! The studio's three tool surfaces over one registry, each a folder owning its state, tools,
//! routes (its preview through [`crate::kit::preview_http::serving`]) and planner: the
//! standalone workspace (`workspace.*` + `preview.*`, one revision clock), the Live Code Editor (`editor.*`, separate
//! workspace and document clocks) and realtime web coding (`web.*`, a three-file workspace).
//! Every surface shares the registry, policy, approvals, trace and provider settings; each has
//! its own page, preview iframe and local-agent planner.

pub mod editor;
pub mod web;
pub mod workspace;

use std::path::PathBuf;

use crate::kit::durable_folder::DurableSaves;
use crate::kit::events::EventHub;

/// What a surface gets from the host when it opens.
#[derive(Debug, Clone)]
pub struct SurfaceDeps {
    /// The live event stream (surfaces publish [`crate::kit::events::StudioEvent::Surface`]).
    pub hub: EventHub,
    /// The studio's data directory (databases, durable records).
    pub data_dir: PathBuf,
    /// The studio's durable operation store (the editor's save records share it).
    pub saves: DurableSaves,
}

/// One tool surface of the studio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// The standalone workspace (`workspace.*`, `preview.*`) on `/`.
    Workspace,
    /// The two-clock Live Code Editor (`editor.*`) on `/editor`.
    Editor,
    /// Realtime web coding (`web.*`) on `/web`.
    Web,
}

impl Surface {
    /// Every surface.
    pub const ALL: [Self; 3] = [Self::Workspace, Self::Editor, Self::Web];

    /// The surface named `name` (`workspace`, `editor` or `web`).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|surface| surface.as_str() == name)
    }

    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Workspace => "workspace",
            Self::Editor => "editor",
            Self::Web => "web",
        }
    }

    /// Whether `tool` belongs to this surface's catalog (what its agent runs may discover).
    pub fn owns_tool(self, tool: &str) -> bool {
        match self {
            Self::Workspace => tool.starts_with("workspace.") || tool.starts_with("preview."),
            Self::Editor => tool.starts_with("editor."),
            Self::Web => tool.starts_with("web."),
        }
    }

    /// Whether a provider run on this surface offers `tool` to its model: the surface's own
    /// catalog and every tool mounted from an MCP server (`<server>.<tool>`), which belongs to
    /// no surface.
    pub fn offers_tool(self, tool: &str) -> bool {
        self.owns_tool(tool) || !is_studio_tool(tool)
    }

    /// System prompt of provider runs on this surface.
    pub fn system_prompt(self) -> &'static str {
        match self {
            Self::Workspace => WORKSPACE_SYSTEM_PROMPT,
            Self::Editor => EDITOR_SYSTEM_PROMPT,
            Self::Web => WEB_SYSTEM_PROMPT,
        }
    }
}

/// Arguments whose values approval cards show (never file sources: `source`, `search` and
/// `replace` appear only inside the diff the page asks for).
pub const SAFE_ARGUMENT_NAMES: &[&str] = &[
    "path",
    "fromPath",
    "toPath",
    "theme",
    "scenario",
    "discardChanges",
    "title",
    "subtitle",
    "description",
    "occurrence",
    "expectedRevision",
    "expectedDocumentRevision",
    "expectedWorkspaceRevision",
];

/// The name prefixes of the studio's own tools (`workspace.*`, `preview.*`, `editor.*`,
/// `web.*`). An MCP server cannot be mounted under one of them, so every other registry tool
/// is a mounted one.
pub const STUDIO_NAMESPACES: [&str; 4] = ["workspace", "preview", "editor", "web"];

/// Whether `tool` is one of the studio's own tools (in some surface's catalog) rather than
/// one mounted from an MCP server.
pub fn is_studio_tool(tool: &str) -> bool {
    tool.split_once('.')
        .is_some_and(|(prefix, _)| STUDIO_NAMESPACES.contains(&prefix))
}

/// System prompt of provider runs on the standalone workspace.
pub const WORKSPACE_SYSTEM_PROMPT: &str = "You edit a small web project through tools. Call workspace.getStatus first, read a file with workspace.readFile before changing it, and pass the revision you read as expectedRevision to every mutation. Prefer workspace.applyPatch for small edits and the preview.* tools for theme, hero and feature changes. Mutations may wait for a person's approval; if one is denied, explain and stop. A result with status \"applied\" is done (only its preview confirmation failed): never repeat that call.";

/// System prompt of provider runs on the Live Code Editor.
pub const EDITOR_SYSTEM_PROMPT: &str = "You edit files in a live code editor through tools. The editor has two revision clocks: workspaceRevision (files) and documentRevision (the open document shown in the preview). Call editor.getStatus, then editor.listFiles, open a text file with editor.openFile, and read it with editor.getDocument before changing it. Pass the documentRevision you read as expectedDocumentRevision to editor.setDocument, editor.applyPatch, editor.setScenario and editor.resetDocument. Save with editor.saveFile or editor.saveAll only when the user asks to persist; saves wait for a person's approval. If a call is denied, explain and stop. A result with status \"applied\" is done (only its preview confirmation failed): never repeat that call.";

/// System prompt of provider runs on the realtime web-coding route.
pub const WEB_SYSTEM_PROMPT: &str = "You edit a three-file web page (index.html, styles.css, app.js) through tools. Call web.getWorkspace first and pass the workspace revision you read as expectedRevision to every mutation. Prefer web.applyPatch for small literal edits and web.setTheme, web.addFeature and web.updateHero for visual changes. Each mutation returns the new revision after the preview has rendered it. A result with status \"applied\" is done (only its preview confirmation failed): never repeat that call.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surfaces_round_trip_their_names_and_split_the_catalog() {
        for surface in Surface::ALL {
            assert_eq!(Surface::parse(surface.as_str()), Some(surface));
        }
        assert_eq!(Surface::parse("other"), None);
        assert!(Surface::Workspace.owns_tool("preview.setTheme"));
        assert!(!Surface::Workspace.owns_tool("web.setTheme"));
        assert!(Surface::Web.owns_tool("web.setTheme"));
        assert!(Surface::Editor.owns_tool("editor.saveAll"));
        assert!(!Surface::Editor.owns_tool("workspace.saveAll"));
    }

    #[test]
    fn mounted_tools_belong_to_no_surface_and_every_run_is_offered_them() {
        for surface in Surface::ALL {
            let namespace = match surface {
                Surface::Workspace => "workspace",
                Surface::Editor => "editor",
                Surface::Web => "web",
            };
            assert!(STUDIO_NAMESPACES.contains(&namespace));
            assert!(surface.offers_tool("docs.search"));
            assert!(surface.offers_tool(&format!("{namespace}.x")));
        }
        assert!(is_studio_tool("preview.setTheme"));
        assert!(!is_studio_tool("docs.search"));
        assert!(!is_studio_tool("webby.search"));
        assert!(!Surface::Web.offers_tool("editor.saveAll"));
    }
}
