#!/usr/bin/env python3
"""An independent MCP client (the Python `mcp` package) against the studio.

Usage:
  studio_mcp_client.py stdio <path to the studio binary> <empty temp folder>
  studio_mcp_client.py http <mcp url> <token>

Over stdio it runs `studio mcp --folder <temp>/site --data-dir <temp>/data` (and writes the
site); over HTTP it connects to a running studio (no page attached) with
`Authorization: Bearer <token>`. Two sessions:

1. A client without elicitation: initialize, paged tools/list, a read, a revision-guarded
   write that is denied (nobody can approve it), an unknown tool (-32602), invalid arguments
   (TOOL_VALIDATION_FAILED) and a destructive call denied without approval.
2. A client with elicitation: the same write is approved through the elicitation prompt and
   lands; a stale write is approved and then fails with WORKSPACE_REVISION_CONFLICT; a
   destructive call the person declines is denied; progress reports the approval wait; a call
   the client gives up on (cancelled) withdraws its prompt and changes nothing.

Error results carry the coded error in `_meta["tool-context/error"]` (and its JSON in the text
content), never in `structuredContent`. The approval form has no field: accept with `{}`.

Exits 0 when every assertion holds; any failure raises (non-zero exit with a traceback).
"""

import contextlib
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

ERROR_META = "tool-context/error"

SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"
INDEX = "<!doctype html>\n<h1 id=\"hero-title\">Hello</h1>\n"


def error_of(result: types.CallToolResult) -> dict:
    assert result.is_error, f"expected an error result, got {result}"
    assert result.structured_content is None, f"error results carry no structuredContent: {result}"
    error = (result.meta or {}).get(ERROR_META)
    assert isinstance(error, dict), f"error results carry _meta[{ERROR_META!r}]: {result}"
    texts = [block.text for block in result.content if block.type == "text"]
    assert any(error["code"] in text for text in texts), f"the code is in the content: {result}"
    return error


def expect_code(result: types.CallToolResult, code: str) -> dict:
    error = error_of(result)
    assert error["code"] == code, f"expected {code}, got {error}"
    return error


def parameters(binary: str, root: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=binary,
        args=["mcp", "--folder", str(root / "site"), "--data-dir", str(root / "data")],
        env={"RUST_LOG": "warn"},
    )


@contextlib.asynccontextmanager
async def connect(target: tuple):
    """The (read, write) streams of one session over the target's transport."""
    if target[0] == "stdio":
        async with stdio_client(parameters(target[1], target[2])) as (read_stream, write_stream):
            yield read_stream, write_stream
        return
    _, url, token = target
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams[0], streams[1]


async def read(session: ClientSession, path: str) -> dict:
    result = await session.call_tool("workspace.readFile", {"path": path})
    assert not result.is_error, result
    return result.structured_content


async def list_all_tools(session: ClientSession) -> list:
    tools, cursor, pages = [], None, 0
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        pages += 1
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
        assert pages < 100, "tools/list cursors must end"
    return tools


async def session_without_elicitation(target: tuple) -> None:
    async with connect(target) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream) as session:
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25", init.protocol_version
            assert init.server_info.name == "live-code-studio", init.server_info
            assert init.capabilities.tools is not None

            tools = {tool.name: tool for tool in await list_all_tools(session)}
            for name in ("workspace.readFile", "workspace.writeFile", "workspace.deleteFile"):
                assert name in tools, f"{name} is listed"
            read_file = tools["workspace.readFile"]
            assert read_file.input_schema["$schema"] == SCHEMA_2020_12
            assert read_file.input_schema["required"] == ["path"]
            assert read_file.output_schema is not None and read_file.output_schema["type"] == "object"
            assert read_file.annotations.read_only_hint is True
            assert tools["workspace.deleteFile"].annotations.destructive_hint is True
            assert tools["workspace.writeFile"].title == "Write file"

            index = await read(session, "index.html")
            assert index["source"] == INDEX, index
            revision = index["revision"]

            # A revision-guarded write needs approval; this client cannot be asked and no studio
            # page is attached, so it is denied and nothing changes.
            denied = await session.call_tool(
                "workspace.writeFile",
                {"path": "index.html", "source": "<h1>nope</h1>", "expectedRevision": revision},
            )
            error = expect_code(denied, "TOOL_POLICY_DENIED")
            assert error["retryable"] is False
            assert error["details"] == {"approvalRoute": "unavailable", "decidedBy": "host"}, error
            assert (await read(session, "index.html"))["source"] == INDEX

            try:
                await session.call_tool("workspace.nope", {})
                raise AssertionError("an unknown tool must be a JSON-RPC error")
            except MCPError as failure:
                assert failure.code == -32602, failure
                assert failure.data["code"] == "TOOL_NOT_FOUND", failure.data

            invalid = await session.call_tool("workspace.readFile", {"path": ""})
            error = expect_code(invalid, "TOOL_VALIDATION_FAILED")
            assert error["details"]["issues"], error
            missing = await session.call_tool("workspace.writeFile", {"path": "index.html"})
            expect_code(missing, "TOOL_VALIDATION_FAILED")

            destroyed = await session.call_tool("workspace.deleteFile", {"path": "notes.txt"})
            expect_code(destroyed, "TOOL_POLICY_DENIED")
            assert (await read(session, "notes.txt"))["source"] == "keep me\n"


async def session_with_elicitation(target: tuple) -> None:
    asked: list[str] = []
    prompted = anyio.Event()
    withdrawn = anyio.Event()

    async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        schema = params.requested_schema
        assert schema["properties"] == {} and "required" not in schema, schema
        if "workspace.deleteFile" in params.message:
            return types.ElicitResult(action="decline")
        if "cancel.txt" in params.message:
            prompted.set()
            try:
                await anyio.sleep_forever()
            finally:
                withdrawn.set()
        return types.ElicitResult(action="accept", content={})

    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with connect(target) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream, elicitation_callback=answer) as session:
            await session.initialize()
            index = await read(session, "index.html")
            revision = index["revision"]

            written = await session.call_tool(
                "workspace.writeFile",
                {"path": "index.html", "source": "<h1>approved</h1>\n", "expectedRevision": revision},
                progress_callback=on_progress,
            )
            assert not written.is_error, written
            assert len(asked) == 1 and "workspace.writeFile" in asked[0], asked
            assert "path: index.html" in asked[0], asked[0]
            assert "source: 18 bytes, 1 line, sha256 " in asked[0], asked[0]
            # The arguments never show the source; the proposed change shows the diff's first lines.
            arguments, _, change = asked[0].partition("Proposed change:")
            assert "approved</h1>" not in arguments, "raw source is never shown as an argument"
            assert "modified index.html +1 " in change, asked[0]
            assert "  + <h1>approved</h1>" in change, asked[0]
            assert any(m.startswith('Waiting for approval of "workspace.writeFile"') for m in progress), progress
            after = await read(session, "index.html")
            assert after["source"] == "<h1>approved</h1>\n", after
            assert after["revision"] > revision

            # Approved, then refused by the workspace: the revision moved on.
            stale = await session.call_tool(
                "workspace.writeFile",
                {"path": "index.html", "source": "<h1>stale</h1>\n", "expectedRevision": revision},
            )
            error = expect_code(stale, "WORKSPACE_REVISION_CONFLICT")
            assert error["retryable"] is True, error
            assert error["details"]["expectedRevision"] == revision, error
            assert error["details"]["currentRevision"] == after["revision"], error
            assert len(asked) == 2
            assert (await read(session, "index.html"))["source"] == "<h1>approved</h1>\n"

            declined = await session.call_tool("workspace.deleteFile", {"path": "notes.txt"})
            error = expect_code(declined, "TOOL_POLICY_DENIED")
            assert error["details"]["decidedBy"] == "person", error
            assert len(asked) == 3
            assert (await read(session, "notes.txt"))["source"] == "keep me\n"

            # The client gives up while the person has not answered: the server withdraws the
            # prompt and the write never runs.
            async with anyio.create_task_group() as group:
                group.start_soon(
                    session.call_tool,
                    "workspace.writeFile",
                    {"path": "cancel.txt", "source": "never\n", "expectedRevision": after["revision"]},
                )
                with anyio.fail_after(10):
                    await prompted.wait()
                group.cancel_scope.cancel()
            with anyio.fail_after(10):
                await withdrawn.wait()
            gone = await session.call_tool("workspace.readFile", {"path": "cancel.txt"})
            assert gone.is_error, "the cancelled write did not run"


def write_site(site: Path) -> None:
    site.mkdir(parents=True, exist_ok=True)
    (site / "index.html").write_text(INDEX)
    (site / "notes.txt").write_text("keep me\n")


async def main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[0] == "stdio":
        root = Path(argv[2])
        write_site(root / "site")
        target = ("stdio", argv[1], root)
    elif len(argv) == 3 and argv[0] == "http":
        target = ("http", argv[1], argv[2])
    else:
        sys.exit(__doc__)
    await session_without_elicitation(target)
    await session_with_elicitation(target)
    print(f"studio {target[0]}: python client suite passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
