#!/usr/bin/env bash
# The pipeline of run.sh over tests/data/fusion_holdout (measure only, never tune on it):
#   run_holdout.sh AGENTMEM_BIN SCRATCH_DIR
# ingests the hold-out once, then recalls and scores at k = 3 and k = 5, with mean block tokens.
set -euo pipefail
BIN=$1; DIR=$2
E=$(cd "$(dirname "$0")" && pwd); H=$E/../fusion_holdout
mkdir -p $DIR/queries; rm -f $DIR/eval.db*
python3 $E/split_conversations.py $H/conversations.jsonl $DIR/conversations
while IFS=$'\t' read -r user conv file; do
  "$BIN" ingest --store sqlite://$DIR/eval.db --user "$user" --conversation "$conv" < "$file" > /dev/null
done < $DIR/conversations/index.tsv
for K in 3 5; do
  rm -f $DIR/results$K.jsonl
  for u in h1 h2 h3 h4 h5 h6; do
    python3 $E/score.py --questions $H/questions.jsonl --queries --user $u > $DIR/queries/$u.jsonl
    "$BIN" recall --store sqlite://$DIR/eval.db --user $u --json -k $K < $DIR/queries/$u.jsonl >> $DIR/results$K.jsonl
  done
  echo "k=$K"; python3 $E/score.py --questions $H/questions.jsonl --results $DIR/results$K.jsonl | tail -8
  python3 $E/block_tokens.py $DIR/results$K.jsonl
done
