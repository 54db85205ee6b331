#!/usr/bin/env python3
"""Split conversations.jsonl into one ingest file per conversation.

usage: split_conversations.py CONVERSATIONS.jsonl OUT_DIR

Writes OUT_DIR/<user>/<conversation>.jsonl, each line {"role", "content", "created_at"}
(the input of `agentmem ingest`), and OUT_DIR/index.tsv: one "user<TAB>conversation<TAB>path"
line per conversation, ordered by user (first appearance) and then by the conversation's
first message, so each user's history is ingested in the order it happened.
Standard library only.
"""
import json
import os
import sys
from collections import OrderedDict


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    src, out = argv[1], argv[2]
    convs = OrderedDict()
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                m = json.loads(line)
                convs.setdefault((m["user"], m["conversation"]), []).append(m)
    users = list(OrderedDict.fromkeys(u for u, _ in convs))
    order = sorted(convs, key=lambda k: (users.index(k[0]), min(m["created_at"] for m in convs[k])))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "index.tsv"), "w", encoding="utf-8") as index:
        for user, conv in order:
            os.makedirs(os.path.join(out, user), exist_ok=True)
            path = os.path.join(out, user, conv + ".jsonl")
            with open(path, "w", encoding="utf-8") as f:
                for m in sorted(convs[(user, conv)], key=lambda m: m["created_at"]):
                    row = {"role": m["role"], "content": m["content"], "created_at": m["created_at"]}
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
            index.write(f"{user}\t{conv}\t{path}\n")
    print(f"{len(order)} conversations of {len(users)} users in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
