#!/usr/bin/env python3
"""A naive stand-in for the `agentmem` CLI, to exercise run.sh and give a floor to beat.

    run.sh ./baseline_recall.py SCRATCH_DIR

It understands only what run.sh calls:
  baseline_recall.py ingest --store sqlite://PATH --user U --conversation C < messages.jsonl
  baseline_recall.py recall --store sqlite://PATH --user U --json -k N < queries.jsonl
`ingest` appends the messages as JSON lines to PATH (a plain text file, not SQLite).
`recall` ranks the user's raw messages by the summed IDF of the query words they share
(a few stop words dropped; no stemming, no meaning, no time) and renders the top k,
each prefixed with its message date, as the block. No facts. Standard library only.
"""
import datetime as dt
import json
import math
import re
import sys

STOP = set("i me my we our you your the a an and or to of in on at for is was what when where who "
           "how do did does am are be been have has it its this that with now these days still".split())


def words(text):
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP]


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def recall(messages, query, k):
    df = {}
    for m in messages:
        for t in set(words(m["content"])):
            df[t] = df.get(t, 0) + 1
    q = set(words(query))
    scored = []
    for m in messages:
        s = sum(math.log(1 + len(messages) / df[t]) for t in q & set(words(m["content"])))
        if s > 0:
            scored.append((s, m))
    scored.sort(key=lambda x: -x[0])
    return scored[:k]


def main(args):
    cmd, path, user = args[0], option(args, "--store")[len("sqlite://"):], option(args, "--user")
    if cmd == "ingest":
        with open(path, "a", encoding="utf-8") as db:
            for line in sys.stdin:
                if line.strip():
                    m = json.loads(line)
                    m.update(user=user, conversation=option(args, "--conversation"))
                    db.write(json.dumps(m, ensure_ascii=False) + "\n")
        return 0
    k = int(option(args, "-k", "5"))
    with open(path, encoding="utf-8") as db:
        messages = [m for m in map(json.loads, db) if m["user"] == user]
    for line in sys.stdin:
        if not line.strip():
            continue
        q = json.loads(line)
        lines, episodes = [], []
        for s, m in recall(messages, q["query"], k):
            d = dt.datetime.strptime(m["created_at"], "%Y-%m-%dT%H:%M:%SZ")
            lines.append(f"[{d.day} {d:%B %Y}] {m['role']}: {m['content']}")
            episodes.append({"text": m["content"], "at": m["created_at"], "conversation": m["conversation"],
                             "role": m["role"], "score": round(s, 3)})
        block = "<memory>\n" + "\n".join(lines) + "\n</memory>"
        print(json.dumps({"id": q["id"], "block": block, "facts": [], "episodes": episodes}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
