// A client that retries a keyed call on another host, as one does after a lost response behind a
// load balancer: the TypeScript SDK v2 client package (`@modelcontextprotocol/client`) calls
// <tool> on the first URL with `_meta["tool-context/idempotency-key"] = <key>`, then sends the
// same call, same key, on a new connection to the second URL. Runs on Node 22+.
//
// Usage: node keyed_client_v2.mjs <first-mcp-url> <second-mcp-url> <tool-name> <json-arguments> <key>
//
// Prints one JSON line and exits 0: {"first": <CallToolResult>, "retried": <CallToolResult>,
// "capabilities": <the first server's capabilities>}. On failure prints {"error": "<message>"}
// and exits 1.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [firstUrl, secondUrl, toolName, argsJson, key] = process.argv.slice(2);

async function callOnce(url) {
  const client = new Client({ name: 'keyed-client-v2', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const result = await client.callTool({
    name: toolName,
    arguments: JSON.parse(argsJson),
    _meta: { 'tool-context/idempotency-key': key },
  });
  const capabilities = client.getServerCapabilities();
  await client.close().catch(() => {});
  return { result, capabilities };
}

try {
  if (key === undefined) throw new Error('usage: keyed_client_v2.mjs <first-url> <second-url> <tool-name> <json-arguments> <key>');
  const first = await callOnce(firstUrl);
  const retried = await callOnce(secondUrl);
  console.log(JSON.stringify({ first: first.result, retried: retried.result, capabilities: first.capabilities }));
  process.exit(0);
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  process.exit(1);
}
