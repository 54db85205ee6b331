"""Scripted session of the official MCP Python SDK against `agentmem mcp --memory-graph`
(stdio): the nine knowledge-graph tools of the reference MCP `memory` server
(modelcontextprotocol/servers, src/memory), with the results the reference server gives
for the same calls on an empty graph.

Usage: python mcp_graph_client.py session AGENTMEM_BIN STORE_URL
       python mcp_graph_client.py concurrent AGENTMEM_BIN STORE_URL
       python mcp_graph_client.py http URL TOKEN
  session:    the scripted session, on an empty store
  http:       the same session on `/mcp` of `agentmem serve --memory-graph`
  concurrent: two server processes on one store, writing at the same time; nothing is lost
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {
    "create_entities", "create_relations", "add_observations", "delete_entities",
    "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes",
}

# (readOnlyHint, destructiveHint, idempotentHint) as the reference declares them
ANNOTATIONS = {
    "create_entities": (False, False, False),
    "create_relations": (False, False, False),
    "add_observations": (False, False, False),
    "delete_entities": (False, True, True),
    "delete_observations": (False, True, True),
    "delete_relations": (False, True, True),
    "read_graph": (True, False, True),
    "search_nodes": (True, False, True),
    "open_nodes": (True, False, True),
}

# the argument each tool requires, as in the reference's input schemas
REQUIRED = {
    "create_entities": ["entities"],
    "create_relations": ["relations"],
    "add_observations": ["observations"],
    "delete_entities": ["entityNames"],
    "delete_observations": ["deletions"],
    "delete_relations": ["relations"],
    "read_graph": [],
    "search_nodes": ["query"],
    "open_nodes": ["names"],
}


def attr(obj, snake, camel):
    """The MCP SDK renamed fields to snake_case in 2.x; accept both."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def is_error(result):
    return bool(attr(result, "is_error", "isError"))


def text(result):
    assert not is_error(result), result
    return result.content[0].text


def structured(result):
    return attr(result, "structured_content", "structuredContent")


def error_text(result):
    assert is_error(result), result
    return result.content[0].text


async def call(session, tool, args):
    return await session.call_tool(tool, args)


def entity(name, entity_type, observations):
    return {"name": name, "entityType": entity_type, "observations": observations}


def relation(frm, to, relation_type):
    return {"from": frm, "to": to, "relationType": relation_type}


def pretty(value):
    """The reference's `JSON.stringify(value, null, 2)`."""
    return json.dumps(value, indent=2, ensure_ascii=False)


async def expect_json(session, tool, args, expected, key=None):
    """Calls `tool`; its text must be the reference's JSON of `expected`, and its structured
    content `{key: expected}` (or `expected` itself when `key` is None)."""
    result = await call(session, tool, args)
    assert text(result) == pretty(expected), (tool, text(result), pretty(expected))
    want = {key: expected} if key else expected
    assert structured(result) == want, (tool, structured(result), want)


async def expect_message(session, tool, args, message):
    result = await call(session, tool, args)
    assert text(result) == message, (tool, text(result), message)
    assert structured(result) == {"success": True, "message": message}, structured(result)


def names(graph):
    return sorted(e["name"] for e in graph["entities"])


async def scenario(session):
    tools = (await session.list_tools()).tools
    assert {t.name for t in tools} == TOOLS, [t.name for t in tools]
    for tool in tools:
        schema = attr(tool, "input_schema", "inputSchema")
        assert schema.get("type") == "object", tool
        assert sorted(schema.get("required", [])) == REQUIRED[tool.name], (tool.name, schema)
        output = attr(tool, "output_schema", "outputSchema")
        assert output and output.get("type") == "object", (tool.name, output)
        hints = tool.annotations
        got = (attr(hints, "read_only_hint", "readOnlyHint"),
               attr(hints, "destructive_hint", "destructiveHint"),
               attr(hints, "idempotent_hint", "idempotentHint"))
        assert got == ANNOTATIONS[tool.name], (tool.name, got)
        assert attr(hints, "open_world_hint", "openWorldHint") is False, tool.name

    alice = entity("Alice", "person", ["works at Acme", "likes hiking"])
    acme = entity("Acme", "organization", [])
    # a name already in the batch is skipped
    await expect_json(session, "create_entities",
                      {"entities": [alice, acme, entity("Alice", "robot", [])]},
                      [alice, acme], "entities")
    # and so is a name already in the graph
    await expect_json(session, "create_entities", {"entities": [entity("Acme", "x", [])]},
                      [], "entities")

    works = relation("Alice", "Acme", "works_at")
    await expect_json(session, "create_relations", {"relations": [works, works]},
                      [works], "relations")
    await expect_json(session, "create_relations", {"relations": [works]}, [], "relations")
    failed = await call(session, "create_relations",
                        {"relations": [relation("Alice", "Nobody", "knows")]})
    assert error_text(failed) == "Entity with name Nobody not found", failed

    await expect_json(session, "add_observations",
                      {"observations": [{"entityName": "Alice",
                                         "contents": ["likes hiking", "speaks Portuguese"]}]},
                      [{"entityName": "Alice", "addedObservations": ["speaks Portuguese"]}],
                      "results")
    failed = await call(session, "add_observations",
                        {"observations": [{"entityName": "Ghost", "contents": ["boo"]}]})
    assert error_text(failed) == "Entity with name Ghost not found", failed

    alice["observations"].append("speaks Portuguese")
    await expect_json(session, "read_graph", {},
                      {"entities": [alice, acme], "relations": [works]})

    # the reference's search: case-insensitive substrings of names, types, observations
    found = structured(await call(session, "search_nodes", {"query": "PORTUGUESE"}))
    assert found == {"entities": [alice], "relations": [works]}, found
    found = structured(await call(session, "search_nodes", {"query": "acme"}))
    assert names(found) == ["Acme", "Alice"] and found["relations"] == [works], found
    found = structured(await call(session, "search_nodes", {"query": "organiz"}))
    assert found == {"entities": [acme], "relations": [works]}, found
    found = structured(await call(session, "search_nodes", {"query": "quantum chromodynamics"}))
    assert found == {"entities": [], "relations": []}, found
    too_long = await call(session, "search_nodes", {"query": "x" * 2049})
    assert is_error(too_long), too_long

    await expect_json(session, "open_nodes", {"names": ["Acme", "Ghost"]},
                      {"entities": [acme], "relations": [works]})

    await expect_message(session, "delete_observations",
                         {"deletions": [{"entityName": "Alice",
                                         "observations": ["likes hiking", "never said"]},
                                        {"entityName": "Ghost", "observations": ["boo"]}]},
                         "Deleted 1 of 3 observations. Entities not found: Ghost")
    await expect_message(session, "delete_observations",
                         {"deletions": [{"entityName": "Alice",
                                         "observations": ["speaks Portuguese"]}]},
                         "Observations deleted successfully")
    alice["observations"] = ["works at Acme"]

    knows = relation("Acme", "Alice", "employs")
    await expect_json(session, "create_relations", {"relations": [knows]}, [knows], "relations")
    await expect_message(session, "delete_relations",
                         {"relations": [knows, relation("Alice", "Acme", "likes")]},
                         "Deleted 1 of 2 relations. The rest matched nothing.")
    await expect_message(session, "delete_relations", {"relations": []},
                         "Relations deleted successfully")

    await expect_message(session, "delete_entities", {"entityNames": ["Acme", "Ghost"]},
                         "Deleted 1 of 2 entities. Not found: Ghost")
    # the relation went with the entity
    await expect_json(session, "read_graph", {}, {"entities": [alice], "relations": []})
    await expect_message(session, "delete_entities", {"entityNames": ["Alice"]},
                         "Entities deleted successfully")
    await expect_json(session, "read_graph", {}, {"entities": [], "relations": []})

    # the user's entity: its observations are the user's facts (checked by the caller
    # with `agentmem facts list`)
    user = entity("default_user", "person", ["is vegetarian"])
    await expect_json(session, "create_entities", {"entities": [user]}, [user], "entities")
    print("scenario: ok")


async def session_on(binary, store, body):
    params = StdioServerParameters(command=binary,
                                   args=["--store", store, "mcp", "--memory-graph"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


WRITES = 40


async def concurrent(binary, store):
    """Two server processes add observations to one entity and create entities of their
    own at the same time; every write either acknowledged must be in the graph."""
    async def setup(session):
        await call(session, "create_entities", {"entities": [entity("Shared", "thing", [])]})
    await session_on(binary, store, setup)

    def writer(tag):
        async def body(session):
            for i in range(WRITES):
                await expect_json(session, "add_observations",
                                  {"observations": [{"entityName": "Shared",
                                                     "contents": [f"{tag} {i}"]}]},
                                  [{"entityName": "Shared", "addedObservations": [f"{tag} {i}"]}],
                                  "results")
                created = structured(await call(session, "create_entities",
                                                {"entities": [entity(f"{tag}-{i}", "n", [])]}))
                assert len(created["entities"]) == 1, created
        return body

    await asyncio.gather(session_on(binary, store, writer("a")),
                         session_on(binary, store, writer("b")))

    async def check(session):
        graph = structured(await call(session, "read_graph", {}))
        shared = next(e for e in graph["entities"] if e["name"] == "Shared")
        want = {f"{t} {i}" for t in "ab" for i in range(WRITES)}
        assert set(shared["observations"]) == want, len(shared["observations"])
        assert len(shared["observations"]) == len(want)
        assert len(graph["entities"]) == 1 + 2 * WRITES, len(graph["entities"])
    await session_on(binary, store, check)
    print("scenario: ok")


async def over_http(url, token):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                await scenario(session)


async def main():
    mode, binary, store = sys.argv[1:4]
    if mode == "session":
        await session_on(binary, store, scenario)
    elif mode == "http":
        await over_http(binary, store)
    elif mode == "concurrent":
        await concurrent(binary, store)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    asyncio.run(main())
