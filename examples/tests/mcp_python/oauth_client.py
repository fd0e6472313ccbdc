#!/usr/bin/env python3
"""An independent OAuth client of a protected MCP server: the Python `mcp` package's streamable
HTTP client with its own client_credentials provider (`ClientCredentialsOAuthProvider`).

Usage: oauth_client.py <mcp-url> <client-id> <client-secret> <scope> <tool-name> <json-arguments>

The SDK does the whole dance itself: the first request is answered 401, it follows the
challenge's resource_metadata to the RFC 9728 document, discovers the authorization server
(RFC 8414 / OIDC metadata), asks its token endpoint for a client_credentials token (HTTP Basic,
with the RFC 8707 `resource`) and retries. Then it lists the tools and calls one.

Prints one JSON line and exits 0: {"tools": [names...], "result": <CallToolResult>}
On failure prints {"error": "<message>", "status": <HTTP status, when known>} and exits 1.

<scope> is requested as given ("" lets the SDK choose per the MCP scope selection strategy: the
challenge's scope, else the metadata's scopes_supported). A 403 insufficient_scope fails with
status 403: a step-up re-authorization the SDK may attempt asks for the same <scope> again. Optional env MCP_OAUTH_ISSUER pins the authorization server
(the provider's `issuer`); without it the SDK warns on stderr and trusts the server's metadata.
"""

import json
import os
import sys

import anyio
import httpx2
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


class MemoryStorage:
    """The provider's TokenStorage: one run, nothing persisted."""

    def __init__(self):
        self.tokens = self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class FixedScopeProvider(ClientCredentialsOAuthProvider):
    def __init__(self, *args, fixed_scope: str, **kwargs):
        super().__init__(*args, **kwargs)
        self._fixed_scope = fixed_scope

    async def _perform_authorization(self):
        # The SDK overwrites the requested scope with the challenge's or the metadata's.
        if self._fixed_scope:
            self.context.client_metadata.scope = self._fixed_scope
        return await super()._perform_authorization()


# The status of the most recent HTTP response: the transport turns HTTP errors into a generic
# JSON-RPC error and the OAuth errors carry none.
last_status: int | None = None


async def record_status(response):
    global last_status
    last_status = response.status_code


async def run(url, client_id, client_secret, scope, tool, arguments):
    provider = FixedScopeProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=client_id,
        client_secret=client_secret,
        scope=scope or None,
        issuer=os.environ.get("MCP_OAUTH_ISSUER") or None,
        fixed_scope=scope,
    )
    # The transport's documented way to add auth: our own client (timeouts as the SDK's default).
    http = httpx2.AsyncClient(
        auth=provider, timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [record_status]}
    )
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            result = await session.call_tool(tool, arguments)
            return {
                "tools": [t.name for t in tools],
                "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
            }


def leaf(error: BaseException) -> BaseException:
    # anyio task groups wrap the transport's failure in (nested) exception groups.
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def main() -> int:
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    url, client_id, client_secret, scope, tool, arguments = sys.argv[1:]
    try:
        out = anyio.run(run, url, client_id, client_secret, scope, tool, json.loads(arguments))
    except BaseException as error:  # noqa: BLE001 - every failure is reported the same way
        error = leaf(error)
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status is None and last_status is not None and last_status >= 400:
            status = last_status
        report = {"error": str(error) or type(error).__name__}
        if status is not None:
            report["status"] = status
        print(json.dumps(report), flush=True)
        return 1
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
