#!/usr/bin/env python3
"""Consistency checks for conversations.jsonl and questions.jsonl; prints the counts.

Exits non-zero on any error. Standard library only.
"""
import datetime as dt
import json
import os
import sys
from collections import Counter, OrderedDict, defaultdict

from score import CATEGORIES, contains, normalise

HERE = os.path.dirname(os.path.abspath(__file__))
MINIMUM = {"event": 30, "time": 25, "person": 30, "attribute": 30, "change": 25}


def ts(s):
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def main():
    errors, warnings = [], []
    messages = []
    with open(os.path.join(HERE, "conversations.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                m = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"conversations.jsonl:{n}: {e}")
                continue
            if set(m) != {"user", "conversation", "role", "content", "created_at"}:
                errors.append(f"conversations.jsonl:{n}: keys {sorted(m)}")
                continue
            if m["role"] not in ("user", "assistant") or not m["content"].strip():
                errors.append(f"conversations.jsonl:{n}: bad role or empty content")
            if not m["conversation"].startswith(m["user"] + "-s"):
                errors.append(f"conversations.jsonl:{n}: conversation {m['conversation']} not of {m['user']}")
            m["t"] = ts(m["created_at"])
            messages.append(m)

    sessions = OrderedDict()
    for m in messages:
        sessions.setdefault(m["conversation"], []).append(m)
    by_user = OrderedDict()
    for conv, ms in sessions.items():
        by_user.setdefault(ms[0]["user"], []).append(conv)
        for i, m in enumerate(ms):
            want = "user" if i % 2 == 0 else "assistant"
            if m["role"] != want:
                errors.append(f"{conv}: message {i} is {m['role']}, expected {want}")
            if i and not 30 <= (m["t"] - ms[i - 1]["t"]).total_seconds() <= 180:
                errors.append(f"{conv}: gap before message {i} not a minute or two")
    for user, convs in by_user.items():
        if not 3 <= len(convs) <= 6:
            errors.append(f"{user}: {len(convs)} sessions")
        starts = [sessions[c][0]["t"] for c in convs]
        for a, b, c in zip(starts, starts[1:], convs[1:]):
            if (b - a).days < 2:
                errors.append(f"{c}: starts {(b - a).days} days after the previous session")
        span = (starts[-1] - starts[0]).days
        if not 120 <= span <= 366:
            errors.append(f"{user}: sessions span {span} days")

    questions = []
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                questions.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"questions.jsonl:{n}: {e}")
    ids = Counter(q["id"] for q in questions)
    errors += [f"duplicate id {i}" for i, c in ids.items() if c > 1]
    last = {u: max(m["t"] for m in messages if m["user"] == u) for u in by_user}
    user_msgs = defaultdict(list)
    for m in messages:
        user_msgs[m["user"]].append(m)
    for q in questions:
        qid = q["id"]
        for key in ("id", "user", "at", "category", "query", "answer", "evidence"):
            if key not in q:
                errors.append(f"{qid}: no {key}")
        if q["category"] not in CATEGORIES:
            errors.append(f"{qid}: category {q['category']}")
        if q["user"] not in by_user:
            errors.append(f"{qid}: unknown user")
            continue
        if ts(q["at"]) <= last[q["user"]]:
            errors.append(f"{qid}: asked before the user's last message")
        evidence_text = []
        for conv in q["evidence"]:
            if conv not in sessions or sessions[conv][0]["user"] != q["user"]:
                errors.append(f"{qid}: evidence {conv} is not a session of {q['user']}")
                continue
            evidence_text += [normalise(m["content"]) for m in sessions[conv]]
        for a in q["answer"]:
            if len(a.split()) > 4:
                errors.append(f"{qid}: answer {a!r} longer than 4 words")
            if not any(contains(t, a) for t in evidence_text):
                errors.append(f"{qid}: answer {a!r} not in evidence {q['evidence']}")
            if contains(normalise(q["query"]), a):
                errors.append(f"{qid}: answer {a!r} is in the query itself")
            hits = sum(contains(normalise(m["content"]), a) for m in user_msgs[q["user"]])
            if hits > 4:
                warnings.append(f"{qid}: answer {a!r} occurs in {hits} of the user's messages")
        if q["category"] == "time":
            if not q.get("answer_dates"):
                errors.append(f"{qid}: time question without answer_dates")
            for d in q.get("answer_dates", []):
                day = dt.date.fromisoformat(d)
                first = min(m["t"] for m in user_msgs[q["user"]]).date()
                if not first - dt.timedelta(days=60) <= day <= ts(q["at"]).date() + dt.timedelta(days=60):
                    errors.append(f"{qid}: answer date {d} far outside the user's history")
        elif "answer_dates" in q:
            errors.append(f"{qid}: answer_dates on a {q['category']} question")
        if q["category"] == "change":
            if not q.get("wrong"):
                errors.append(f"{qid}: change question without wrong")
            for w in q.get("wrong", []):
                if not any(contains(normalise(m["content"]), w) for m in user_msgs[q["user"]]):
                    errors.append(f"{qid}: wrong {w!r} never said by/to {q['user']}")
                if any(contains(normalise(w), a) for a in q["answer"]):
                    errors.append(f"{qid}: wrong {w!r} contains a right answer")

    cats = Counter(q["category"] for q in questions)
    for cat, n in MINIMUM.items():
        if cats[cat] < n:
            errors.append(f"{cat}: {cats[cat]} questions, minimum {n}")
    if len(by_user) < 8:
        errors.append(f"{len(by_user)} users, minimum 8")
    if len(messages) < 400:
        errors.append(f"{len(messages)} messages, minimum 400")
    if len(questions) < 160:
        errors.append(f"{len(questions)} questions, minimum 160")

    first, latest = min(m["t"] for m in messages), max(m["t"] for m in messages)
    print(f"users {len(by_user)}, sessions {len(sessions)}, messages {len(messages)} "
          f"({sum(m['role'] == 'user' for m in messages)} user, "
          f"{sum(m['role'] == 'assistant' for m in messages)} assistant), "
          f"dates {first.date()} .. {latest.date()}")
    for user, convs in by_user.items():
        starts = [sessions[c][0]["t"].date() for c in convs]
        n = sum(len(sessions[c]) for c in convs)
        print(f"  {user}: {len(convs)} sessions, {n} messages, {starts[0]} .. {starts[-1]} "
              f"({(starts[-1] - starts[0]).days} days), {sum(q['user'] == user for q in questions)} questions")
    print(f"questions {len(questions)}: " + ", ".join(f"{c} {cats[c]}" for c in CATEGORIES))
    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("ERROR:", e)
    print("ok" if not errors else f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
