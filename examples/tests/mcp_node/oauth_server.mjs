// Two real OAuth 2 authorization servers (the npm package `oauth2-mock-server`) for the
// resource-server tests, plus a small test-control endpoint that mints arbitrary tokens.
//
// Usage: node oauth_server.mjs   (the package needs Node >= 22.12, so run it with $MCP_NODE22)
//
// Prints one JSON line once everything listens:
//   {"issuer":"http://127.0.0.1:P1","otherIssuer":"http://127.0.0.1:P2","control":"http://127.0.0.1:P3"}
// and runs until stdin closes or SIGTERM/SIGINT (then exits 0): spawn it with a piped stdin.
//
// Both issuers (each its own RS256 key) know the same confidential clients. A token request
// (any grant, client_secret_basic or client_secret_post) from an unknown client or with a wrong
// secret answers 401 {"error":"invalid_client"}. Otherwise the access token carries
//   sub = client_id = the authenticated client,
//   aud = the RFC 8707 `resource` parameter (when sent; else the package's default: none),
//   scope = the requested `scope` restricted to the client's allowance (the whole allowance
//           when no scope is requested; possibly "" when nothing requested is allowed),
// and the token response's `scope` is the granted one. For authorization_code, scope/resource
// given to /authorize are remembered for the code (the package itself forgets them).
//
// POST <control>/mint {"issuer":"trusted"|"other", "sub", "scope", "aud", "expiresIn",
//   "nbfOffset", "claims"} -> {"token": "..."} signed by that issuer's key. Every field is
//   optional: expiresIn defaults to 3600 (negative = already expired), nbfOffset sets
//   nbf = now + nbfOffset (default: the package's now - 10), and `claims` is merged last
//   (a null value removes that claim, e.g. {"exp": null}).

import { createServer } from 'node:http';
import { Buffer } from 'node:buffer';
import { OAuth2Server } from 'oauth2-mock-server';

const CLIENTS = {
  alice: { secret: 'alice-secret', scopes: ['mcp:tools', 'notes:read', 'notes:write'] },
  bob: { secret: 'bob-secret', scopes: ['mcp:tools', 'notes:read'] },
  carol: { secret: 'carol-secret', scopes: ['notes:read'] },
};
const ALL_SCOPES = [...new Set(Object.values(CLIENTS).flatMap((c) => c.scopes))];

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

// RFC 6749 §2.3.1: Basic credentials are form-encoded before base64 (the TS SDK skips that
// step, the Python one does it), so decoding is lenient; the body is client_secret_post.
function credentials(req) {
  const header = req.headers.authorization ?? '';
  if (/^basic\s/i.test(header)) {
    const raw = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = raw.indexOf(':');
    return colon < 0 ? {} : { id: decode(raw.slice(0, colon)), secret: decode(raw.slice(colon + 1)) };
  }
  return { id: req.body?.client_id, secret: req.body?.client_secret };
}

function authenticatedClient(req) {
  const { id, secret } = credentials(req);
  const client = typeof id === 'string' ? CLIENTS[id] : undefined;
  return client && client.secret === secret ? { id, ...client } : undefined;
}

async function startIssuer() {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  // The package names loopback binds `localhost`; tokens' `iss` must be the printed URL.
  server.issuer.url = `http://127.0.0.1:${server.address().port}`;

  const service = server.service;
  const authorizeGrants = new Map(); // code -> { scope, resource } given to /authorize
  const accessTokenSigned = new WeakSet(); // the id_token of the same request is signed later

  service.on('beforeWellKnownOpenIdConfiguration', (response) => {
    // The package advertises only "none"; the SDKs pick their client auth method from this.
    response.body.token_endpoint_auth_methods_supported = ['client_secret_basic', 'client_secret_post'];
    response.body.scopes_supported = ALL_SCOPES;
  });
  // RFC 8414 metadata, the first place MCP clients look; same document as the OIDC one.
  service.addRoute('GET', '/.well-known/oauth-authorization-server', (req, res) =>
    service.openidConfigurationHandler(req, res),
  );

  service.on('beforeAuthorizeRedirect', (redirect, req) => {
    const code = redirect.url.searchParams.get('code');
    if (code) authorizeGrants.set(code, { scope: req.query?.scope, resource: req.query?.resource });
  });

  service.on('beforeTokenSigning', (token, req) => {
    if (accessTokenSigned.has(req)) return;
    accessTokenSigned.add(req);
    const client = authenticatedClient(req);
    if (!client) return; // rejected in beforeResponse
    const body = req.body ?? {};
    const remembered = (typeof body.code === 'string' && authorizeGrants.get(body.code)) || {};
    const requested = body.scope ?? remembered.scope;
    const granted =
      typeof requested === 'string'
        ? requested.split(/\s+/).filter((s) => s && client.scopes.includes(s))
        : client.scopes;
    req.grantedScope = [...new Set(granted)].join(' ');
    token.payload.sub = client.id;
    token.payload.client_id = client.id;
    token.payload.scope = req.grantedScope;
    const resource = body.resource ?? remembered.resource;
    if (resource !== undefined) token.payload.aud = resource;
  });

  service.on('beforeResponse', (response, req) => {
    if (!authenticatedClient(req)) {
      response.statusCode = 401;
      response.body = { error: 'invalid_client', error_description: 'unknown client or wrong secret' };
      return;
    }
    response.body.scope = req.grantedScope;
  });
  return server;
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

function startControl(issuers) {
  const control = createServer(async (req, res) => {
    const reply = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/mint') return reply(404, { error: 'POST /mint only' });
    try {
      const o = await readJson(req);
      const server = issuers[o.issuer ?? 'trusted'];
      if (!server) return reply(400, { error: `unknown issuer ${JSON.stringify(o.issuer)}` });
      // The issuer's own signer: same key, kid and `iss` as the token endpoint's tokens.
      const token = await server.issuer.buildToken({
        expiresIn: o.expiresIn ?? 3600,
        scopesOrTransform: (_header, payload) => {
          if (o.sub !== undefined) payload.sub = o.sub;
          if (o.scope !== undefined) payload.scope = o.scope;
          if (o.aud !== undefined) payload.aud = o.aud;
          if (o.nbfOffset !== undefined) payload.nbf = payload.iat + o.nbfOffset;
          for (const [k, v] of Object.entries(o.claims ?? {})) {
            if (v === null) delete payload[k];
            else payload[k] = v;
          }
        },
      });
      reply(200, { token });
    } catch (e) {
      reply(400, { error: String(e?.message ?? e) });
    }
  });
  return new Promise((resolve, reject) => {
    control.listen(0, '127.0.0.1', () => resolve(control)).on('error', reject);
  });
}

const trusted = await startIssuer();
const other = await startIssuer();
const control = await startControl({ trusted, other });

const exit = () => process.exit(0);
process.on('SIGTERM', exit);
process.on('SIGINT', exit);
process.stdin.on('end', exit);
process.stdin.on('close', exit);
process.stdin.resume();

console.log(
  JSON.stringify({
    issuer: trusted.issuer.url,
    otherIssuer: other.issuer.url,
    control: `http://127.0.0.1:${control.address().port}`,
  }),
);
