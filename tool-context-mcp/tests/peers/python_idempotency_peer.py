"""An independent client of the `tool-context/idempotency` extension (run by
tests/python_idempotency.rs): the Python `mcp` SDK (2.3+) sends the key in a request's `_meta`.

Usage: python_idempotency_peer.py URL [OTHER_URL]

OTHER_URL is a second host of the same fleet (one durable store): the retry of the slow call
goes there while the first host still runs it.

The server under test serves `work.write` (needs approval; the test counts its runs) and
`work.slow` (read-only, takes 1.5 s; counted too).
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


async def main(url, other_url):
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

        # A retry sent while the first call still runs (its response looked lost) waits for it
        # and gets the same answer, replayed: the slow tool runs once.
        slow_key = f"slow-{uuid.uuid4()}"

        async def slow_call(target, delay):
            await asyncio.sleep(delay)
            return await target.call_tool("work.slow", {"text": "slow"}, meta={KEY: slow_key})

        async with Client(other_url, elicitation_callback=approve) as other:
            first_slow, retried_slow = await asyncio.gather(
                slow_call(client, 0), slow_call(other, 0.3)
            )
        check(not first_slow.is_error, f"slow call {first_slow}")
        check(not retried_slow.is_error, f"slow retry {retried_slow}")
        check(retried_slow.structured_content == first_slow.structured_content, f"{retried_slow}")
        waited = (retried_slow.meta or {}).get("tool-context/replay") or {}
        check(waited.get("replayed") is True, f"the waiting retry is a replay: {retried_slow.meta}")
    print("python idempotency peer passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]))
