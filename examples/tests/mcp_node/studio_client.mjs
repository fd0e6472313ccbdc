// An independent MCP client, the TypeScript SDK (`@modelcontextprotocol/sdk`), against the studio.
//
// Usage:
//   node studio_client.mjs http <mcp url> <token>
//   node studio_client.mjs stdio <studio binary> <folder> <data dir>
//
// The folder (or the running studio's workspace) holds `index.html` (INDEX) and `notes.txt`
// ("keep me\n"), and no studio page is attached, so approvals go to the client. Two sessions:
//
// 1. Without elicitation: paged tools/list (and ajv compiles every outputSchema without a
//    warning), a read, a validation error and a revision-guarded write that is denied, both as
//    `isError` results the SDK returns (never throws), and an unknown tool (-32602).
// 2. With elicitation: a write accepted with `{}` lands and reports progress; a stale write is
//    approved then fails with WORKSPACE_REVISION_CONFLICT as an `isError` result; a declined
//    delete is denied; a cancelled call withdraws its prompt and changes nothing.
//
// Exits 0 and prints "node client suite passed" when every assertion holds.

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
const INDEX = '<!doctype html>\n<h1 id="hero-title">Hello</h1>\n';
const ERROR_META = 'tool-context/error';

const warnings = [];
const warn = console.warn;
console.warn = (...args) => {
  warnings.push(args.map(String).join(' '));
  warn(...args);
};

function transport(kind, args) {
  if (kind === 'http') {
    const [url, token] = args;
    return new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  }
  const [binary, folder, dataDir] = args;
  return new StdioClientTransport({
    command: binary,
    args: ['mcp', '--folder', folder, '--data-dir', dataDir],
    env: { ...process.env, RUST_LOG: 'warn' },
    stderr: 'inherit',
  });
}

/** The coded error of an `isError` result: in `_meta` and, as JSON, in the text content. */
function errorOf(result) {
  assert.equal(result.isError, true, `expected an error result: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent, undefined, 'error results carry no structuredContent');
  const error = result._meta?.[ERROR_META];
  assert.ok(error && typeof error.code === 'string', `coded error in _meta: ${JSON.stringify(result)}`);
  const texts = result.content.filter((block) => block.type === 'text').map((block) => block.text);
  assert.ok(texts.some((text) => text.includes(error.code)), 'the model reads the code in the content');
  return error;
}

function expectCode(result, code) {
  const error = errorOf(result);
  assert.equal(error.code, code, JSON.stringify(error));
  return error;
}

async function read(client, path) {
  const result = await client.callTool({ name: 'workspace.readFile', arguments: { path } });
  assert.equal(result.isError, false, JSON.stringify(result));
  return result.structuredContent;
}

async function listAllTools(client) {
  const tools = [];
  let cursor;
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (!cursor) return tools;
  }
  throw new Error('tools/list cursors must end');
}

async function withoutElicitation(kind, args) {
  const client = new Client({ name: 'studio-node-tests', version: '0.0.0' }, { capabilities: {} });
  await client.connect(transport(kind, args));
  assert.equal(client.getServerVersion().name, 'live-code-studio');
  const tools = Object.fromEntries((await listAllTools(client)).map((tool) => [tool.name, tool]));
  for (const name of ['workspace.readFile', 'workspace.writeFile', 'workspace.deleteFile']) {
    assert.ok(tools[name], `${name} is listed`);
  }
  const readFile = tools['workspace.readFile'];
  assert.equal(readFile.inputSchema.$schema, SCHEMA_2020_12);
  assert.equal(readFile.outputSchema.type, 'object');
  assert.equal(readFile.annotations.readOnlyHint, true);
  assert.equal(tools['workspace.deleteFile'].annotations.destructiveHint, true);

  const index = await read(client, 'index.html');
  assert.equal(index.source, INDEX);

  // Error results are returned, not thrown: the SDK checks only successes against outputSchema.
  const invalid = await client.callTool({ name: 'workspace.readFile', arguments: { path: '' } });
  assert.ok(expectCode(invalid, 'TOOL_VALIDATION_FAILED').details.issues.length > 0);
  const denied = await client.callTool({
    name: 'workspace.writeFile',
    arguments: { path: 'index.html', source: '<h1>nope</h1>', expectedRevision: index.revision },
  });
  const error = expectCode(denied, 'TOOL_POLICY_DENIED');
  assert.deepEqual(error.details, { approvalRoute: 'unavailable', decidedBy: 'host' });
  assert.match(error.message, /elicitation/);
  assert.equal((await read(client, 'index.html')).source, INDEX);

  await assert.rejects(
    client.callTool({ name: 'workspace.nope', arguments: {} }),
    (failure) => failure instanceof McpError && failure.code === -32602 && failure.data?.code === 'TOOL_NOT_FOUND',
  );
  await client.close();
  return index.revision;
}

async function withElicitation(kind, args) {
  const asked = [];
  let withdrawn = false;
  let prompted;
  const promptedOnce = new Promise((resolve) => { prompted = resolve; });
  const client = new Client(
    { name: 'studio-node-tests', version: '0.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const { message, requestedSchema } = request.params;
    asked.push(message);
    // An explicit confirmation: nothing to fill in.
    assert.deepEqual(requestedSchema.properties, {});
    assert.equal(requestedSchema.required, undefined);
    if (message.includes('workspace.deleteFile')) return { action: 'decline' };
    if (message.includes('cancel.txt')) {
      prompted();
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
      withdrawn = true;
      return { action: 'cancel' };
    }
    return { action: 'accept', content: {} };
  });
  await client.connect(transport(kind, args));
  await listAllTools(client);
  const before = await read(client, 'index.html');

  const progress = [];
  const written = await client.callTool(
    {
      name: 'workspace.writeFile',
      arguments: { path: 'index.html', source: '<h1>approved</h1>\n', expectedRevision: before.revision },
    },
    undefined,
    { onprogress: (note) => progress.push(note.message ?? '') },
  );
  assert.equal(written.isError, false, JSON.stringify(written));
  assert.equal(asked.length, 1);
  assert.match(asked[0], /"workspace\.writeFile"/);
  assert.match(asked[0], /path: index\.html/);
  assert.match(asked[0], /source: 18 bytes, 1 line, sha256 [0-9a-f]{12}/);
  // The arguments never show the source; the proposed change shows the diff's first lines.
  const [argumentsPart, change = ''] = asked[0].split('Proposed change:');
  assert.ok(!argumentsPart.includes('approved</h1>'), 'raw source is never shown as an argument');
  assert.match(change, /modified index\.html \+1 /);
  assert.ok(change.includes('  + <h1>approved</h1>'), asked[0]);
  assert.ok(progress.some((note) => note.startsWith('Waiting for approval of "workspace.writeFile"')), progress.join(' | '));
  const after = await read(client, 'index.html');
  assert.equal(after.source, '<h1>approved</h1>\n');

  const stale = await client.callTool({
    name: 'workspace.writeFile',
    arguments: { path: 'index.html', source: '<h1>stale</h1>\n', expectedRevision: before.revision },
  });
  const conflict = expectCode(stale, 'WORKSPACE_REVISION_CONFLICT');
  assert.equal(conflict.retryable, true);
  assert.equal(conflict.details.currentRevision, after.revision);

  const declined = await client.callTool({ name: 'workspace.deleteFile', arguments: { path: 'notes.txt' } });
  expectCode(declined, 'TOOL_POLICY_DENIED');
  assert.equal((await read(client, 'notes.txt')).source, 'keep me\n');

  // The person has not answered yet when the client gives up: the prompt is withdrawn and the
  // write never runs.
  const abort = new AbortController();
  const cancelled = client.callTool(
    { name: 'workspace.writeFile', arguments: { path: 'cancel.txt', source: 'never\n', expectedRevision: after.revision } },
    undefined,
    { signal: abort.signal },
  );
  await promptedOnce;
  abort.abort('changed my mind');
  await assert.rejects(cancelled);
  for (let waited = 0; !withdrawn && waited < 100; waited += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(withdrawn, 'the server withdrew the prompt of the cancelled call');
  const missing = await client.callTool({ name: 'workspace.readFile', arguments: { path: 'cancel.txt' } });
  assert.equal(missing.isError, true, 'the cancelled write did not run');
  await client.close();
}

async function main() {
  const [kind, ...args] = process.argv.slice(2);
  if (!['http', 'stdio'].includes(kind)) {
    console.error('usage: studio_client.mjs http <url> <token> | stdio <studio> <folder> <data dir>');
    process.exit(2);
  }
  await withoutElicitation(kind, args);
  await withElicitation(kind, args);
  const schemaWarnings = warnings.filter((text) => /format|schema/i.test(text));
  assert.deepEqual(schemaWarnings, [], 'the tool schemas compile without validator warnings');
  console.log(`studio ${kind}: node client suite passed`);
}

main().catch((failure) => {
  console.error(failure);
  process.exit(1);
});
