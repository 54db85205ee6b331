#!/usr/bin/env bash
# Sourced by .ci/run: a Python virtual environment with the published clients the server
# tests drive agentmem with: the working-memory API (agent-memory-client), MCP (mcp),
# Anthropic's memory stores API (anthropic) and the Redis Agent Memory data plane
# (redis-agent-memory). Used by tests/server_clients.rs, tests/memory_graph.rs and
# tests/memory_apis.rs.
# Idempotent (installs again when a client is missing or at another version); exports
# AGENTMEM_SERVER_VENV.
export AGENTMEM_SERVER_VENV="${AGENTMEM_SERVER_VENV:-$HOME/.cache/agentmem-server-venv}"
AGENTMEM_ANTHROPIC_SDK="anthropic==2.14.0"
AGENTMEM_REDIS_AGENT_MEMORY_SDK="redis-agent-memory==0.4.1"
agentmem_server_venv_ready() {
    "$AGENTMEM_SERVER_VENV/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m
import agent_memory_client, mcp, anthropic, redis_agent_memory
assert m.version("anthropic") == "2.14.0", m.version("anthropic")
assert m.version("redis-agent-memory") == "0.4.1", m.version("redis-agent-memory")
PY
}
if ! agentmem_server_venv_ready; then
    if ! python3 -m venv --help >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    [ -x "$AGENTMEM_SERVER_VENV/bin/pip" ] || python3 -m venv "$AGENTMEM_SERVER_VENV"
    "$AGENTMEM_SERVER_VENV/bin/pip" install -q --upgrade pip
    "$AGENTMEM_SERVER_VENV/bin/pip" install -q "agent-memory-client>=0.14,<0.16" mcp \
        "$AGENTMEM_ANTHROPIC_SDK" "$AGENTMEM_REDIS_AGENT_MEMORY_SDK"
fi
"$AGENTMEM_SERVER_VENV/bin/python" -c "
import importlib.metadata as m
import agent_memory_client, anthropic, redis_agent_memory
print('agent-memory-client', agent_memory_client.__version__)
print('anthropic', m.version('anthropic'), '/ redis-agent-memory', m.version('redis-agent-memory'))
"
