#!/usr/bin/env python3
"""Emulate what agentmem injected before issue 24 (the top facts only) on this set.

usage: before.py AGENTMEM_BEFORE SCRATCH_DIR [-k 5]

AGENTMEM_BEFORE is an `agentmem` binary built from before the episodes milestone (commit
cdec9b9), which has no `ingest` or `recall`. What a session did then is replayed with
the commands it does have:

- for each user, every USER message of that user's conversations, in time order, goes
  through `agentmem facts add --store sqlite://SCRATCH/before.db --user U TEXT`: one
  extraction and reconciliation per message, as the session did after each turn (the
  rule extractor reads only the user message; assistant messages gave no facts);
- for each question, `agentmem facts search --json --user U -k K QUERY` returns what
  the turn injected: the top K facts (the same `UserMemoryStore::search` call the
  session's prepare step made). The result line for score.py is
  {"id", "block": the fact texts joined by newlines, "facts": [...], "episodes": []}.

Writes SCRATCH/results.jsonl, SCRATCH/report.txt and SCRATCH/summary.json (as run.sh
does) and prints the report. An earlier SCRATCH/before.db is removed first.

Time. The old CLI stores a fact at the moment `facts add` runs, so in the main run every
fact is seconds old when searched; in the product a fact said months before the question
had decayed (`FactPolicy::default()` at cdec9b9: 30-day half-life, facts under 0.2
effective confidence left out), so the main run is an upper bound for the old product.
`--timed` adds a second run that replays the decay by hand: each fact's last
reinforcement is the created_at of the message whose `facts add` added, reinforced or
superseded-in it; every current fact is fetched with its relevance (`-k 100000`), its
effective confidence is taken at the question's `at`, facts under 0.2 are dropped, the
rest ranked by `rank_score` (effective confidence x (0.25 + 0.75 x relevance)), top K
kept (SCRATCH/timed/).

The environment is passed through except OPENAI_BASE_URL, which would swap the rule
extractor for a remote LLM one. Standard library only.
"""
import argparse
import datetime as dt
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# FactPolicy::default() and RELEVANCE_FLOOR at cdec9b9 (memory-core/src/facts/mod.rs).
HALF_LIFE_SECONDS = 30 * 24 * 3600
MIN_CONFIDENCE = 0.2
RELEVANCE_FLOOR = 0.25


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run(cmd, env):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd[:6])} ...\n{proc.stderr}")
    return proc.stdout


def parse_time(text):
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def decayed(hits, reinforced_at, at, k):
    """The top k of `hits` as the product ranked them at time `at` (see the module doc)."""
    ranked = []
    for h in hits:
        fact = h["fact"]
        since = reinforced_at.get(fact["id"])
        if since is None:
            raise SystemExit(f"fact {fact['id']} ({fact['text']!r}) has no message time")
        age = max((at - since).total_seconds(), 0.0)
        effective = fact["confidence"] * 0.5 ** (age / HALF_LIFE_SECONDS)
        if effective < MIN_CONFIDENCE:
            continue
        relevance = min(max(h.get("relevance", 0.0), 0.0), 1.0)
        score = effective * (RELEVANCE_FLOOR + (1.0 - RELEVANCE_FLOOR) * relevance)
        ranked.append((score, {"text": fact["text"], "score": score, "relevance": relevance,
                               "effective_confidence": effective}))
    ranked.sort(key=lambda pair: -pair[0])
    return [f for _, f in ranked[:k]]


def result_line(qid, facts):
    return {"id": qid, "block": "\n".join(f["text"] for f in facts), "facts": facts, "episodes": []}


def write_scored(scratch, questions_path, rows, env):
    """Write rows to SCRATCH/results.jsonl and score them; the report text."""
    os.makedirs(scratch, exist_ok=True)
    results_path = os.path.join(scratch, "results.jsonl")
    with open(results_path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    score = [sys.executable, os.path.join(HERE, "score.py"), "--questions", questions_path,
             "--results", results_path]
    report = run(score, env)
    with open(os.path.join(scratch, "report.txt"), "w", encoding="utf-8") as f:
        f.write(report)
    with open(os.path.join(scratch, "summary.json"), "w", encoding="utf-8") as f:
        f.write(run(score + ["--json", "--verbose"], env))
    return report + f"results: {results_path}  summary: {os.path.join(scratch, 'summary.json')}\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agentmem", help="the agentmem binary from before the milestone")
    ap.add_argument("scratch", help="scratch directory (created)")
    ap.add_argument("-k", type=int, default=5, help="facts per question (the old default top_k: 5)")
    ap.add_argument("--conversations", default=os.path.join(HERE, "conversations.jsonl"))
    ap.add_argument("--questions", default=os.path.join(HERE, "questions.jsonl"))
    ap.add_argument("--timed", action="store_true",
                    help="also replay the facts' decay at the questions' times (SCRATCH/timed/)")
    args = ap.parse_args(argv)

    os.makedirs(args.scratch, exist_ok=True)
    scratch = os.path.abspath(args.scratch)
    db = os.path.join(scratch, "before.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    store = f"sqlite://{db}"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}

    messages = read_jsonl(args.conversations)
    questions = read_jsonl(args.questions)
    users = list(dict.fromkeys(m["user"] for m in messages))

    reinforced_at = {}
    for user in users:
        changes = {}
        said = sorted((m for m in messages if m["user"] == user and m["role"] == "user"),
                      key=lambda m: m["created_at"])
        for m in said:
            out = run([args.agentmem, "facts", "add", "--store", store, "--user", user, "--json",
                       "--", m["content"]], env)
            for change in json.loads(out):
                kind = change.get("change", "?")
                changes[kind] = changes.get(kind, 0) + 1
                current = change.get("new") if kind == "superseded" else change.get("fact")
                if kind in ("added", "reinforced", "superseded") and current:
                    reinforced_at[current["id"]] = parse_time(m["created_at"])
        current = json.loads(run([args.agentmem, "facts", "list", "--store", store, "--user", user,
                                  "--json"], env))
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(changes.items())) or "no changes"
        print(f"{user}: {len(said)} user messages through `facts add`: {kinds}; "
              f"{len(current)} current facts", file=sys.stderr)

    rows, timed_rows = [], []
    for q in questions:
        k = 100000 if args.timed else args.k
        out = run([args.agentmem, "facts", "search", "--store", store, "--user", q["user"],
                   "--json", "-k", str(k), "--", q["query"]], env)
        hits = json.loads(out)
        facts = [{"text": h["fact"]["text"], "score": h.get("score"),
                  "relevance": h.get("relevance")} for h in hits[:args.k]]
        rows.append(result_line(q["id"], facts))
        if args.timed:
            timed = decayed(hits, reinforced_at, parse_time(q["at"]), args.k)
            timed_rows.append(result_line(q["id"], timed))

    sys.stderr.flush()
    sys.stdout.write(write_scored(scratch, args.questions, rows, env))
    if args.timed:
        print("\nwith the facts' decay at the questions' times:")
        sys.stdout.write(write_scored(os.path.join(scratch, "timed"), args.questions, timed_rows, env))
    return 0


if __name__ == "__main__":
    sys.exit(main())
