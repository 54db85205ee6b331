"""Drives `agentmem serve` with the official `anthropic` SDK through every call of
`client.beta.memory_stores` (stores, memories, memory versions), the content_sha256
precondition (409), redaction, pagination and tenant isolation.

usage: anthropic_memory_stores_client.py BASE_URL KEY_TENANT_A KEY_TENANT_B
Prints "scenario: ok" when every check passed.
"""

import hashlib
import sys
import time
from datetime import datetime, timedelta, timezone

import anthropic

base, key_a, key_b = sys.argv[1], sys.argv[2], sys.argv[3]
a = anthropic.Anthropic(base_url=base, api_key=key_a, max_retries=0)
b = anthropic.Anthropic(base_url=base, api_key=key_b, max_retries=0)
ms = a.beta.memory_stores


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def expect(error_type, call):
    try:
        call()
    except error_type as e:
        return e
    raise AssertionError(f"expected {error_type.__name__}")


# --- stores: create, retrieve, update, list (paged), archive, delete
store = ms.create(name="Team Notes", description="what the team decided", metadata={"owner": "alice"})
assert store.type == "memory_store" and store.id.startswith("memstore_"), store
assert store.name == "Team Notes" and store.metadata == {"owner": "alice"} and store.archived_at is None
got = ms.retrieve(store.id)
assert got.id == store.id and got.description == "what the team decided"
updated = ms.update(store.id, name="Team notes", metadata={"owner": None, "team": "core"})
assert updated.name == "Team notes" and updated.metadata == {"team": "core"}, updated.metadata
assert updated.updated_at >= store.updated_at

extra = [ms.create(name=f"scratch {i}") for i in range(4)]
page = ms.list(limit=2)
assert len(page.data) == 2 and page.has_next_page(), page
every = [s.id for s in ms.list(limit=2)]  # auto-pagination follows next_page
assert set(every) == {store.id, *(s.id for s in extra)}, every
assert len(every) == len(set(every)) == 5
newest_first = every == sorted(every, reverse=True)
assert newest_first, every
since = ms.list(created_at_gte=(datetime.now(timezone.utc) + timedelta(hours=1)).isoformat())
assert since.data == [], since.data

archived = ms.archive(extra[0].id)
assert archived.archived_at is not None
assert ms.archive(extra[0].id).archived_at == archived.archived_at  # unchanged
assert extra[0].id not in [s.id for s in ms.list()]
assert extra[0].id in [s.id for s in ms.list(include_archived=True)]
expect(anthropic.BadRequestError, lambda: ms.update(extra[0].id, name="nope"))
expect(anthropic.BadRequestError, lambda: ms.memories.create(extra[0].id, path="/x.md", content="x"))
deleted = ms.delete(extra[1].id)
assert deleted.type == "memory_store_deleted" and deleted.id == extra[1].id
e = expect(anthropic.NotFoundError, lambda: ms.retrieve(extra[1].id))
assert e.type == "not_found_error", e.body
expect(anthropic.BadRequestError, lambda: ms.create(name=""))

# --- memories: create, retrieve, list (depth, prefix, paged, views), update, delete
mem = ms.memories.create(store.id, path="/prefs/food.md", content="Alice is allergic to shellfish.")
assert mem.type == "memory" and mem.id.startswith("mem_") and mem.content is None  # basic view
assert mem.content_sha256 == sha("Alice is allergic to shellfish.") and mem.content_size_bytes == 31
full = ms.memories.retrieve(mem.id, memory_store_id=store.id)
assert full.content == "Alice is allergic to shellfish." and full.path == "/prefs/food.md"
assert ms.memories.retrieve(mem.id, memory_store_id=store.id, view="basic").content is None
e = expect(anthropic.ConflictError, lambda: ms.memories.create(store.id, path="/prefs/food.md", content="dup"))
assert e.status_code == 409
expect(anthropic.BadRequestError, lambda: ms.memories.create(store.id, path="no-slash", content="x"))
expect(anthropic.BadRequestError, lambda: ms.memories.create(store.id, path="/a/../b", content="x"))

for path, text in [
    ("/prefs/travel.md", "Prefers window seats on long flights."),
    ("/projects/apollo/notes.md", "Launch is planned for March."),
    ("/projects/apollo/risks/budget.md", "The budget is tight."),
    ("/readme.md", "Shared notes of the team."),
]:
    ms.memories.create(store.id, path=path, content=text)

paths = [m.path for m in ms.memories.list(store.id, limit=2)]
assert paths == sorted(paths) and len(paths) == 5, paths
top = ms.memories.list(store.id, depth=1)
assert [(i.type, i.path) for i in top.data] == [
    ("memory_prefix", "/prefs/"),
    ("memory_prefix", "/projects/"),
    ("memory", "/readme.md"),
], top.data
apollo = ms.memories.list(store.id, path_prefix="/projects/apollo/", depth=1)
assert [(i.type, i.path) for i in apollo.data] == [
    ("memory", "/projects/apollo/notes.md"),
    ("memory_prefix", "/projects/apollo/risks/"),
], apollo.data
one_by_one = [i.path for i in ms.memories.list(store.id, depth=1, limit=1)]
assert one_by_one == ["/prefs/", "/projects/", "/readme.md"], one_by_one
prefs = ms.memories.list(store.id, path_prefix="/prefs/", view="full")
assert {m.path: m.content for m in prefs.data}["/prefs/travel.md"] == "Prefers window seats on long flights."
expect(anthropic.BadRequestError, lambda: ms.memories.list(store.id, path_prefix="/prefs"))

# update with the content_sha256 precondition: a stale hash is a 409, the right one applies
stale = sha("something else")
e = expect(
    anthropic.ConflictError,
    lambda: ms.memories.update(
        mem.id, memory_store_id=store.id, content="new",
        precondition={"type": "content_sha256", "content_sha256": stale},
    ),
)
assert e.status_code == 409
assert ms.memories.retrieve(mem.id, memory_store_id=store.id).content == "Alice is allergic to shellfish."
v2 = ms.memories.update(
    mem.id, memory_store_id=store.id, content="Alice is allergic to shellfish and peanuts.",
    precondition={"type": "content_sha256", "content_sha256": mem.content_sha256},
)
assert v2.content_sha256 == sha("Alice is allergic to shellfish and peanuts.")
assert v2.memory_version_id != mem.memory_version_id
moved = ms.memories.update(mem.id, memory_store_id=store.id, path="/prefs/allergies.md", view="full")
assert moved.id == mem.id and moved.path == "/prefs/allergies.md" and moved.content.endswith("peanuts.")
expect(anthropic.ConflictError, lambda: ms.memories.update(mem.id, memory_store_id=store.id, path="/readme.md"))
expect(anthropic.NotFoundError, lambda: ms.memories.retrieve("mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", memory_store_id=store.id))

# delete: a stale hash is a 409 and deletes nothing
readme = next(m for m in ms.memories.list(store.id) if m.path == "/readme.md")
expect(anthropic.ConflictError, lambda: ms.memories.delete(readme.id, memory_store_id=store.id, expected_content_sha256=stale))
gone = ms.memories.delete(readme.id, memory_store_id=store.id, expected_content_sha256=readme.content_sha256)
assert gone.type == "memory_deleted" and gone.id == readme.id
expect(anthropic.NotFoundError, lambda: ms.memories.retrieve(readme.id, memory_store_id=store.id))

# --- search (agentmem extension, through the SDK's own client): hybrid, per store
hits = a.post(
    f"/v1/memory_stores/{store.id}/memories/search",
    body={"query": "shellfish allergy", "limit": 3},
    cast_to=object,
)
assert hits["data"] and hits["data"][0]["path"] == "/prefs/allergies.md", hits

# --- versions: list with filters, retrieve, redact
versions = list(ms.memory_versions.list(store.id, memory_id=mem.id, limit=1))
assert [v.operation for v in versions] == ["modified", "modified", "created"], versions
assert versions[0].id == moved.memory_version_id  # newest first
assert all(v.created_by.type == "api_actor" for v in versions)
created_v = versions[-1]
assert created_v.content is None and created_v.content_sha256 == mem.content_sha256  # basic view
assert ms.memory_versions.retrieve(created_v.id, memory_store_id=store.id).content == "Alice is allergic to shellfish."
deletions = list(ms.memory_versions.list(store.id, operation="deleted"))
assert [v.memory_id for v in deletions] == [readme.id] and deletions[0].content_sha256 is None
assert deletions[0].path == "/readme.md"
after_creation = list(ms.memory_versions.list(store.id, created_at_gte=created_v.created_at))
assert created_v.id in [v.id for v in after_creation]
assert list(ms.memory_versions.list(store.id, created_at_lte=datetime(2000, 1, 1, tzinfo=timezone.utc))) == []
api_key = created_v.created_by.api_key_id
assert len(list(ms.memory_versions.list(store.id, api_key_id=api_key))) == 8
# a write that names its session is a session_actor, and the filter finds it
ms.memories.create(store.id, path="/sessions/s1.md", content="from a session",
                   extra_headers={"x-agentmem-session-id": "sesn_123"})
by_session = list(ms.memory_versions.list(store.id, session_id="sesn_123"))
assert len(by_session) == 1 and by_session[0].created_by.session_id == "sesn_123", by_session

e = expect(anthropic.ConflictError, lambda: ms.memory_versions.redact(moved.memory_version_id, memory_store_id=store.id))
redacted = ms.memory_versions.redact(created_v.id, memory_store_id=store.id)
assert redacted.redacted_at is not None and redacted.redacted_by.type == "api_actor"
assert redacted.content is None and redacted.path is None and redacted.content_sha256 is None
again = ms.memory_versions.retrieve(created_v.id, memory_store_id=store.id)
assert again.redacted_at == redacted.redacted_at and again.content is None
assert again.created_by == created_v.created_by  # redaction keeps the author

# --- tenant isolation: tenant B sees nothing of tenant A
bms = b.beta.memory_stores
assert [s.id for s in bms.list()] == []
expect(anthropic.NotFoundError, lambda: bms.retrieve(store.id))
expect(anthropic.NotFoundError, lambda: bms.memories.list(store.id))
expect(anthropic.NotFoundError, lambda: bms.memories.retrieve(mem.id, memory_store_id=store.id))
expect(anthropic.NotFoundError, lambda: bms.memory_versions.list(store.id))
expect(anthropic.NotFoundError, lambda: bms.delete(store.id))
b_store = bms.create(name="Team Notes")
bms.memories.create(b_store.id, path="/prefs/food.md", content="B's own note")
assert b_store.id not in [s.id for s in ms.list()]
assert ms.retrieve(store.id).name == "Team notes"
expect(anthropic.NotFoundError, lambda: ms.memories.list(b_store.id))

# wrong key: AuthenticationError
bad = anthropic.Anthropic(base_url=base, api_key="wrong-key", max_retries=0)
e = expect(anthropic.AuthenticationError, lambda: bad.beta.memory_stores.list())
assert e.type == "authentication_error", e.body

# deleting a store deletes its memories and versions
ms.delete(store.id)
expect(anthropic.NotFoundError, lambda: ms.memories.list(store.id))
print("scenario: ok")
