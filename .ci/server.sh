#!/usr/bin/env bash
# Sourced by .ci/run: a Python virtual environment with the published clients of the
# working-memory API (agent-memory-client) and of MCP (mcp), used by tests/server_clients.rs
# and tests/memory_graph.rs.
# Idempotent; exports AGENTMEM_SERVER_VENV.
export AGENTMEM_SERVER_VENV="${AGENTMEM_SERVER_VENV:-$HOME/.cache/agentmem-server-venv}"
if ! "$AGENTMEM_SERVER_VENV/bin/python" -c "import agent_memory_client, mcp" 2>/dev/null; then
    if ! python3 -m venv --help >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$AGENTMEM_SERVER_VENV"
    "$AGENTMEM_SERVER_VENV/bin/pip" install -q --upgrade pip
    "$AGENTMEM_SERVER_VENV/bin/pip" install -q "agent-memory-client>=0.14,<0.16" mcp
fi
"$AGENTMEM_SERVER_VENV/bin/python" -c "import agent_memory_client; print('agent-memory-client', agent_memory_client.__version__)"
