"""One live `agentmem mcp --memory-graph` process (stdio) driven by the official MCP
Python SDK: an observation added with `add_observations` is found by meaning with
`search_nodes` at once (no word in common), and the `memory://knowledge-graph` resource
is listed and reads the whole graph as JSON, changes included; a subscribed client is
told when a write call changed it.

usage: mcp_graph_live_client.py AGENTMEM_BIN STORE_URL
The server inherits this process's environment (AGENTMEM_EMBED_MODEL names the model).
Prints "scenario: ok" when every check passed.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

URI = "memory://knowledge-graph"


def names(result):
    return [e["name"] for e in json.loads(result.content[0].text)["entities"]]


async def main(binary, store):
    updates = []

    async def on_message(message):
        # server notifications (and transport errors) the session surfaces
        params = getattr(message, "params", None)
        if getattr(message, "method", None) == "notifications/resources/updated" and params:
            updates.append(str(params.uri))

    params = StdioServerParameters(
        command=binary,
        args=["--store", store, "mcp", "--memory-graph"],
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            await session.call_tool("create_entities", {"entities": [
                {"name": "Alice", "entityType": "person", "observations": ["lives in Porto"]},
                {"name": "Bob", "entityType": "person", "observations": ["plays the cello"]},
            ]})
            assert names(await session.call_tool("search_nodes", {"query": "seafood allergy"})) == []
            await session.call_tool("add_observations", {"observations": [
                {"entityName": "Alice", "contents": ["is allergic to shellfish"]},
            ]})
            # at once, in the same process: by meaning (no word in common with the query)
            found = names(await session.call_tool("search_nodes", {"query": "seafood allergy"}))
            assert found == ["Alice"], found

            listed = (await session.list_resources()).resources
            assert [(str(r.uri), r.name, r.mime_type) for r in listed] == [
                (URI, "knowledge-graph", "application/json")
            ], listed
            contents = (await session.read_resource(URI)).contents
            assert len(contents) == 1 and contents[0].mime_type == "application/json"
            graph = json.loads(contents[0].text)
            alice = next(e for e in graph["entities"] if e["name"] == "Alice")
            assert alice["observations"] == ["lives in Porto", "is allergic to shellfish"], graph
            assert contents[0].text.startswith('{\n  "entities": ['), contents[0].text[:40]

            await session.subscribe_resource(URI)
            await session.call_tool("create_relations", {"relations": [
                {"from": "Alice", "to": "Bob", "relationType": "knows"},
            ]})
            for _ in range(50):
                if updates:
                    break
                await asyncio.sleep(0.05)
            assert updates == [URI], updates
            await session.unsubscribe_resource(URI)
            await session.call_tool("add_observations", {"observations": [
                {"entityName": "Bob", "contents": ["teaches music"]},
            ]})
            await session.call_tool("read_graph", {})
            assert updates == [URI], updates  # no notice after unsubscribing
            graph = json.loads((await session.read_resource(URI)).contents[0].text)
            assert graph["relations"] == [{"from": "Alice", "to": "Bob", "relationType": "knows"}], graph
            try:
                await session.read_resource("memory://elsewhere")
            except Exception:
                pass
            else:
                raise AssertionError("an unknown resource must be refused")
    print("scenario: ok")


asyncio.run(main(sys.argv[1], sys.argv[2]))
