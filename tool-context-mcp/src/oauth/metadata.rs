//! RFC 9728 protected-resource metadata: what a client fetches (from the `resource_metadata`
//! URL of our challenge, or the well-known path) to find the authorization server.

use std::collections::BTreeSet;

use serde::Serialize;

/// The well-known path prefix of protected-resource metadata (RFC 9728 §3).
pub const WELL_KNOWN_PATH: &str = "/.well-known/oauth-protected-resource";

/// The metadata document served at [`WELL_KNOWN_PATH`] and its path-suffixed form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: the MCP endpoint's canonical URL (RFC 8707), the audience
    /// tokens must carry.
    pub resource: String,
    /// Issuers whose tokens this resource accepts.
    pub authorization_servers: Vec<String>,
    /// Every scope this resource understands.
    pub scopes_supported: BTreeSet<String>,
    /// How a token may be sent: the `Authorization` header only.
    pub bearer_methods_supported: Vec<String>,
    /// Human-readable name of the resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

/// The path of the metadata of a resource whose URL path is `resource_path` (RFC 9728 §3.1:
/// the well-known prefix goes between the host and the resource's path).
pub(crate) fn path_for(resource_path: &str) -> String {
    let suffix = resource_path.trim_end_matches('/');
    format!("{WELL_KNOWN_PATH}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_well_known_prefix_goes_before_the_resource_path() {
        assert_eq!(
            path_for("/mcp"),
            "/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            path_for("/a/b/"),
            "/.well-known/oauth-protected-resource/a/b"
        );
        assert_eq!(path_for("/"), WELL_KNOWN_PATH);
        assert_eq!(path_for(""), WELL_KNOWN_PATH);
    }
}
