//! Transports: one session over any byte stream (stdio in production, an in-memory pipe in
//! tests) and the streamable HTTP service, one session per MCP client connection.

use rmcp::ServiceExt;
use rmcp::service::{RoleServer, ServerInitializeError};
use rmcp::transport::IntoTransport;

use crate::server::McpToolServer;

/// Why serving a session stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client never completed the `initialize` handshake.
    #[error("MCP initialization failed: {0}")]
    Initialize(Box<ServerInitializeError>),
    /// The session task failed.
    #[error("MCP session failed: {0}")]
    Session(#[from] tokio::task::JoinError),
}

impl From<ServerInitializeError> for ServeError {
    fn from(error: ServerInitializeError) -> Self {
        Self::Initialize(Box::new(error))
    }
}

/// Serves one MCP session over `transport` (for example `(reader, writer)` halves) until the
/// client disconnects. The session gets a fresh session id.
pub async fn serve_transport<T, E, A>(
    server: &McpToolServer,
    transport: T,
) -> Result<(), ServeError>
where
    T: IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let running = server.new_session().serve(transport).await?;
    running.waiting().await?;
    Ok(())
}

/// Serves one MCP session over the process's stdin and stdout until stdin closes. Nothing else
/// may write to stdout meanwhile: log to stderr.
#[cfg(feature = "stdio")]
pub async fn serve_stdio(server: &McpToolServer) -> Result<(), ServeError> {
    serve_transport(server, rmcp::transport::stdio()).await
}

/// The streamable HTTP transport as a tower service (mount it at `/mcp` in axum with
/// `Router::nest_service`). Every MCP session (`initialize`) gets its own session id, and stays
/// alive while any of its streams is open; an unused one closes after
/// [`DEFAULT_IDLE_TIMEOUT`](crate::sessions::DEFAULT_IDLE_TIMEOUT) (see [`crate::sessions`]).
///
/// rmcp validates `Host` against loopback names by default; pass a configured
/// [`StreamableHttpServerConfig`](rmcp::transport::StreamableHttpServerConfig) to change it and
/// put authentication in front of the service.
#[cfg(feature = "http")]
pub fn streamable_http_service(
    server: &McpToolServer,
    config: rmcp::transport::StreamableHttpServerConfig,
) -> rmcp::transport::StreamableHttpService<McpToolServer, crate::sessions::ActiveSessions> {
    streamable_http_service_with_idle_timeout(server, config, crate::sessions::DEFAULT_IDLE_TIMEOUT)
}

/// [`streamable_http_service`] whose unused sessions close after `idle_timeout`.
#[cfg(feature = "http")]
pub fn streamable_http_service_with_idle_timeout(
    server: &McpToolServer,
    config: rmcp::transport::StreamableHttpServerConfig,
    idle_timeout: std::time::Duration,
) -> rmcp::transport::StreamableHttpService<McpToolServer, crate::sessions::ActiveSessions> {
    let server = server.clone();
    rmcp::transport::StreamableHttpService::new(
        move || Ok(server.new_session()),
        std::sync::Arc::new(crate::sessions::ActiveSessions::new(idle_timeout)),
        config,
    )
}
