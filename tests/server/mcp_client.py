"""Scripted session of the official MCP Python SDK against `agentmem mcp` (stdio) or the
`/mcp` endpoint of `agentmem serve` (streamable HTTP).

Usage: python mcp_client.py stdio AGENTMEM_BIN STORE_URL
       python mcp_client.py http URL TOKEN
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {
    "create_long_term_memories", "search_long_term_memory", "memory_prompt",
    "set_working_memory", "get_working_memory", "get_long_term_memory",
    "edit_long_term_memory", "delete_long_term_memories", "get_current_datetime",
    "memory",
}


def attr(obj, snake, camel):
    """The MCP SDK renamed fields to snake_case in 2.x; accept both."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def is_error(result):
    return attr(result, "is_error", "isError")


def text(result):
    assert not is_error(result), result
    return result.content[0].text


async def scenario(session):
    await session.initialize()
    tools = await session.list_tools()
    names = {t.name for t in tools.tools}
    assert TOOLS <= names, names
    for tool in tools.tools:
        assert attr(tool, "input_schema", "inputSchema").get("type") == "object", tool

    now = json.loads(text(await session.call_tool("get_current_datetime", {})))
    assert now["iso_utc"].endswith("Z") and now["unix_ts"] > 0, now

    created = json.loads(text(await session.call_tool("create_long_term_memories", {"memories": [
        {"id": "mcp-1", "text": "User is allergic to peanuts", "topics": ["health"]},
        {"id": "mcp-2", "text": "User lives in Lisbon"},
    ]})))
    assert created["status"] == "ok", created

    found = json.loads(text(await session.call_tool("search_long_term_memory", {"text": "allergy peanuts"})))
    assert found["memories"] and found["memories"][0]["id"] == "mcp-1", found

    got = json.loads(text(await session.call_tool("get_long_term_memory", {"memory_id": "mcp-2"})))
    assert got["text"] == "User lives in Lisbon", got

    edited = json.loads(text(await session.call_tool("edit_long_term_memory", {"memory_id": "mcp-1", "topics": ["health", "food"]})))
    assert edited["topics"] == ["health", "food"], edited

    stored = json.loads(text(await session.call_tool("set_working_memory", {
        "session_id": "mcp-s1",
        "messages": [{"role": "user", "content": "Book me a table for tonight"}],
        "data": {"party": 2},
    })))
    assert stored["messages"][0]["content"] == "Book me a table for tonight", stored

    wm = json.loads(text(await session.call_tool("get_working_memory", {"session_id": "mcp-s1"})))
    assert wm["data"] == {"party": 2}, wm

    prompt = json.loads(text(await session.call_tool("memory_prompt", {"query": "Which foods am I allergic to?", "session_id": "mcp-s1"})))
    rendered = json.dumps(prompt)
    assert "peanuts" in rendered and "table for tonight" in rendered, rendered

    deleted = json.loads(text(await session.call_tool("delete_long_term_memories", {"memory_ids": ["mcp-2"]})))
    assert deleted["deleted"] == 1, deleted
    missing = await session.call_tool("get_long_term_memory", {"memory_id": "mcp-2"})
    assert is_error(missing), missing
    await memory_tool_scenario(session)
    print("mcp client scenario: ok")


async def memory_tool_scenario(session):
    """The commands of Claude's memory tool through the `memory` tool."""
    async def memory(**args):
        return await session.call_tool("memory", {"user_id": "carol", **args})

    created = text(await memory(command="create", path="/memories/mcp/notes.md", file_text="tea\n"))
    assert created == "File created successfully at: /memories/mcp/notes.md", created
    edited = text(await memory(command="str_replace", path="/memories/mcp/notes.md", old_str="tea", new_str="green tea"))
    assert "green tea" in edited, edited
    text(await memory(command="insert", path="/memories/mcp/notes.md", insert_line=0, insert_text="# Notes"))
    shown = text(await memory(command="view", path="/memories/mcp/notes.md", view_range=[1, 2]))
    assert shown == "Here's the content of /memories/mcp/notes.md with line numbers:\n     1\t# Notes\n     2\tgreen tea", shown
    text(await memory(command="rename", old_path="/memories/mcp", new_path="/memories/mcp2"))
    listing = text(await memory(command="view", path="/memories/mcp2"))
    assert "/memories/mcp2/notes.md" in listing, listing
    escaped = await memory(command="view", path="/memories/../etc/passwd")
    assert is_error(escaped), escaped
    assert escaped.content[0].text == "Path /memories/../etc/passwd would escape /memories directory", escaped
    deleted = text(await memory(command="delete", path="/memories/mcp2"))
    assert deleted == "Successfully deleted /memories/mcp2", deleted


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=["--store", sys.argv[3], "mcp", "--user", "carol"])
        async with stdio_client(params) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await scenario(session)
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {sys.argv[3]}"}, timeout=30)
        async with http:
            async with streamable_http_client(sys.argv[2], http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await scenario(session)


if __name__ == "__main__":
    asyncio.run(main())
