"""An MCP server that misbehaves on purpose, for tool-context-mcp's client tests.

Usage: python3 python_misbehaving_server.py MODE [--http PORT]

Stdio by default; `--http PORT` serves streamable HTTP at http://127.0.0.1:PORT/mcp instead.
Needs the Python `mcp` package 2.3 or newer (scripts/test.sh installs it).

| mode          | built on | revisions | what it does                                               |
|---------------|----------|-----------|------------------------------------------------------------|
| normal        | SDK      | both      | a well-behaved server whose tools misbehave one at a time  |
| huge_list     | SDK      | both      | 5000 tools, 100 per page, `nextCursor` between pages       |
| endless_pages | SDK      | both      | every page is one tool and a `nextCursor`, forever         |
| bad_names     | raw      | both      | duplicate, dotted, spaced, control-char, 300-char names    |
| bad_schemas   | raw      | both      | input schemas: invalid, non-object, 2 MB, 40 levels deep   |
| big_result    | raw      | both      | tool `flood` returns a 100 MB text result, streamed        |
| hang          | raw      | none      | accepts the connection, never answers anything             |
| garbage       | raw      | none      | answers with non-JSON lines (stdio) or bodies (HTTP)       |

"both" is 2025-11-25 (`initialize`) and 2026-07-28 (`server/discover`, `_meta` on each request).

Tools of `normal` (none carries annotations except `read_only`):

    echo {text}        text content plus structuredContent {text}
    add {a, b}         text "a+b" plus structuredContent {sum}
    write_note {text}  a mutation: appends a line to $NOTES_FILE (memory when unset), returns the count
    slow {ms}          sleeps ms milliseconds; when cancelled, appends "cancelled" to $CANCEL_FILE
    fail               a result with isError true and text "it broke"
    read_only          annotated readOnlyHint true (an untrusted hint the client must not believe)
    ask                asks the client for input during the call (2025: an elicitation/create
                       request; 2026: an input_required result) and returns the answer as
                       structuredContent {action, content}
    die                the process exits with status 3 in the middle of the call (over HTTP
                       that ends the whole server, every session with it)
    big {bytes}        a text content of exactly that many bytes
    jsonrpc_error      a JSON-RPC error -32001 "remote refused" instead of a result
    change             adds the tool `added_later`, announces notifications/tools/list_changed
                       (2025: on the call's own stream; 2026: to subscriptions/listen streams)

"SDK" modes are served by the `mcp` package's low-level `Server`, which speaks both revisions
(and, over HTTP, 2025 sessions as well as 2026 single-exchange POSTs). "raw" modes are a
hand-written JSON-RPC loop, because the package refuses to emit what they send (it validates its
own results: a non-object input schema or a deeply nested schema never leaves it),
or, for `big_result`, because the SDK would hold the 100 MB result several times over (about
650 MB) where the raw loop writes it in 1 MB pieces.
The raw loop still speaks the real handshakes: `initialize` is answered with protocolVersion
2025-11-25 and `server/discover` with 2026-07-28, so either kind of client reaches `tools/list`;
its HTTP side answers each POST with one application/json body and keeps no session.
Stdio raw modes exit when stdin closes (`hang` included), so a dropped client leaves no process.
"""

import argparse
import asyncio
import json
import os
import sys

MODES = ("normal", "huge_list", "endless_pages", "big_result", "bad_names", "bad_schemas", "hang", "garbage")
LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "python-misbehaving-server", "version": "1.0.0"}


# ==================================================================== SDK modes (both revisions)


def sdk_server(mode):
    """The low-level `Server` for `mode`; it negotiates whichever revision the client asks for."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    def tool(name, properties=None, required=None, annotations=None, description=None):
        schema = {"type": "object", "properties": properties or {}}
        if required:
            schema["required"] = required
        return types.Tool(name=name, description=description or name, input_schema=schema, annotations=annotations)

    def text(value, structured=None, is_error=False):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=value)], structured_content=structured, is_error=is_error
        )

    string, number, integer = {"type": "string"}, {"type": "number"}, {"type": "integer"}
    tools = {
        "normal": [
            tool("echo", {"text": string}, ["text"], description="Returns its text."),
            tool("add", {"a": number, "b": number}, ["a", "b"], description="Adds two numbers."),
            tool("write_note", {"text": string}, ["text"], description="Appends a note (a mutation)."),
            tool("slow", {"ms": integer}, ["ms"], description="Sleeps ms milliseconds."),
            tool("fail", description="Always fails with isError."),
            tool("read_only", annotations=types.ToolAnnotations(read_only_hint=True), description="Claims read-only."),
            tool("ask", description="Asks the client a question during the call."),
            tool("die", description="Kills the server process mid-call."),
            tool("big", {"bytes": integer}, ["bytes"], description="Returns that many bytes of text."),
            tool("jsonrpc_error", description="Answers with a JSON-RPC error."),
            tool("change", description="Adds the tool added_later and announces list_changed."),
        ],
        # Pagination a client must follow, but bounded: 50 pages.
        "huge_list": [tool(f"tool_{i:04}", description=f"Tool {i} of 5000.") for i in range(5000)],
    }.get(mode, [])
    bus = InMemorySubscriptionBus()
    notes = []  # write_note without $NOTES_FILE

    async def list_tools(ctx, params):
        cursor = params.cursor if params is not None else None
        if mode == "endless_pages":
            # A server that never stops paging: the client must stop after its own bound.
            page = int(cursor or 0)
            return types.ListToolsResult(tools=[tool(f"page_{page}")], next_cursor=str(page + 1))
        if mode == "huge_list":
            start = int(cursor or 0)
            end = start + 100
            return types.ListToolsResult(
                tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
            )
        return types.ListToolsResult(tools=list(tools))

    async def call_tool(ctx, params):
        name, args = params.name, params.arguments or {}
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if mode != "normal":
            # huge_list / endless_pages: any listed tool answers with its own name.
            if name in {t.name for t in tools} or (mode == "endless_pages" and name.startswith("page_")):
                return text(f"called {name}")
            raise MCPError(-32602, f"unknown tool {name}")
        if name == "echo":
            return text(str(args.get("text", "")), {"text": args.get("text", "")})
        if name == "add":
            total = args.get("a", 0) + args.get("b", 0)
            return text(str(total), {"sum": total})
        if name == "write_note":
            # A mutation with no annotations: the idempotency tests count how often it really ran.
            path = os.environ.get("NOTES_FILE")
            if path:
                with open(path, "a", encoding="utf-8") as f:
                    f.write(str(args.get("text", "")).replace("\n", " ") + "\n")
                with open(path, encoding="utf-8") as f:
                    count = sum(1 for _ in f)
            else:
                notes.append(args.get("text", ""))
                count = len(notes)
            return text(f"{count} notes", {"notes": count})
        if name == "slow":
            # Proves cancellation reached the server: only a real cancel writes the file.
            ms = int(args.get("ms", 0))
            try:
                await anyio.sleep(ms / 1000)
            except anyio.get_cancelled_exc_class():
                path = os.environ.get("CANCEL_FILE")
                if path:
                    with open(path, "a", encoding="utf-8") as f:
                        f.write("cancelled\n")
                raise
            return text(f"slept {ms} ms", {"slept": ms})
        if name == "fail":
            return text("it broke", is_error=True)
        if name == "read_only":
            return text("read only", {"readOnly": True})
        if name == "ask":
            return await ask(ctx, params, modern)
        if name == "die":
            # The connection is lost after the call was sent: the outcome is unknown to the client.
            sys.stderr.flush()
            os._exit(3)
        if name == "big":
            size = max(0, int(args.get("bytes", 0)))
            return text("b" * size)
        if name == "jsonrpc_error":
            raise MCPError(-32001, "remote refused")
        if name == "change":
            if "added_later" not in {t.name for t in tools}:
                tools.append(tool("added_later", description="Appeared after the change tool ran."))
            if modern:
                # 2026-07-28 has no standing stream: change events go to subscriptions/listen.
                await bus.publish(ToolsListChanged())
            else:
                # Related to this call, so on streamable HTTP it rides the call's own SSE stream
                # (a client need not hold the optional GET stream open); stdio has one pipe anyway.
                changed = types.ToolListChangedNotification()
                await ctx.session.send_notification(changed, related_request_id=ctx.request_id)
            return text("added added_later", {"added": "added_later"})
        if name == "added_later" and name in {t.name for t in tools}:
            return text("added later", {"addedLater": True})
        raise MCPError(-32602, f"unknown tool {name}")

    question = "python-misbehaving-server asks: may I go on?"
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Confirm"}}}

    async def ask(ctx, params, modern):
        # A remote server asking the person something mid-call: the client must show it to a person
        # or decline it, never accept it by itself. The answer is echoed so a test can see it.
        if modern:
            answer = (params.input_responses or {}).get("confirm")
            if answer is None:
                return types.InputRequiredResult(
                    input_requests={
                        "confirm": types.ElicitRequest(
                            params=types.ElicitRequestFormParams(message=question, requested_schema=schema)
                        )
                    },
                    request_state="ask",
                )
            if not isinstance(answer, types.ElicitResult):
                return text(f"unexpected answer {answer!r}", is_error=True)
        else:
            try:
                answer = await ctx.session.elicit_form(question, schema, related_request_id=ctx.request_id)
            except MCPError as error:
                body = {"error": {"code": error.code, "message": error.message}}
                return text(json.dumps(body), body, is_error=True)
        body = {"action": answer.action, "content": answer.content}
        return text(json.dumps(body), body)

    class MisbehavingServer(Server):
        # tools.listChanged on 2025 connections; the streamable HTTP manager builds the options
        # itself, so the default has to change here rather than at the call site.
        def create_initialization_options(self, notification_options=None, *args, **kwargs):
            options = notification_options or NotificationOptions(tools_changed=True)
            return super().create_initialization_options(options, *args, **kwargs)

    return MisbehavingServer(
        "python-misbehaving-server",
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


def run_sdk(mode, port):
    import anyio

    server = sdk_server(mode)
    if port is None:
        from mcp.server.stdio import stdio_server

        async def serve():
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
    else:
        import uvicorn

        app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# ==================================================================== raw modes


def raw_tools(mode):
    """The tool list the SDK would not send (or, for `big_result`, would send too expensively)."""
    empty = {"type": "object", "properties": {}}
    if mode == "big_result":
        return [
            {"name": "flood", "description": "Returns 100 MB of text.", "inputSchema": empty},
            {"name": "ok", "description": "Answers normally (the connection outlived the flood).", "inputSchema": empty},
        ]
    if mode == "bad_names":
        # Names a client must reject or map reversibly: a duplicate (which one wins?), a dot
        # (clashes with `<server>.<tool>`), a space, a control character, and 300 characters.
        names = ["dup", "dup", "a.b", "has space", "ctl\u0007x", "n" * 300, "ok"]
        return [{"name": n, "description": f"tool {n!r}", "inputSchema": empty} for n in names]
    if mode != "bad_schemas":
        return []
    # Remote schemas are untrusted input: each bad one must become a skipped tool with a reason
    # (or a bounded refusal), while "ok" stays usable.
    prop = {"type": "string", "description": "a property of a deliberately huge input schema"}
    per_property = len(json.dumps({"p00000": prop})) - 1  # the entry and its ", " separator
    count = 2 * 1024 * 1024 // per_property + 1  # about 22000 properties, just over 2 MB
    huge = {"type": "object", "properties": {f"p{i:05}": dict(prop) for i in range(count)}}
    deep = {"type": "object"}
    level = deep
    # 40 nested object schemas (JSON nesting depth about 80): deeper than the client's schema
    # bound, yet within what a JSON reader with a 128-level limit still parses, so only this tool
    # is lost, not the whole list.
    for _ in range(39):
        level["properties"] = {"n": {"type": "object"}}
        level = level["properties"]["n"]
    return [
        {"name": "not_a_type", "inputSchema": {"type": "object", "properties": {"x": {"type": "not-a-type"}}}},
        {"name": "string_root", "inputSchema": {"type": "string"}},
        {"name": "huge_schema", "inputSchema": huge},
        {"name": "deep_schema", "inputSchema": deep},
        {"name": "ok", "description": "The one good tool.", "inputSchema": empty},
    ]


FLOOD_BYTES = 100 * 1024 * 1024
FLOOD_PIECE = b"x" * (1024 * 1024)


def raw_answer(tools, message):
    """The JSON-RPC response to one parsed message as (length, iterable of byte pieces), or None.

    None for notifications (notifications/initialized, notifications/cancelled) and anything
    that is not a request. Pieces let the 100 MB `flood` result leave 1 MB at a time.
    """
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    rid, method, params = message["id"], message["method"], message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    modern = isinstance(meta, dict) and meta.get(PROTOCOL_VERSION_META) == MODERN_VERSION
    done = {"resultType": "complete"} if modern else {}

    def whole(response):
        data = json.dumps(response).encode()
        return len(data), [data]

    def error(code, text):
        return whole({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}})

    if method == "initialize":
        result = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "server/discover":
        result = {
            "supportedVersions": [MODERN_VERSION],
            "capabilities": {"tools": {}},  # no subscriptions/listen here, so no listChanged
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        }
    elif method == "ping":
        result = dict(done)
    elif method == "tools/list":
        result = {"tools": tools, **done}
        if modern:
            result.update(ttlMs=0, cacheScope="private")
    elif method == "tools/call":
        name = params.get("name")
        if not any(t["name"] == name for t in tools):
            return error(-32602, f"unknown tool {name!r}")
        if name == "flood":
            # 100 MB in one text content: the client must cut it off at its output budget
            # without first holding all of it.
            head = json.dumps({"jsonrpc": "2.0", "id": rid}).encode()[:-1]
            head += b', "result": {"content": [{"type": "text", "text": "'
            tail = b'"}], "isError": false' + (b', "resultType": "complete"' if modern else b"") + b"}}"
            pieces = FLOOD_BYTES // len(FLOOD_PIECE)
            return len(head) + FLOOD_BYTES + len(tail), [head, *([FLOOD_PIECE] * pieces), tail]
        # Names the called tool, so a test can check which remote name a mapped name reached.
        result = {"content": [{"type": "text", "text": f"called {name}"}], "isError": False, **done}
    else:
        return error(-32601, f"method not found: {method}")
    return whole({"jsonrpc": "2.0", "id": rid, "result": result})


# Non-JSON output for `garbage`: a greeting, binary junk (invalid UTF-8, NUL), a truncated object.
GARBAGE = [b"hello\n", b"\x00\xff\xfe\x80\x81 binary junk \xc3\x28\n", b'{"jsonrpc":"2.0","id":\n']


async def raw_stdio(mode):
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    out = sys.stdout.buffer
    tools = raw_tools(mode)
    if mode == "garbage":
        out.writelines(GARBAGE)  # before anything was asked, too
        out.flush()
    while True:
        line = await reader.readline()
        if not line:
            # The client went away. Even `hang` leaves then, so a test that drops its client
            # does not leave a process behind (a client must still never wait for this).
            return
        if mode == "hang":
            continue  # read and ignored: initialize / server/discover never get an answer
        if mode == "garbage":
            out.writelines(GARBAGE)
            out.flush()
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        answer = raw_answer(tools, message)
        if answer is not None:
            try:
                for piece in answer[1]:
                    out.write(piece)
                out.write(b"\n")
                out.flush()
            except BrokenPipeError:
                return  # the client stopped reading (a budget cut) and closed the pipe


async def raw_http(mode, port):
    """Just enough HTTP/1.1 for streamable HTTP: POST /mcp in, one JSON body out, no session."""
    tools = raw_tools(mode)

    def plain(payload):
        return len(payload), [payload]

    async def connection(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                headers = {}
                for h in header_lines:
                    if ":" in h:
                        key, value = h.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                method, path = request_line.split(" ")[:2]
                if mode == "hang":
                    await asyncio.Event().wait()  # the connection stays open, nothing comes back
                if mode == "garbage":
                    status, content_type, answer = "200 OK", "application/json", plain(b"".join(GARBAGE))
                elif path.split("?")[0] != "/mcp":
                    status, content_type, answer = "404 Not Found", "text/plain", plain(b"not found")
                elif method != "POST":
                    # No standalone GET stream and no session to DELETE (allowed by the spec).
                    status, content_type, answer = "405 Method Not Allowed", "text/plain", plain(b"")
                else:
                    try:
                        answer = raw_answer(tools, json.loads(body))
                    except ValueError:
                        answer = None
                    status, content_type = "200 OK", "application/json"
                    if answer is None:  # a notification (or junk): accepted, nothing to say
                        status, answer = "202 Accepted", plain(b"")
                length, pieces = answer
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n".encode()
                )
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", port, limit=64 * 1024 * 1024)
    print(f"python-misbehaving-server ({mode}) on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP at http://127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    if args.mode in ("bad_names", "bad_schemas", "big_result", "hang", "garbage"):
        asyncio.run(raw_http(args.mode, args.http) if args.http is not None else raw_stdio(args.mode))
    else:
        run_sdk(args.mode, args.http)


if __name__ == "__main__":
    main()
