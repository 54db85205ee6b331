#!/usr/bin/env bash
# Sets up what the local embedder's tests need, and exports:
#
#   AGENTMEM_EMBED_MODEL   the all-MiniLM-L6-v2 directory (scripts/fetch-model)
#   AGENTMEM_PYTHON        a python with numpy and tokenizers, for the numpy reference
#                          forward pass (scripts/reference_embed.py)
#
# Meant to be `source`d from the repository root (by .ci/run, before the tests); running it
# directly works too. Idempotent: the model and the virtualenv are reused when present.
set -euo pipefail

agentmem_embed() {
    local python="${PYTHON:-python3}"
    local venv="$HOME/.cache/agentmem-embed-venv"

    AGENTMEM_EMBED_MODEL="$(PYTHON="$python" scripts/fetch-model)"
    export AGENTMEM_EMBED_MODEL
    echo "embed: model in $AGENTMEM_EMBED_MODEL"

    if ! "$venv/bin/python" -c 'import numpy, tokenizers' >/dev/null 2>&1; then
        echo "embed: installing numpy and tokenizers into $venv"
        if ! "$python" -m venv --clear "$venv" >/dev/null 2>&1; then
            # Debian's system python ships venv separately.
            DEBIAN_FRONTEND=noninteractive apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
            "$python" -m venv --clear "$venv"
        fi
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check numpy tokenizers
    fi
    export AGENTMEM_PYTHON="$venv/bin/python"
    echo "embed: reference python $AGENTMEM_PYTHON"
}

agentmem_embed
