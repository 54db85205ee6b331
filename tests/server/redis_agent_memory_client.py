"""Drives `agentmem serve` with the official `redis-agent-memory` SDK (0.4): session
events (add, list sessions, get session, get/delete event, delete session), long-term
memory (bulk create, search, get, update, bulk delete), the SDK's error types, that
session events feed the same turn as the v0 API (extraction to long-term memory), and
tenant isolation.

usage: redis_agent_memory_client.py BASE_URL KEY_TENANT_A KEY_TENANT_B
Prints "scenario: ok" when every check passed.
"""

import sys
import time
from datetime import datetime, timezone

from redis_agent_memory import AgentMemory, errors, models

base, key_a, key_b = sys.argv[1], sys.argv[2], sys.argv[3]
a = AgentMemory(server_url=base, api_key=key_a, store_id="support-bot")
b = AgentMemory(server_url=base, api_key=key_b, store_id="support-bot")
now = lambda: datetime.now(timezone.utc)


def expect(error_type, call):
    try:
        call()
    except error_type as e:
        return e
    raise AssertionError(f"expected {error_type.__name__}")


assert a.health().status == "healthy"
assert a.store_health().status == "healthy"

# --- session memory
first = a.add_session_event(
    actor_id="alice", role=models.MessageRole.USER, session_id="chat-1",
    content=[{"text": "I am allergic to shellfish."}], created_at=now(), metadata={"channel": "web"},
).event
assert first.session_id == "chat-1" and first.actor_id == "alice" and first.role == "USER"
assert first.content[0].text == "I am allergic to shellfish." and first.metadata == {"channel": "web"}
reply = a.add_session_event(
    actor_id="bot", role=models.MessageRole.ASSISTANT, session_id="chat-1",
    content=[{"text": "Noted: no shellfish."}], created_at=now(),
).event
third = a.add_session_event(
    actor_id="alice", role=models.MessageRole.USER, session_id="chat-1",
    content=[{"text": "I live in Lisbon."}], created_at=now(),
).event
generated = a.add_session_event(
    actor_id="carol", role=models.MessageRole.USER, content=[{"text": "hello"}], created_at=now(),
).event
assert generated.session_id and generated.session_id != "chat-1"

session = a.get_session_memory(session_id="chat-1")
assert session.session_id == "chat-1" and session.owner_id == "alice"
assert [e.event_id for e in session.events] == [first.event_id, reply.event_id, third.event_id]
assert [e.content[0].text for e in session.events][1] == "Noted: no shellfish."
got = a.get_session_event(session_id="chat-1", event_id=reply.event_id).event
assert got.actor_id == "bot" and got.role == "ASSISTANT"

listed = a.list_sessions(limit=1)
assert listed.total == 2 and len(listed.items) == 1 and listed.next_page_token, listed
rest = a.list_sessions(limit=1, page_token=listed.next_page_token)
assert len(rest.items) == 1 and rest.next_page_token is None, rest
assert sorted(listed.items + rest.items) == sorted(["chat-1", generated.session_id])
assert a.list_sessions(filter_owner_id="carol").items == [generated.session_id]

a.delete_session_event(session_id="chat-1", event_id=third.event_id)
assert [e.event_id for e in a.get_session_memory(session_id="chat-1").events] == [first.event_id, reply.event_id]
e = expect(errors.NotFoundErrorResponseContent, lambda: a.get_session_event(session_id="chat-1", event_id=third.event_id))
assert e.data.status == 404 and e.data.type == "/errors/resource-not-found"
a.delete_session_memory(session_id=generated.session_id)
expect(errors.NotFoundErrorResponseContent, lambda: a.get_session_memory(session_id=generated.session_id))
expect(errors.BadRequestErrorResponseContent, lambda: a.add_session_event(
    actor_id="alice", role=models.MessageRole.USER, session_id="chat-1", content=[{"text": "  "}], created_at=now()))

# session events feed the turn: the user's message is extracted into the store's
# long-term memory, as a PUT of working memory through the v0 API would be
deadline = time.time() + 20
extracted = []
while time.time() < deadline and not extracted:
    extracted = a.search_long_term_memory(request={"text": "shellfish", "filter": {"ownerId": {"eq": "alice"}}}).items
    time.sleep(0.2)
assert extracted, "no memory was extracted from the session's events"
assert extracted[0].owner_id == "alice" and "shellfish" in extracted[0].text.lower(), extracted
assert a.get_long_term_memory(memory_id=extracted[0].id).id == extracted[0].id

# --- long-term memory
created = a.bulk_create_long_term_memories(memories=[
    {"id": "pref-1", "text": "Alice prefers aisle seats on flights.", "ownerId": "alice", "topics": ["travel"]},
    {"id": "pref-2", "text": "Bob likes green tea.", "ownerId": "bob", "memoryType": "semantic", "sessionId": "chat-9"},
])
assert created.created == ["pref-1", "pref-2"], created
one = a.get_long_term_memory(memory_id="pref-1")
assert one.id == "pref-1" and one.owner_id == "alice" and one.topics == ["travel"]
found = a.search_long_term_memory(request={"text": "which seat does she like on a plane", "limit": 5,
                                           "filter": {"ownerId": {"eq": "alice"}}})
assert "pref-1" in [m.id for m in found.items], found.items
assert all(m.owner_id == "alice" for m in found.items)
bobs = a.search_long_term_memory(request={"text": "tea", "filter": {"sessionId": {"eq": "chat-9"}}})
assert [m.id for m in bobs.items] == ["pref-2"], bobs.items
edited = a.update_long_term_memory(memory_id="pref-2", text="Bob likes jasmine tea.")
assert edited.text == "Bob likes jasmine tea." and a.get_long_term_memory(memory_id="pref-2").text == "Bob likes jasmine tea."
gone = a.bulk_delete_long_term_memories(memory_ids=["pref-2", "nope"])
assert gone.deleted == ["pref-2"] and [x.id for x in gone.errors] == ["nope"], gone
expect(errors.NotFoundErrorResponseContent, lambda: a.get_long_term_memory(memory_id="pref-2"))

# --- tenant isolation (same store id, other API key) and stores apart
assert b.list_sessions().total == 0
expect(errors.NotFoundErrorResponseContent, lambda: b.get_session_memory(session_id="chat-1"))
expect(errors.NotFoundErrorResponseContent, lambda: b.get_long_term_memory(memory_id="pref-1"))
assert b.search_long_term_memory(request={"text": "aisle seats"}).items == []
other_store = AgentMemory(server_url=base, api_key=key_a, store_id="other-bot")
expect(errors.NotFoundErrorResponseContent, lambda: other_store.get_long_term_memory(memory_id="pref-1"))
bad = AgentMemory(server_url=base, api_key="wrong", store_id="support-bot")
e = expect(errors.AuthenticationErrorResponseContent, lambda: bad.list_sessions())
assert e.data.status == 401

print("scenario: ok")
