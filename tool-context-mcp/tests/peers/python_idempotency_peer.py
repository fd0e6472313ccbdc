"""An independent client of the `tool-context/idempotency` extension (run by
tests/python_idempotency.rs): the Python `mcp` SDK (2.3+) sends the key in a request's `_meta`.

Usage: python_idempotency_peer.py URL

The server under test serves `work.write` (needs approval; the test counts its runs).
"""

import asyncio
import sys
import uuid

from mcp import Client, types

KEY = "tool-context/idempotency-key"
CAPABILITY = "tool-context/idempotency"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def error_code(result):
    meta = result.meta or {}
    return (meta.get("tool-context/error") or {}).get("code")


async def main(url):
    prompts = []

    async def approve(context, params):
        prompts.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async with Client(url, elicitation_callback=approve) as client:
        capabilities = client.session.discover_result.capabilities
        advertised = (capabilities.experimental or {}).get(CAPABILITY)
        check(advertised is not None, f"capability not advertised: {capabilities}")
        check(advertised.get("metaKey") == KEY, f"capability {advertised}")

        key = f"order-{uuid.uuid4()}"
        first = await client.call_tool("work.write", {"text": "once"}, meta={KEY: key})
        check(not first.is_error, f"first call {first}")
        check(len(prompts) == 1, f"the first call asked {len(prompts)} times")

        # The response was lost; the client retries with the same key.
        again = await client.call_tool("work.write", {"text": "once"}, meta={KEY: key})
        check(not again.is_error, f"retry {again}")
        check(again.structured_content == first.structured_content, f"retry {again}")
        replay = (again.meta or {}).get("tool-context/replay") or {}
        check(replay.get("replayed") is True, f"retry not marked replayed: {again.meta}")
        check(len(prompts) == 1, "the retry asked for approval again")

        other = await client.call_tool("work.write", {"text": "other"}, meta={KEY: key})
        check(other.is_error and error_code(other) == "TOOL_IDEMPOTENCY_CONFLICT", f"{other}")

        for bad in ["has space", "", "k" * 257]:
            refused = await client.call_tool("work.write", {"text": "bad"}, meta={KEY: bad})
            check(refused.is_error and error_code(refused) == "TOOL_INVALID_OPTIONS", f"{refused}")

        unkeyed = await client.call_tool("work.write", {"text": "twice"})
        check(not unkeyed.is_error, f"unkeyed {unkeyed}")
    print("python idempotency peer passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
