"""The Python `mcp` client against `agent_quickstart DIR serve` over stdio: the typed tools are
listed with their schemas, the read-only one runs without asking, and the destructive one asks
this client (form elicitation): a decline refuses it, saying a person decided.

Usage: quickstart_client.py BIN DIR
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def decline(context, params):
    return types.ElicitResult(action="decline")


async def main(binary: str, folder: str) -> None:
    server = StdioServerParameters(command=binary, args=[folder, "serve"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=decline) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert sorted(tools) == ["notes.append", "notes.read"], tools
            append = tools["notes.append"]
            assert append.input_schema["required"] == ["text"], append.input_schema
            assert append.input_schema["additionalProperties"] is False, append.input_schema
            assert append.annotations.destructive_hint is True, append.annotations

            read_result = await session.call_tool("notes.read", {})
            assert not read_result.is_error, read_result
            # A string result is text content: MCP's structuredContent is an object.
            assert read_result.structured_content is None, read_result
            assert read_result.content[0].text == "first\n", read_result

            refused = await session.call_tool("notes.append", {"text": "over MCP"})
            assert refused.is_error, refused
            error = refused.meta["tool-context/error"]
            assert error["code"] == "TOOL_POLICY_DENIED", error
            assert error["details"]["decidedBy"] == "person", error
    print("quickstart stdio: python client passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
