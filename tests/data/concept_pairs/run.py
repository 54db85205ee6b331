#!/usr/bin/env python3
"""Concept-pair evaluation (issue 38, item 4): does a question recall a disclosure it
shares no content word with?

    run.py AGENTMEM_BIN SCRATCH_DIR

For each pair of `pairs.jsonl` one user is made whose history is a real one (every message
of user `u6` of `tests/data/episodes_eval`, a barista in Melbourne, 56 messages over five
sessions) with the pair's statement said as a user message in a session of its own, a
week after the third. Then `agentmem recall --json -k K` is asked the pair's question a
month after the last message. A pair is a **hit** when the block holds the statement
(its first five words) or a fact line whose words are mostly the statement's (the fact
extracted from it). RECALL_K (default 5), AGENTMEM_INGEST_ARGS, AGENTMEM_RECALL_ARGS as
in the episodes evaluation. Prints hits per domain and the mean block size.
"""
import datetime as dt
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HISTORY = os.path.join(HERE, "..", "episodes_eval", "conversations.jsonl")
HISTORY_USER = "u6"


def words(text):
    return re.findall(r"[a-z0-9']+", text.lower())


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, scratch = sys.argv[1], sys.argv[2]
    k = os.environ.get("RECALL_K", "5")
    ingest_args = os.environ.get("AGENTMEM_INGEST_ARGS", "").split()
    recall_args = os.environ.get("AGENTMEM_RECALL_ARGS", "").split()
    os.makedirs(scratch, exist_ok=True)
    db = os.path.join(scratch, "eval.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    store = f"sqlite://{db}"
    history = [json.loads(l) for l in open(HISTORY, encoding="utf-8") if l.strip()]
    history = [m for m in history if m["user"] == HISTORY_USER]
    sessions = {}
    for m in history:
        sessions.setdefault(m["conversation"], []).append(m)
    order = list(sessions)
    third_end = dt.datetime.strptime(sessions[order[2]][-1]["created_at"], "%Y-%m-%dT%H:%M:%SZ")
    said_at = third_end + dt.timedelta(days=7)
    last = max(dt.datetime.strptime(m["created_at"], "%Y-%m-%dT%H:%M:%SZ") for m in history)
    asked = max(last, said_at) + dt.timedelta(days=30)
    pairs = [json.loads(l) for l in open(os.path.join(HERE, "pairs.jsonl"), encoding="utf-8") if l.strip()]
    per_domain, chars, misses = {}, [], []
    for p in pairs:
        user = f"p-{p['id']}"
        convs = [(c, [{"role": m["role"], "content": m["content"], "created_at": m["created_at"]} for m in sessions[c]]) for c in order]
        convs.insert(3, (f"{user}-said", [{"role": "user", "content": p["statement"], "created_at": said_at.strftime("%Y-%m-%dT%H:%M:%SZ")}]))
        for conv, msgs in convs:
            lines = "".join(json.dumps(m) + "\n" for m in msgs)
            subprocess.run([binary, "ingest", "--store", store, "--user", user, "--conversation", f"{user}-{conv}", *ingest_args],
                           input=lines, text=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        q = json.dumps({"id": p["id"], "query": p["question"], "at": asked.strftime("%Y-%m-%dT%H:%M:%SZ")})
        out = subprocess.run([binary, "recall", "--store", store, "--user", user, "--json", "-k", k, *recall_args],
                             input=q + "\n", text=True, check=True, capture_output=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        block = result.get("block") or ""
        chars.append(len(block))
        said = words(p["statement"])
        head = " ".join(said[:5])
        hit = head in " ".join(words(block))
        if not hit:
            for f in result.get("facts", []):
                fw = [w for w in words(f["text"]) if len(w) > 2]
                if fw and sum(w in said for w in fw) / len(fw) >= 0.6 and f["text"].lower() in block.lower():
                    hit = True
        d = per_domain.setdefault(p["domain"], [0, 0])
        d[0] += hit
        d[1] += 1
        if not hit:
            misses.append(p["id"])
    total = sum(v[0] for v in per_domain.values())
    print("| domain | hits |\n|---|---|")
    for name, (h, n) in per_domain.items():
        print(f"| {name} | {h}/{n} |")
    print(f"| **all** | **{total}/{len(pairs)}** |")
    print(f"block chars mean {sum(chars) / len(chars):.0f}, max {max(chars)}")
    with open(os.path.join(scratch, "misses.txt"), "w") as f:
        f.write("\n".join(misses) + "\n")


if __name__ == "__main__":
    main()
