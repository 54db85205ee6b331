#!/usr/bin/env bash
# Run the facts evaluation (issue 35) end to end against an agentmem binary.
#
#   run.sh AGENTMEM_BIN SCRATCH_DIR [PARTS]
#
# Checks the data, then scores changes, health, health_shared and histories (PARTS, comma separated,
# default those four) with score.py: fresh SQLite stores in SCRATCH_DIR (earlier ones there are
# removed), per-item details in SCRATCH_DIR/details_*.jsonl, the table in
# SCRATCH_DIR/report.txt and the figures in SCRATCH_DIR/summary.json.
#
# PARTS may also name changes_fresh (changes_fresh.jsonl, written 2026-12-07, scored like changes;
# not in the default): `run.sh BIN DIR changes_fresh` scores only it, into
# DIR/details_changes_fresh.jsonl and the summary key changes_fresh.
#
# Likewise changes_fresh3 (changes_fresh3.jsonl, scored like changes) and health_fresh2
# (health_fresh2.jsonl, scored like health), both written 2026-12-07, not in the default:
# `run.sh BIN DIR changes_fresh3,health_fresh2`, details DIR/details_<part>.jsonl, summary key <part>.
#
# Likewise changes_fresh4 (changes_fresh4.jsonl, scored like changes) and health_fresh3
# (health_fresh3.jsonl, scored like health), both written 2026-12-07, not in the default:
# `run.sh BIN DIR changes_fresh4,health_fresh3`, details DIR/details_<part>.jsonl, summary key <part>.
#
# Likewise changes_fresh5 (changes_fresh5.jsonl, scored like changes) and health_fresh4
# (health_fresh4.jsonl, scored like health), both written 2026-12-07, not in the default:
# `run.sh BIN DIR changes_fresh5,health_fresh4`, details DIR/details_<part>.jsonl, summary key <part>.
#
# Likewise changes_fresh6 (changes_fresh6.jsonl, scored like changes) and health_fresh5
# (health_fresh5.jsonl, scored like health), both written 2026-12-07, not in the default:
# `run.sh BIN DIR changes_fresh6,health_fresh5`, details DIR/details_<part>.jsonl, summary key <part>.
#
# Likewise changes_fresh7 and health_fresh6 (written 2026-12-07): `run.sh BIN DIR changes_fresh7,health_fresh6`.
#
# Environment: RECALL_K (default 5), AGENTMEM_INGEST_ARGS and AGENTMEM_RECALL_ARGS
# (extra flags, split on spaces, e.g. an embedder option).
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    sed -n '2,34p' "$0" >&2
    exit 2
fi
BIN=$1
DIR=$2
PARTS=${3:-changes,health,health_shared,histories}
HERE=$(cd "$(dirname "$0")" && pwd)

python3 "$HERE/check_data.py"
mkdir -p "$DIR"
python3 "$HERE/score.py" --bin "$BIN" --work "$DIR" --parts "$PARTS"
echo "details: $DIR/details_*.jsonl  summary: $DIR/summary.json"
