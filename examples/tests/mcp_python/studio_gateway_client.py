#!/usr/bin/env python3
"""`studio mcp` as a gateway, driven by an independent MCP client (the Python `mcp` package).

Usage:
  studio_gateway_client.py <path to the studio binary> <empty temp folder> <path to the peer server>

It writes a Claude Desktop configuration `<temp>/claude.json` that mounts the peer server
(`python_misbehaving_server.py normal`) as `py` with a secret in its env, then runs
`studio mcp --data-dir <temp>/data --mcp-config <temp>/claude.json` three times:

1. A client with elicitation: the first tools/list already has the remote tools (`py.echo`,
   `py.write_note`, ...) next to the studio's own; `py.read_only`'s read-only claim is dropped
   (the server is not trusted); `py.echo` asks through the elicitation prompt, which names the
   remote tool, and runs once accepted (the remote server's answer comes back); a declined
   `py.write_note` is denied and never reaches the server.
2. A client without elicitation (and no studio page): `py.echo` is denied, coded, with
   `approvalRoute: unavailable`.
3. The configuration saved by the first run (no `--mcp-config` this time) still mounts `py`.

Exits 0 when every assertion holds; any failure raises.
"""

import json
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ERROR_META = "tool-context/error"
SECRET = "sk-gateway-secret-93d1"


def error_of(result: types.CallToolResult) -> dict:
    assert result.is_error, f"expected an error result, got {result}"
    error = (result.meta or {}).get(ERROR_META)
    assert isinstance(error, dict), f"error results carry _meta[{ERROR_META!r}]: {result}"
    return error


def parameters(binary: str, root: Path, with_config: bool) -> StdioServerParameters:
    args = ["mcp", "--data-dir", str(root / "data")]
    if with_config:
        args += ["--mcp-config", str(root / "claude.json")]
    return StdioServerParameters(command=binary, args=args, env={"RUST_LOG": "warn"})


async def list_all_tools(session: ClientSession) -> dict:
    tools, cursor = {}, None
    for _ in range(100):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.update({tool.name: tool for tool in page.tools})
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise AssertionError("tools/list cursors must end")


async def with_elicitation(binary: str, root: Path) -> None:
    asked: list[str] = []

    async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if "py.write_note" in params.message:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={})

    async with stdio_client(parameters(binary, root, True)) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream, elicitation_callback=answer) as session:
            await session.initialize()
            tools = await list_all_tools(session)
            for name in ("py.echo", "py.add", "py.write_note", "py.read_only", "workspace.readFile"):
                assert name in tools, f"{name} is listed on the first tools/list: {sorted(tools)}"
            assert tools["py.echo"].input_schema["required"] == ["text"], tools["py.echo"]
            hints = tools["py.read_only"].annotations
            assert hints is None or hints.read_only_hint is not True, f"an untrusted claim is dropped: {hints}"

            echoed = await session.call_tool("py.echo", {"text": "through the gateway"})
            assert not echoed.is_error, echoed
            assert echoed.structured_content == {"text": "through the gateway"}, echoed
            assert any(block.type == "text" and block.text == "through the gateway" for block in echoed.content), echoed
            assert len(asked) == 1 and "py.echo" in asked[0], asked
            assert 'runs on the MCP server "py"' in asked[0], asked[0]

            declined = await session.call_tool("py.write_note", {"text": "never"})
            assert error_of(declined)["code"] == "TOOL_POLICY_DENIED", declined
            assert len(asked) == 2, asked
            # Every remote call asks, each on its own.
            added = await session.call_tool("py.add", {"a": 2, "b": 3})
            assert added.structured_content == {"sum": 5}, added
            assert len(asked) == 3, asked
            for message in asked:
                assert SECRET not in message, message


async def without_elicitation(binary: str, root: Path, with_config: bool) -> None:
    async with stdio_client(parameters(binary, root, with_config)) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            tools = await list_all_tools(session)
            assert "py.echo" in tools, sorted(tools)
            denied = await session.call_tool("py.echo", {"text": "nobody to ask"})
            error = error_of(denied)
            assert error["code"] == "TOOL_POLICY_DENIED", error
            assert error.get("details") == {"approvalRoute": "unavailable", "decidedBy": "host"}, error


async def main(argv: list[str]) -> None:
    if len(argv) != 3:
        sys.exit(__doc__)
    binary, root, peer = argv[0], Path(argv[1]), argv[2]
    config = {"mcpServers": {"py": {"command": sys.executable, "args": [peer, "normal"], "env": {"PEER_SECRET": SECRET}}}}
    (root / "claude.json").write_text(json.dumps(config))
    await with_elicitation(binary, root)
    await without_elicitation(binary, root, True)
    await without_elicitation(binary, root, False)
    settings = json.loads((root / "data" / "settings.json").read_text())
    assert settings["mcpServers"]["py"]["env"]["PEER_SECRET"] == SECRET, settings
    print("studio gateway: python client suite passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
