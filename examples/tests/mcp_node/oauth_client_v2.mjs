// An independent OAuth client of a protected MCP server: the TypeScript SDK v2 client package
// (`@modelcontextprotocol/client`) with its own client_credentials provider. Runs on Node 20+.
//
// Usage: node oauth_client_v2.mjs <mcp-url> <client-id> <client-secret> <scope> <tool-name> <json-arguments>
//
// The SDK does the whole dance itself: the first request is answered 401, it follows the
// challenge's resource_metadata to the RFC 9728 document, discovers the authorization server
// (RFC 8414 / OIDC metadata), asks its token endpoint for a client_credentials token (HTTP Basic,
// with the RFC 8707 `resource`) and retries. Then it lists the tools and calls one.
//
// Prints one JSON line and exits 0: {"tools": [names...], "result": <CallToolResult>}
// On failure prints {"error": "<message>", "status": <HTTP status, when known>, "code": <SDK/OAuth
// error code, when any>} and exits 1.
//
// <scope> is requested as given ("" lets the SDK choose per the MCP scope selection strategy:
// the challenge's scope, else the metadata's scopes_supported). A 403 insufficient_scope fails
// (status 403) instead of the SDK's step-up re-authorization, so the outcome is the scope asked
// for. Optional env MCP_OAUTH_ISSUER pins the authorization server (the SDK's expectedIssuer);
// without it the SDK warns on stderr and trusts the server's metadata.

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, clientId, clientSecret, scope, toolName, argsJson] = process.argv.slice(2);

// The status of the most recent HTTP response: the SDK's OAuth errors do not carry one.
let lastStatus;
const recordingFetch = async (input, init) => {
  const response = await fetch(input, init);
  lastStatus = response.status;
  return response;
};

class FixedScopeProvider extends ClientCredentialsProvider {
  // The SDK prefers the challenge's or the metadata's scopes over the provider's own.
  prepareTokenRequest(sdkScope) {
    return super.prepareTokenRequest(scope || sdkScope);
  }
}

function fail(error) {
  const status = error?.status ?? error?.data?.status ?? (lastStatus >= 400 ? lastStatus : undefined);
  const out = { error: String(error?.message ?? error) };
  if (status !== undefined) out.status = status;
  if (typeof error?.code === 'string' || typeof error?.code === 'number') out.code = error.code;
  console.log(JSON.stringify(out));
  process.exit(1);
}

try {
  if (argsJson === undefined) throw new Error('usage: oauth_client_v2.mjs <mcp-url> <client-id> <client-secret> <scope> <tool-name> <json-arguments>');
  const args = JSON.parse(argsJson);
  const authProvider = new FixedScopeProvider({
    clientId,
    clientSecret,
    scope: scope || undefined,
    ...(process.env.MCP_OAUTH_ISSUER ? { expectedIssuer: process.env.MCP_OAUTH_ISSUER } : {}),
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    authProvider,
    fetch: recordingFetch,
    onInsufficientScope: 'throw',
  });
  const client = new Client({ name: 'oauth-client-v2', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: toolName, arguments: args });
  console.log(JSON.stringify({ tools: tools.map((t) => t.name), result }));
  await client.close().catch(() => {});
  process.exit(0);
} catch (error) {
  fail(error);
}
