"""Scripted session of the published `agent-memory-client` against a running `agentmem serve`.

Usage: python rest_client.py BASE_URL TOKEN NAMESPACE
Exits non-zero (with the failing assertion) when the server answers wrongly.
"""

import asyncio
import sys
from datetime import datetime, timezone

from agent_memory_client import MemoryAPIClient, MemoryClientConfig
from agent_memory_client.exceptions import MemoryNotFoundError, MemoryServerError
from agent_memory_client.filters import Namespace, Topics, UserId
from agent_memory_client.models import ClientMemoryRecord, MemoryMessage, WorkingMemory


def msg(role, content):
    return MemoryMessage(role=role, content=content, created_at=datetime.now(timezone.utc))


async def main(base_url, token, ns):
    client = MemoryAPIClient(MemoryClientConfig(base_url=base_url, default_namespace=ns))
    client._client.headers["Authorization"] = f"Bearer {token}"
    try:
        health = await client.health_check()
        assert health.now > 0, health

        # get-or-create: a new session is created, then found
        created, memory = await client.get_or_create_working_memory("s1", user_id="alice")
        assert created is True and memory.messages == [], (created, memory)
        created, memory = await client.get_or_create_working_memory("s1", user_id="alice")
        assert created is False, created

        # put, get
        wm = WorkingMemory(
            session_id="s1",
            namespace=ns,
            user_id="alice",
            messages=[msg("user", "Hi, I'm planning a trip to Paris"), msg("assistant", "Lovely! When?")],
            data={"trip": {"city": "Paris"}},
        )
        put = await client.put_working_memory("s1", wm, user_id="alice")
        assert len(put.messages) == 2 and put.tokens > 0, put
        got = await client.get_working_memory("s1", user_id="alice", namespace=ns)
        assert [m.content for m in got.messages] == [m.content for m in wm.messages], got
        assert got.data == {"trip": {"city": "Paris"}}, got.data

        # append
        appended = await client.append_messages_to_working_memory(
            "s1", [{"role": "user", "content": "Next month, I love museums"}], user_id="alice"
        )
        assert len(appended.messages) == 3, appended
        got = await client.get_working_memory("s1", user_id="alice")
        assert got.messages[-1].content == "Next month, I love museums", got.messages

        # summarisation when over the window
        long = [msg("user" if i % 2 == 0 else "assistant", f"turn {i}: " + "we talked about museums in Paris " * 8) for i in range(30)]
        summarised = await client.put_working_memory(
            "s2", WorkingMemory(session_id="s2", namespace=ns, user_id="alice", messages=long),
            user_id="alice", context_window_max=800,
        )
        assert summarised.context, "expected a summary in context"
        assert len(summarised.messages) < 30, len(summarised.messages)
        assert summarised.messages[-1].content.startswith("turn 29"), summarised.messages[-1]

        # list
        listed = await client.list_sessions(namespace=ns, user_id="alice")
        assert listed.sessions == ["s1", "s2"] and listed.total == 2, listed
        page = await client.list_sessions(namespace=ns, limit=1, offset=1)
        assert page.sessions == ["s2"] and page.total == 2, page

        # delete
        ack = await client.delete_working_memory("s2", user_id="alice")
        assert ack.status == "ok", ack
        try:
            await client.get_working_memory("s2", user_id="alice")
            raise AssertionError("deleted session still readable")
        except MemoryNotFoundError:
            pass

        # long-term create and search (a duplicate reinforces, a contradiction supersedes)
        await client.create_long_term_memory([
            ClientMemoryRecord(id="m1", text="User lives in Paris", memory_type="semantic", user_id="alice", topics=["home"]),
            ClientMemoryRecord(id="m2", text="User prefers window seats on planes", memory_type="semantic", user_id="alice", topics=["travel"]),
            ClientMemoryRecord(id="m3", text="Alice visited the Louvre museum last spring", memory_type="episodic", user_id="alice", topics=["travel"]),
            ClientMemoryRecord(id="b1", text="Bob prefers aisle seats", memory_type="semantic", user_id="bob", topics=["travel"]),
        ])
        await client.create_long_term_memory([
            ClientMemoryRecord(id="m4", text="User lives in Berlin", memory_type="semantic", user_id="alice", topics=["home"]),
        ])
        found = await client.search_long_term_memory(text="where does the user live", user_id=UserId(eq="alice"), namespace=Namespace(eq=ns))
        texts = [m.text for m in found.memories]
        assert "User lives in Berlin" in texts and "User lives in Paris" not in texts, texts
        travel = await client.search_long_term_memory(text="seats", topics=Topics(any=["travel"]), user_id=UserId(eq="alice"))
        assert [m.id for m in travel.memories][:1] == ["m2"], [(m.id, m.text) for m in travel.memories]
        assert all(m.user_id == "alice" for m in travel.memories), travel
        museum = await client.search_long_term_memory(text="museum", user_id=UserId(eq="alice"))
        assert any(m.id == "m3" for m in museum.memories), museum

        # get, edit, delete by id
        m2 = await client.get_long_term_memory("m2")
        assert m2.text == "User prefers window seats on planes" and m2.memory_type.value == "semantic", m2
        edited = await client.edit_long_term_memory("m3", {"text": "Alice visited the Orsay museum"})
        assert edited.text == "Alice visited the Orsay museum", edited
        await client.delete_long_term_memories(["m3"])
        try:
            await client.get_long_term_memory("m3")
            raise AssertionError("deleted memory still readable")
        except MemoryNotFoundError:
            pass

        # empty content is refused with 400
        try:
            await client.create_long_term_memory([ClientMemoryRecord(text="  ", user_id="alice")])
            raise AssertionError("empty memory accepted")
        except MemoryServerError as e:
            assert e.status_code == 400, e

        # memory prompt: working memory and long-term memories
        prompt = await client.memory_prompt(
            "Where should I go this weekend?", session_id="s1", user_id="alice",
            long_term_search={"text": "where does the user live", "user_id": {"eq": "alice"}, "limit": 5},
        )
        rendered = str(prompt["messages"])
        assert "Berlin" in rendered and "museums" in rendered, rendered
        assert prompt["messages"][-1]["role"] == "user", prompt["messages"][-1]
        print("rest client scenario: ok")
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
