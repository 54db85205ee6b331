#!/usr/bin/env python3
"""Checks of the long-conversation set: keys, time order, sizes, speaker labels, and
every answer literally in one of its evidence sessions. Exits non-zero on an error."""
import json
import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "episodes_eval"))
from score import contains, normalise  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    errors = []
    msgs = [json.loads(l) for l in open(os.path.join(HERE, "conversations.jsonl"), encoding="utf-8")]
    by_user, by_session, last = defaultdict(list), defaultdict(list), {}
    for n, m in enumerate(msgs, 1):
        if set(m) != {"user", "conversation", "role", "content", "created_at"}:
            errors.append(f"conversations.jsonl:{n}: keys {sorted(m)}")
        if m["user"] in last and m["created_at"] <= last[m["user"]]:
            errors.append(f"conversations.jsonl:{n}: time not after the previous message")
        last[m["user"]] = m["created_at"]
        by_user[m["user"]].append(m)
        by_session[m["conversation"]].append(m["content"])
    for user, ms in by_user.items():
        labelled = sum(1 for m in ms if ":" in m["content"][:24]) / len(ms)
        sessions = len({m["conversation"] for m in ms})
        print(f"{user}: {len(ms)} messages, {sessions} sessions, {labelled:.0%} with a speaker label")
        if len(ms) < 300:
            errors.append(f"{user}: {len(ms)} messages")
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8")]
    ids = Counter(q["id"] for q in qs)
    errors += [f"{i}: duplicate id" for i, c in ids.items() if c > 1]
    for q in qs:
        if q["at"] <= last[q["user"]]:
            errors.append(f"{q['id']}: asked before the last message")
        texts = [t for s in q["evidence"] for t in by_session[s]]
        for a in q["answer"]:
            if not any(contains(normalise(t), a) for t in texts):
                errors.append(f"{q['id']}: answer {a!r} not in its evidence")
    print(f"{len(qs)} questions:", dict(Counter(q["category"] for q in qs)))
    for e in errors:
        print("ERROR", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
