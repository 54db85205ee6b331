"""Long-term strategies driven by the published `agent-memory-client` against a running `agentmem serve`.

Usage: python strategies_client.py BASE_URL TOKEN NAMESPACE [with-model]
With `with-model` the server has a generation model (a local mock) and the `custom`
strategy must work; without it, `custom` must be refused with 400.
Exits non-zero (with the failing assertion) when the server answers wrongly.
"""

import asyncio
import sys
import time
from datetime import datetime, timezone

from agent_memory_client import MemoryAPIClient, MemoryClientConfig
from agent_memory_client.exceptions import MemoryNotFoundError, MemoryServerError
from agent_memory_client.filters import Namespace, SessionId, Topics, UserId
from agent_memory_client.models import (
    ClientMemoryRecord,
    MemoryMessage,
    MemoryStrategyConfig,
    WorkingMemory,
)


def msg(role, content):
    return MemoryMessage(role=role, content=content, created_at=datetime.now(timezone.utc))


async def eventually(what, probe, timeout=15.0):
    """Polls `probe` until it returns a truthy value: extraction runs in the background."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await probe()
        if last:
            return last
        await asyncio.sleep(0.2)
    raise AssertionError(f"{what}: still {last!r} after {timeout}s")


async def texts(client, ns, user, text="", **filters):
    found = await client.search_long_term_memory(
        text=text, user_id=UserId(eq=user), namespace=Namespace(eq=ns), limit=50, **filters
    )
    return [m.text for m in found.memories]


async def put(client, ns, session, user, strategy, messages, **config):
    wm = WorkingMemory(
        session_id=session,
        namespace=ns,
        user_id=user,
        messages=messages,
        long_term_memory_strategy=MemoryStrategyConfig(strategy=strategy, config=config),
    )
    return await client.put_working_memory(session, wm, user_id=user)


async def main(base_url, token, ns, with_model):
    client = MemoryAPIClient(MemoryClientConfig(base_url=base_url, default_namespace=ns))
    client._client.headers["Authorization"] = f"Bearer {token}"
    try:
        # discrete: facts of the messages, found by long-term search
        put1 = await put(client, ns, "disc", "ana", "discrete", [
            msg("user", "I live in Lisbon and I love jazz"),
            msg("assistant", "Lisbon has great jazz clubs!"),
        ])
        assert all(m.discrete_memory_extracted == "t" for m in put1.messages), put1.messages
        found = await eventually(
            "discrete fact",
            lambda: texts(client, ns, "ana", "where does the user live"),
        )
        assert found[0] == "User lives in Lisbon", found
        # appended later: the new place supersedes the old one
        await client.append_messages_to_working_memory(
            "disc", [{"role": "user", "content": "I moved to Porto last month"}], namespace=ns, user_id="ana"
        )

        async def moved():
            found = await texts(client, ns, "ana", "where does the user live")
            return found if found and found[0] == "User lives in Porto" else None

        found = await eventually("superseded fact", moved)
        assert not any("Lisbon" in t for t in found), found

        # summary: one summary memory of the session
        await put(client, ns, "summ", "ben", "summary", [
            msg("user", "We are planning the launch of the new website in March"),
            msg("assistant", "Which stack will you use?"),
            msg("user", "React in front and PostgreSQL behind"),
        ], max_summary_length=80)
        summaries = await eventually(
            "summary memory",
            lambda: texts(client, ns, "ben", "", topics=Topics(any=["summary"]), session_id=SessionId(eq="summ")),
        )
        assert len(summaries) == 1 and "PostgreSQL" in summaries[0], summaries

        # preferences: only preference-like facts
        await put(client, ns, "pref", "cid", "preferences", [
            msg("user", "I live in Rome. I work at Acme. I prefer window seats on planes. My favourite food is sushi."),
        ])

        async def preferences():
            found = sorted(await texts(client, ns, "cid"))
            return found if len(found) >= 2 else None

        found = await eventually("preferences", preferences)
        assert found == ["User likes window seats on planes", "User's favourite food is sushi"], found

        # structured memories are promoted with persisted_at, their ids kept
        wm = WorkingMemory(
            session_id="promo", namespace=ns, user_id="dia", messages=[msg("user", "hello")],
            memories=[ClientMemoryRecord(id="promo-1", text="User likes green tea", memory_type="semantic", user_id="dia")],
        )
        promoted = await client.put_working_memory("promo", wm, user_id="dia")
        assert promoted.memories[0].id == "promo-1", promoted.memories
        assert promoted.memories[0].persisted_at is not None, promoted.memories
        stored = await client.get_long_term_memory("promo-1")
        assert stored.id == "promo-1" and stored.persisted_at is not None, stored
        again = await client.get_working_memory("promo", user_id="dia", namespace=ns)
        assert again.memories[0].persisted_at is not None, again.memories

        # ?ttl_seconds=1 expires (a session of data only: no message to rebuild it from)
        body = WorkingMemory(session_id="short", namespace=ns, user_id="eve", data={"k": "v"})
        response = await client._client.put(
            "/v1/working-memory/short",
            json=body.model_dump(exclude_none=True, mode="json"),
            params={"ttl_seconds": 1, "user_id": "eve"},
        )
        assert response.status_code == 200 and response.json()["ttl_seconds"] == 1, response.text
        got = await client.get_working_memory("short", user_id="eve", namespace=ns)
        assert got.data == {"k": "v"}, got
        await asyncio.sleep(1.6)
        try:
            await client.get_working_memory("short", user_id="eve", namespace=ns)
            raise AssertionError("a session with ?ttl_seconds=1 did not expire")
        except MemoryNotFoundError:
            pass

        # custom: a prompt for the configured model; refused without one
        custom = {"custom_prompt": "CUSTOM-MARKER: list the memories in {message}"}
        if with_model:
            await put(client, ns, "cust", "fay", "custom", [msg("user", "I signed a lease in Porto")], **custom)
            found = await eventually("custom memories", lambda: texts(client, ns, "fay", "lease"))
            assert found == ["User signed a lease in Porto"], found
        else:
            try:
                await put(client, ns, "cust", "fay", "custom", [msg("user", "hi")], **custom)
                raise AssertionError("custom strategy accepted without a model")
            except MemoryServerError as e:
                assert e.status_code == 400, e
        print("strategies client scenario: ok")
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == "with-model"))
