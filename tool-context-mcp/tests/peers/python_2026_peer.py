"""An independent MCP 2026-07-28 peer for tool-context-mcp (run by tests/python_peer_2026.rs).

Usage: python_2026_peer.py URL

Part one uses the Python `mcp` SDK (2.3+), which speaks 2026-07-28: `server/discover`,
per-request `_meta`, no session, and `input_required` rounds answered through its elicitation
callback. Part two covers the Tasks extension (`io.modelcontextprotocol/tasks`), which that SDK
does not implement, in raw JSON-RPC over HTTP written from the specification text: a
`tools/call` answered with `resultType: "task"`, then `tasks/get` until the task ends.

The server under test serves `work.read` (read-only), `work.write` (needs approval) and
`work.sleep` (read-only, sleeps `ms` milliseconds).
"""

import asyncio
import json
import sys
import time
import urllib.request
import uuid

from mcp import Client, MCPError, types

VERSION = "2026-07-28"
STATE_INVALID = "MCP_REQUEST_STATE_INVALID"
STATE_REPLAYED = "MCP_REQUEST_STATE_REPLAYED"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def answering(action, seen):
    async def callback(context, params):
        seen.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    return callback


def error_code(error):
    data = error.data if isinstance(error.data, dict) else {}
    return data.get("code")


async def sdk_part(url):
    seen = []
    async with Client(url, elicitation_callback=answering("accept", seen)) as client:
        check(client.protocol_version == VERSION, f"negotiated {client.protocol_version}")
        discovered = client.session.discover_result
        check(discovered is not None, "the client connected without server/discover")
        check(VERSION in discovered.supported_versions, f"versions {discovered.supported_versions}")

        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        check(names == ["work.read", "work.sleep", "work.write"], f"tools {names}")

        read = await client.call_tool("work.read", {})
        check(not read.is_error and read.structured_content == {"ok": True}, f"read {read}")

        # One input_required round, driven by the SDK: the form is shown, accept approves.
        written = await client.call_tool("work.write", {"text": "from python"})
        check(not written.is_error, f"write {written}")
        check(written.structured_content["text"] == "from python", f"write {written}")
        check(len(seen) == 1 and "work.write" in seen[0], f"prompts {seen}")

        # The same round by hand: the state is sealed, bound to the call and single-use.
        asked = await client.session.call_tool("work.write", {"text": "manual"}, allow_input_required=True)
        check(isinstance(asked, types.InputRequiredResult), f"asked {asked}")
        check(list(asked.input_requests) == ["approval"], f"requests {asked.input_requests}")
        state = asked.request_state
        accept = {"approval": {"action": "accept", "content": {}}}
        tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        for bad_state, arguments in [(tampered, {"text": "manual"}), (state, {"text": "changed"})]:
            try:
                await client.session.call_tool(
                    "work.write", arguments, input_responses=accept, request_state=bad_state,
                    allow_input_required=True,
                )
                raise AssertionError("an altered requestState was accepted")
            except MCPError as error:
                check(error_code(error) == STATE_INVALID, f"altered state: {error.error}")
        done = await client.session.call_tool(
            "work.write", {"text": "manual"}, input_responses=accept, request_state=state,
            allow_input_required=True,
        )
        check(isinstance(done, types.CallToolResult) and not done.is_error, f"retry {done}")
        try:
            await client.session.call_tool(
                "work.write", {"text": "manual"}, input_responses=accept, request_state=state,
                allow_input_required=True,
            )
            raise AssertionError("a replayed requestState was accepted")
        except MCPError as error:
            check(error_code(error) == STATE_REPLAYED, f"replay: {error.error}")

    declined = []
    async with Client(url, elicitation_callback=answering("decline", declined)) as client:
        denied = await client.call_tool("work.write", {"text": "never"})
        check(denied.is_error, f"declined write ran: {denied}")
        check("TOOL_POLICY_DENIED" in json.dumps(denied.model_dump(mode="json")), f"denied {denied}")
        check(len(declined) == 1, f"prompts {declined}")


class Raw:
    """JSON-RPC over streamable HTTP: one POST per request, `_meta` on each, no session."""

    def __init__(self, url):
        self.url = url

    def request(self, method, params, name=None):
        request_id = str(uuid.uuid4())
        params = dict(params)
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "raw-peer", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}},
            },
        }
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": method,
        }
        if name is not None:
            headers["Mcp-Name"] = name
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            check(response.headers.get("mcp-session-id") is None, "a 2026-07-28 response opened a session")
            content_type = response.headers.get("content-type", "")
            text = response.read().decode()
        message = self.find(content_type, text, request_id)
        check("result" in message, f"{method} failed: {message}")
        return message["result"]

    @staticmethod
    def find(content_type, text, request_id):
        if content_type.startswith("application/json"):
            messages = [json.loads(text)]
        else:
            messages = [
                json.loads(line[5:].strip())
                for line in text.splitlines()
                if line.startswith("data:") and line[5:].strip()
            ]
        for message in messages:
            if message.get("id") == request_id:
                return message
        raise AssertionError(f"no response {request_id} in {text!r}")


def tasks_part(url):
    raw = Raw(url)
    created = raw.request("tools/call", {"name": "work.sleep", "arguments": {"ms": 2000}}, name="work.sleep")
    check(created.get("resultType") == "task", f"no task handle: {created}")
    task_id = created["taskId"]
    check(created["status"] == "working", f"created {created}")
    interval = created.get("pollIntervalMs", 500) / 1000
    for _ in range(100):
        task = raw.request("tasks/get", {"taskId": task_id}, name=task_id)
        if task["status"] in ("completed", "failed", "cancelled"):
            break
        check(task["status"] == "working", f"task {task}")
        time.sleep(interval)
    check(task["status"] == "completed", f"task ended {task}")
    check(task["result"]["structuredContent"] == {"slept": 2000}, f"task result {task}")


async def main():
    url = sys.argv[1]
    await sdk_part(url)
    tasks_part(url)
    print("python 2026-07-28 peer passed")


if __name__ == "__main__":
    asyncio.run(main())
