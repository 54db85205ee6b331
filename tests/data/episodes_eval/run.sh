#!/usr/bin/env bash
# Run the episodes evaluation end to end against an agentmem binary.
#
#   run.sh AGENTMEM_BIN SCRATCH_DIR
#
# Ingests every conversation into SCRATCH_DIR/eval.db (SQLite; an earlier eval.db
# there is removed first), runs one `agentmem recall --json` process per user over
# that user's questions, concatenates the answers into SCRATCH_DIR/results.jsonl and
# scores them (SCRATCH_DIR/report.txt, SCRATCH_DIR/summary.json).
#
# Environment: RECALL_K (default 5), AGENTMEM_INGEST_ARGS and AGENTMEM_RECALL_ARGS
# (extra flags, split on spaces, e.g. an embedder option); DATA (a directory holding
# conversations.jsonl and questions.jsonl in this format, default this one).
set -euo pipefail

if [ $# -ne 2 ]; then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
BIN=$1
DIR=$2
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$(cd "${DATA:-$HERE}" && pwd)
K=${RECALL_K:-5}
read -r -a INGEST_ARGS <<< "${AGENTMEM_INGEST_ARGS:-}"
read -r -a RECALL_ARGS <<< "${AGENTMEM_RECALL_ARGS:-}"

mkdir -p "$DIR/queries"
DIR=$(cd "$DIR" && pwd)
STORE="sqlite://$DIR/eval.db"
rm -f "$DIR/eval.db" "$DIR/eval.db-wal" "$DIR/eval.db-shm" "$DIR/results.jsonl"

python3 "$HERE/split_conversations.py" "$DATA/conversations.jsonl" "$DIR/conversations"

while IFS=$'\t' read -r user conv file; do
    "$BIN" ingest --store "$STORE" --user "$user" --conversation "$conv" "${INGEST_ARGS[@]}" < "$file"
done < "$DIR/conversations/index.tsv"

users=$(python3 -c 'import json, sys
seen = []
for line in open(sys.argv[1], encoding="utf-8"):
    if line.strip():
        u = json.loads(line)["user"]
        if u not in seen:
            seen.append(u)
print(" ".join(seen))' "$DATA/questions.jsonl")

for user in $users; do
    python3 "$HERE/score.py" --questions "$DATA/questions.jsonl" --queries --user "$user" > "$DIR/queries/$user.jsonl"
    "$BIN" recall --store "$STORE" --user "$user" --json -k "$K" "${RECALL_ARGS[@]}" \
        < "$DIR/queries/$user.jsonl" >> "$DIR/results.jsonl"
done

python3 "$HERE/score.py" --questions "$DATA/questions.jsonl" --results "$DIR/results.jsonl" | tee "$DIR/report.txt"
python3 "$HERE/score.py" --questions "$DATA/questions.jsonl" --results "$DIR/results.jsonl" --json --verbose > "$DIR/summary.json"
echo "results: $DIR/results.jsonl  summary: $DIR/summary.json"
