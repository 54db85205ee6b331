#!/usr/bin/env python3
"""Consistency checks of the facts evaluation data (Python 3, standard library only).

    python3 check_data.py        # exit 0 when every check passes, 1 otherwise (each failure printed)
"""

import json
import os
import re
import sys
from collections import Counter, defaultdict
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from score import has_any  # noqa: E402  (the scorer's own keyword matching)

FAILURES = []

STOPWORDS = set("""
a about after again all also am an and any anything are as at be been being but by can can't could did do does
doing don't for from get go going got had has have having he her here him his how i i'm i've if in into is it
it's its just me my no not now of off ok on one or our out should so some something that the their them then
there these they this those to too up us was we we'll we're were what when where which who why will with would
you your bit thing things think of really tonight night day days week weeks time good new
""".split())


def fail(msg):
    FAILURES.append(msg)


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def stem(word):
    for suffix in ("ing", "ies", "es", "ed", "s", "y", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text):
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {stem(w.strip("'")) for w in words if w.strip("'") and w not in STOPWORDS and w.strip("'") not in STOPWORDS}


# Minimum counts per file of pairs: total, change, additive, other, junk.
CHANGE_SETS = {
    "changes": {"total": 0, "change": 40, "additive": 0, "other": 5, "junk": 5, "new_only_in_second": False},
    # Written 2026-12-07 (see README.md): 44 changes over 11 families, 5 additions, 6 other, 5 junk.
    # Also: no current keyword of a change or addition occurs in its first statement.
    "changes_fresh": {"total": 60, "change": 44, "additive": 5, "other": 6, "junk": 5, "new_only_in_second": True},
    # Written 2026-12-07 (see README.md): 44 changes over 14 families, 6 additions, 7 other, 7 junk.
    "changes_fresh3": {"total": 64, "change": 44, "additive": 6, "other": 7, "junk": 7, "new_only_in_second": True},
    # Written 2026-12-07 (see README.md): 44 changes over 14 families, 6 additions, 7 other, 7 junk.
    "changes_fresh4": {"total": 64, "change": 44, "additive": 6, "other": 7, "junk": 7, "new_only_in_second": True},
    # Written 2026-12-07 (see README.md): 44 changes over 14 families, 6 additions, 7 other, 7 junk.
    "changes_fresh5": {"total": 64, "change": 44, "additive": 6, "other": 7, "junk": 7, "new_only_in_second": True},
    # Written 2026-12-07 (see README.md): 44 changes over 14 families, 6 additions, 7 other, 7 junk.
    "changes_fresh6": {"total": 64, "change": 44, "additive": 6, "other": 7, "junk": 7, "new_only_in_second": True},
    "changes_fresh7": {"total": 64, "change": 44, "additive": 6, "other": 7, "junk": 7, "new_only_in_second": True},
}

# Minimum counts per file of health disclosures: total and per category.
HEALTH_SETS = {
    "health": {"total": 30},
    # Written 2026-12-07 (see README.md).
    "health_fresh2": {"total": 40, "allergy": 10, "condition": 14, "medication": 7, "intolerance": 5, "diet": 4},
    # Written 2026-12-07 (see README.md).
    "health_fresh3": {"total": 40, "allergy": 10, "condition": 14, "medication": 7, "intolerance": 5, "diet": 4},
    # Written 2026-12-07 (see README.md).
    "health_fresh4": {"total": 40, "allergy": 10, "condition": 14, "medication": 7, "intolerance": 5, "diet": 4},
    # Written 2026-12-07 (see README.md).
    "health_fresh5": {"total": 40, "allergy": 10, "condition": 14, "medication": 7, "intolerance": 5, "diet": 4},
    "health_fresh6": {"total": 40, "allergy": 10, "condition": 14, "medication": 7, "intolerance": 5, "diet": 4},
}


def check_changes(name="changes"):
    pairs = load(name + ".jsonl")
    need = CHANGE_SETS[name]
    ids = Counter(p["id"] for p in pairs)
    for i, n in ids.items():
        if n > 1:
            fail(f"{name}: duplicate id {i}")
    kinds = Counter(p["kind"] for p in pairs)
    for p in pairs:
        pid = p["id"]
        if p["kind"] not in ("change", "additive", "other", "junk"):
            fail(f"{pid}: unknown kind {p['kind']}")
        if ts(p["second"]["at"]) <= ts(p["first"]["at"]):
            fail(f"{pid}: second statement not after the first")
        if p["closes"] != (p["kind"] == "change"):
            fail(f"{pid}: closes must be true exactly for kind change")
        if p["kind"] in ("change", "additive"):
            if not p["current"]:
                fail(f"{pid}: no current keywords")
            elif not has_any(p["second"]["text"], p["current"]):
                fail(f"{pid}: no current keyword occurs in the second statement")
            elif need["new_only_in_second"] and has_any(p["first"]["text"], p["current"]):
                fail(f"{pid}: a current keyword occurs in the first statement")
        else:
            if p["current"] or p["stale"]:
                fail(f"{pid}: {p['kind']} pairs expect nothing new and nothing stale")
        if p["kind"] == "change":
            if not p["stale"]:
                fail(f"{pid}: a change needs stale keywords")
            elif not has_any(p["first"]["text"], p["stale"]):
                fail(f"{pid}: no stale keyword occurs in the first statement")
        if p["kind"] != "change" and not p["kept"]:
            fail(f"{pid}: {p['kind']} pairs need kept keywords")
        if p["kept"] and not has_any(p["first"]["text"], p["kept"]):
            fail(f"{pid}: no kept keyword occurs in the first statement")
    if len(pairs) < need["total"]:
        fail(f"{name}: only {len(pairs)} pairs (need >= {need['total']})")
    for kind in ("change", "additive", "other", "junk"):
        if kinds[kind] < need[kind]:
            fail(f"{name}: only {kinds[kind]} {kind} pairs (need >= {need[kind]})")
    return f"{name}: {len(pairs)} pairs {dict(kinds)}"


def check_health(name="health"):
    items = load(name + ".jsonl")
    need = HEALTH_SETS[name]
    ids = Counter(h["id"] for h in items)
    for i, n in ids.items():
        if n > 1:
            fail(f"{name}: duplicate id {i}")
    for h in items:
        hid = h["id"]
        if ts(h["question"]["at"]) <= ts(h["disclosure"]["at"]):
            fail(f"{hid}: question not after the disclosure")
        if not has_any(h["disclosure"]["text"], h["answer"]):
            fail(f"{hid}: no answer keyword occurs in the disclosure")
        if has_any(h["question"]["text"], h["answer"]):
            fail(f"{hid}: the question contains an answer keyword")
        shared = content_words(h["disclosure"]["text"]) & content_words(h["question"]["text"])
        if shared:
            fail(f"{hid}: question shares content words with the disclosure: {sorted(shared)}")
    cats = Counter(h["category"] for h in items)
    if len(items) < need["total"]:
        fail(f"{name}: only {len(items)} disclosures (need >= {need['total']})")
    for cat, n in need.items():
        if cat != "total" and cats[cat] < n:
            fail(f"{name}: only {cats[cat]} {cat} disclosures (need >= {n})")
    return f"{name}: {len(items)} disclosures {dict(cats)}"


def check_histories():
    msgs = load("histories.jsonl")
    questions = load("questions.jsonl")
    sessions = defaultdict(list)
    user_sessions = defaultdict(list)
    for m in msgs:
        if m["conversation"] not in user_sessions[m["user"]]:
            user_sessions[m["user"]].append(m["conversation"])
        sessions[m["conversation"]].append(m)
    last_at = {}
    for user, convs in user_sessions.items():
        if not 4 <= len(convs) <= 6:
            fail(f"{user}: {len(convs)} sessions (need 4-6)")
        prev_end = None
        for c in convs:
            ms = sessions[c]
            if not 10 <= len(ms) <= 20:
                fail(f"{c}: {len(ms)} messages (need 10-20)")
            for i, m in enumerate(ms):
                if m["role"] != ("user" if i % 2 == 0 else "assistant"):
                    fail(f"{c}: message {i} breaks user/assistant alternation")
                if i and ts(m["created_at"]) <= ts(ms[i - 1]["created_at"]):
                    fail(f"{c}: message {i} not after the previous one")
            if prev_end and (ts(ms[0]["created_at"]) - prev_end).days < 14:
                fail(f"{c}: starts less than two weeks after the previous session")
            prev_end = ts(ms[-1]["created_at"])
        last_at[user] = prev_end
        span = (prev_end - ts(sessions[convs[0]][0]["created_at"])).days
        if span < 90:
            fail(f"{user}: sessions span only {span} days")
    if len(user_sessions) < 4:
        fail(f"histories: only {len(user_sessions)} users (need >= 4)")
    ids = Counter(q["id"] for q in questions)
    for i, n in ids.items():
        if n > 1:
            fail(f"questions: duplicate id {i}")
    for q in questions:
        qid = q["id"]
        if q["user"] not in user_sessions:
            fail(f"{qid}: unknown user")
            continue
        if q["kind"] not in ("current", "past"):
            fail(f"{qid}: unknown kind {q['kind']}")
        if ts(q["at"]) <= last_at[q["user"]]:
            fail(f"{qid}: asked before the user's last message")
        if has_any(q["query"], q["answer"]):
            fail(f"{qid}: the question contains its answer")
        ev_text = [m["content"] for c in q["evidence"] for m in sessions.get(c, [])]
        for c in q["evidence"]:
            if c not in user_sessions[q["user"]]:
                fail(f"{qid}: evidence {c} is not a session of {q['user']}")
        if not any(has_any(t, q["answer"]) for t in ev_text):
            fail(f"{qid}: no answer keyword occurs in its evidence sessions")
        if q["wrong"]:
            if q["kind"] != "current":
                fail(f"{qid}: only current questions have wrong values")
            first_ev = min(user_sessions[q["user"]].index(c) for c in q["evidence"])
            earlier = [m["content"] for c in user_sessions[q["user"]][: first_ev + 1] for m in sessions[c]]
            if not any(has_any(t, q["wrong"]) for t in earlier):
                fail(f"{qid}: no wrong value occurs in the sessions up to its evidence")
    kinds = Counter(q["kind"] for q in questions)
    if len(questions) < 60:
        fail(f"questions: only {len(questions)} (need >= 60)")
    if kinds["current"] < 25 or kinds["past"] < 25:
        fail(f"questions: need >= 25 current and >= 25 past, have {dict(kinds)}")
    n_msgs = len(msgs)
    return (f"histories: {len(user_sessions)} users, {len(sessions)} sessions, {n_msgs} messages; "
            f"questions: {len(questions)} {dict(kinds)}")


def main():
    summaries = [check_changes("changes"), check_changes("changes_fresh"), check_changes("changes_fresh3"),
                 check_changes("changes_fresh4"), check_changes("changes_fresh5"), check_changes("changes_fresh6"), check_changes("changes_fresh7"),
                 check_health(), check_health("health_fresh2"), check_health("health_fresh3"),
                 check_health("health_fresh4"), check_health("health_fresh5"), check_health("health_fresh6"), check_histories()]
    for s in summaries:
        print(s)
    for f in FAILURES:
        print("FAIL", f)
    print("ok" if not FAILURES else f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
