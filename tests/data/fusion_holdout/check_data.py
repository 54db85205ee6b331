#!/usr/bin/env python3
"""Consistency checks for the fusion hold-out set; prints the counts. Exits non-zero on any error.

Adapted from tests/data/episodes_eval/check_data.py (same matching rules as its score.py: case, accents,
quotes and runs of whitespace are ignored; an answer with an alphanumeric end must end at a word boundary).
Standard library only.
"""
import datetime as dt
import html
import json
import os
import re
import sys
import unicodedata
from collections import Counter, OrderedDict, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
CATEGORIES = ["event", "time", "person", "attribute", "change"]
QUOTES = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
PAIRS = 90


def normalise(text):
    """Lower-case, accent-free, straight-quoted, single-spaced text."""
    text = html.unescape(text or "")
    text = unicodedata.normalize("NFKC", text)
    text = "".join(QUOTES.get(c, c) for c in text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", text.lower()).strip()


def contains(haystack_norm, needle):
    """True when `needle` (raw) occurs in the already normalised haystack, at word boundaries."""
    n = normalise(needle)
    if not n:
        return False
    body = re.escape(n)
    if n[0].isalnum():
        body = r"(?<![0-9a-z])" + body
    if n[-1].isalnum():
        body = body + r"(?![0-9a-z])"
    return re.search(body, haystack_norm) is not None


def ts(s):
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def read_jsonl(name, errors):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"{name}:{n}: {e}")
    return rows


def check_conversations(errors):
    messages = []
    for n, m in enumerate(read_jsonl("conversations.jsonl", errors), 1):
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
        if not 10 <= len(ms) <= 16:
            errors.append(f"{conv}: {len(ms)} messages")
        for i, m in enumerate(ms):
            want = "user" if i % 2 == 0 else "assistant"
            if m["role"] != want:
                errors.append(f"{conv}: message {i} is {m['role']}, expected {want}")
            if i and not 30 <= (m["t"] - ms[i - 1]["t"]).total_seconds() <= 180:
                errors.append(f"{conv}: gap before message {i} not a minute or two")
    for user, convs in by_user.items():
        if not 4 <= len(convs) <= 6:
            errors.append(f"{user}: {len(convs)} sessions")
        starts = [sessions[c][0]["t"] for c in convs]
        for a, b, c in zip(starts, starts[1:], convs[1:]):
            if (b - a).days < 2:
                errors.append(f"{c}: starts {(b - a).days} days after the previous session")
        span = (starts[-1] - starts[0]).days
        if not 110 <= span <= 366:
            errors.append(f"{user}: sessions span {span} days")
    return messages, sessions, by_user


def check_questions(messages, sessions, by_user, errors, warnings):
    questions = read_jsonl("questions.jsonl", errors)
    ids = Counter(q.get("id") for q in questions)
    errors += [f"duplicate question id {i}" for i, c in ids.items() if c > 1]
    last = {u: max(m["t"] for m in messages if m["user"] == u) for u in by_user}
    user_msgs = defaultdict(list)
    for m in messages:
        user_msgs[m["user"]].append(m)
    for q in questions:
        qid = q.get("id")
        missing = [k for k in ("id", "user", "at", "category", "query", "answer", "evidence") if k not in q]
        if missing:
            errors.append(f"{qid}: no {missing}")
            continue
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
        if not q["answer"]:
            errors.append(f"{qid}: no answer")
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
            first = min(m["t"] for m in user_msgs[q["user"]]).date()
            for d in q.get("answer_dates", []):
                day = dt.date.fromisoformat(d)
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
        elif "wrong" in q:
            errors.append(f"{qid}: wrong on a {q['category']} question")
    return questions


STOP = set("""a an the and or but if of to in on at for with from by about as is are was were be been am do does did
have has had i me my mine you your it its this that these those what which who whom when where why how can could
should would will shall may might must not no any some there their them they he she his her we our us so than
then too very just up out into over after before again once all each other such only own same ever also get got
one new old good best right way much many""".split())


def words(text):
    out = set()
    for w in re.findall(r"[a-z0-9]+", normalise(text)):
        if w in STOP or len(w) < 3:
            continue
        out.add(w)
    return out


def shares_word(statement, query):
    """A content word (or one differing only by a plural/verb 's') in both texts."""
    a = {w.rstrip("s") for w in words(statement)}
    b = {w.rstrip("s") for w in words(query)}
    return bool(a & b)


def check_pairs(errors):
    with open(os.path.join(HERE, "pairs.json"), encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            errors.append(f"pairs.json: {e}")
            return [], 0
    if set(data) != {"about", "pairs"} or not isinstance(data["about"], str):
        errors.append(f"pairs.json: keys {sorted(data)}")
    pairs = data.get("pairs", [])
    if len(pairs) != PAIRS:
        errors.append(f"pairs.json: {len(pairs)} pairs, expected {PAIRS}")
    for i, p in enumerate(pairs):
        if set(p) != {"statement", "query"} or not all(isinstance(v, str) and v.strip() for v in p.values()):
            errors.append(f"pairs.json: pair {i} malformed: {p}")
    for key in ("statement", "query"):
        seen = Counter(normalise(p.get(key, "")) for p in pairs)
        errors += [f"pairs.json: duplicate {key} {s!r}" for s, c in seen.items() if c > 1]
    shared = sum(shares_word(p["statement"], p["query"]) for p in pairs)
    return pairs, shared


def main():
    errors, warnings = [], []
    messages, sessions, by_user = check_conversations(errors)
    questions = check_questions(messages, sessions, by_user, errors, warnings)
    pairs, shared = check_pairs(errors)

    cats = Counter(q["category"] for q in questions)
    if len(by_user) != 6:
        errors.append(f"{len(by_user)} users, expected 6")
    if not 330 <= len(messages) <= 420:
        errors.append(f"{len(messages)} messages, expected 330-420")
    if not 150 <= len(questions) <= 180:
        errors.append(f"{len(questions)} questions, expected 150-180")

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
    print(f"pairs {len(pairs)}, {shared} share a content word between statement and query, "
          f"{len(pairs) - shared} do not")
    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("ERROR:", e)
    print("ok" if not errors else f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
