#!/usr/bin/env python3
"""Score `agentmem recall --json` output against the episodes evaluation set.

A question is a hit when one of its `answer` strings occurs in the rendered memory
block (`block`) of the recall result with the same `id`. Matching is case-, accent-
and whitespace-insensitive, HTML entities are unescaped and curly quotes are made
straight; an answer that starts (ends) with a letter or digit must start (end) at a
word boundary, so "Dev" does not match "developer".

A "time" question is also a hit when the block holds one of its `answer_dates`,
written as 2025-03-13, 2025/03/13, 13 March 2025, 13 Mar 2025, 13th March 2025,
March 13, 2025, Mar 13 2025, March 13th, 2025 (weekday prefixes and ISO times after
the date are fine).

For "change" questions the report also counts how often a `wrong` (stale) value is
in the block while no right answer is.

Usage:
  score.py --results results.jsonl [--questions questions.jsonl] [--json] [--verbose]
  score.py --queries [--user U] [--questions questions.jsonl]   # recall stdin lines
  score.py --selftest                                            # check this scorer

Standard library only.
"""
import argparse
import datetime as dt
import html
import json
import os
import re
import sys
import unicodedata
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
CATEGORIES = ["event", "time", "person", "attribute", "change"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
QUOTES = {"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'",
          "\u201c": '"', "\u201d": '"', "\u00a0": " "}


def normalise(text):
    """Lower-case, accent-free, straight-quoted, single-spaced text."""
    text = html.unescape(text or "")
    text = unicodedata.normalize("NFKC", text)
    text = "".join(QUOTES.get(c, c) for c in text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", text.lower()).strip()


def _pattern(needle):
    """Regex for a normalised needle, anchored at word boundaries on alphanumeric ends."""
    body = re.escape(needle)
    if needle and needle[0].isalnum():
        body = r"(?<![0-9a-z])" + body
    if needle and needle[-1].isalnum():
        body = body + r"(?![0-9a-z])"
    return re.compile(body)


def _date_pattern(form):
    """Like _pattern, but a trailing digit only refuses a further digit ("2025-03-13T10:00")."""
    body = re.escape(form)
    body = (r"(?<![0-9a-z])" if form[0].isalnum() else "") + body
    return re.compile(body + (r"(?![0-9])" if form[-1].isdigit() else r"(?![0-9a-z])"))


def contains(haystack_norm, needle):
    """True when `needle` (raw) occurs in the already normalised haystack."""
    n = normalise(needle)
    return bool(n) and _pattern(n).search(haystack_norm) is not None


def _ordinal(day):
    if 11 <= day % 100 <= 13:
        return f"{day}th"
    return f"{day}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th') }"


def date_forms(iso):
    """Every accepted written form of a calendar date, normalised."""
    d = dt.date.fromisoformat(iso)
    names = [MONTHS[d.month - 1]]
    names.append(names[0][:3])
    if d.month == 9:
        names.append("Sept")
    days = [str(d.day), f"{d.day:02d}", _ordinal(d.day)]
    y = d.year
    forms = {d.isoformat(), f"{y}/{d.month:02d}/{d.day:02d}"}
    for m in names:
        for day in days:
            forms.add(f"{day} {m} {y}")
            forms.add(f"{day} {m}. {y}")
            forms.add(f"{day} of {m} {y}")
            forms.add(f"{m} {day}, {y}")
            forms.add(f"{m} {day} {y}")
            forms.add(f"{m}. {day}, {y}")
    return sorted(normalise(f) for f in forms)


def contains_date(haystack_norm, iso):
    return any(_date_pattern(f).search(haystack_norm) for f in date_forms(iso))


def read_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{n}: not JSON: {e}")
    return rows


def judge(question, result):
    """Per-question verdict for one recall result (None when the result is missing)."""
    verdict = {"id": question["id"], "category": question["category"], "missing": result is None,
               "hit": False, "word_hit": False, "date_hit": False, "stale": False,
               "in_facts": False, "in_episodes": False, "block_chars": 0}
    if result is None:
        return verdict
    block = result.get("block") or ""
    verdict["block_chars"] = len(block)
    norm = normalise(block)
    answers = question.get("answer", [])
    verdict["word_hit"] = any(contains(norm, a) for a in answers)
    verdict["date_hit"] = any(contains_date(norm, d) for d in question.get("answer_dates", []))
    verdict["hit"] = verdict["word_hit"] or verdict["date_hit"]
    if question["category"] == "change":
        verdict["stale"] = not verdict["hit"] and any(contains(norm, w) for w in question.get("wrong", []))
    facts = normalise(" \n ".join(str(f.get("text", "")) for f in result.get("facts") or []))
    episodes = normalise(" \n ".join(str(e.get("text", "")) for e in result.get("episodes") or []))
    verdict["in_facts"] = any(contains(facts, a) for a in answers)
    verdict["in_episodes"] = any(contains(episodes, a) for a in answers)
    return verdict


def _rate(n, d):
    return round(n / d, 4) if d else 0.0


def score(questions, results):
    """Summary dict plus per-question verdicts."""
    by_id = {}
    for r in results:
        if "id" in r:
            by_id[str(r["id"])] = r
    verdicts = [judge(q, by_id.get(q["id"])) for q in questions]
    summary = OrderedDict()
    summary["questions"] = len(verdicts)
    summary["missing_results"] = sum(v["missing"] for v in verdicts)
    summary["unknown_result_ids"] = sorted(set(by_id) - {q["id"] for q in questions})
    per = OrderedDict()
    for cat in CATEGORIES + ["all"]:
        vs = [v for v in verdicts if cat == "all" or v["category"] == cat]
        if not vs:
            continue
        row = OrderedDict(n=len(vs), hits=sum(v["hit"] for v in vs))
        row["hit_rate"] = _rate(row["hits"], row["n"])
        row["answer_in_facts"] = _rate(sum(v["in_facts"] for v in vs), len(vs))
        row["answer_in_episodes"] = _rate(sum(v["in_episodes"] for v in vs), len(vs))
        if cat == "time":
            row["date_hits"] = sum(v["date_hit"] for v in vs)
            row["word_hits"] = sum(v["word_hit"] for v in vs)
        if cat == "change":
            row["stale_only"] = sum(v["stale"] for v in vs)
            row["stale_rate"] = _rate(row["stale_only"], row["n"])
        per[cat] = row
    summary["categories"] = per
    chars = [v["block_chars"] for v in verdicts if not v["missing"]]
    summary["mean_block_chars"] = round(sum(chars) / len(chars), 1) if chars else 0.0
    summary["max_block_chars"] = max(chars) if chars else 0
    return summary, verdicts


def print_report(summary, verdicts, verbose, out=sys.stdout):
    w = out.write
    w(f"questions: {summary['questions']}   missing results: {summary['missing_results']}\n")
    if summary["unknown_result_ids"]:
        w(f"results with unknown ids: {len(summary['unknown_result_ids'])}\n")
    w(f"{'category':<10} {'n':>4} {'hits':>5} {'rate':>7} {'in facts':>9} {'in episodes':>12}  extra\n")
    for cat, row in summary["categories"].items():
        extra = ""
        if cat == "time":
            extra = f"date hits {row['date_hits']}, word hits {row['word_hits']}"
        if cat == "change":
            extra = f"stale only {row['stale_only']} ({100 * row['stale_rate']:.1f} %)"
        w(f"{cat:<10} {row['n']:>4} {row['hits']:>5} {100 * row['hit_rate']:>6.1f}% "
          f"{100 * row['answer_in_facts']:>8.1f}% {100 * row['answer_in_episodes']:>11.1f}%  {extra}\n")
    w(f"block size: mean {summary['mean_block_chars']} chars, max {summary['max_block_chars']}\n")
    if verbose:
        for v in verdicts:
            mark = "MISSING" if v["missing"] else ("hit" if v["hit"] else "miss")
            stale = " stale" if v["stale"] else ""
            w(f"  {v['id']} {v['category']:<9} {mark}{stale}\n")


def queries(questions, user=None):
    """The recall stdin lines, grouped by user in file order."""
    users = OrderedDict()
    for q in questions:
        users.setdefault(q["user"], []).append(q)
    lines = []
    for u, qs in users.items():
        if user is not None and u != user:
            continue
        for q in qs:
            lines.append(json.dumps({"id": q["id"], "query": q["query"], "at": q["at"], "user": u},
                                    ensure_ascii=False))
    return lines


# Expected verdicts for score_selftest.jsonl, keyed by question id:
# (hit, date_hit, stale, in_facts, in_episodes). See README for what each line tests.
SELFTEST_EXPECT = {
    "q005": (True, True, False, False, False),     # "28 September 2024" label, no words
    "q006": (True, True, False, False, False),     # ISO timestamp 2025-04-13T...
    "q007": (False, False, False, False, False),   # only the message's own date, no words
    "q008": (True, False, False, False, True),     # words with odd case and line breaks
    "q085": (True, True, False, False, False),     # words and "Thursday, 24 April 2025"
    "q065": (True, True, False, False, False),     # "May 15th, 2025"
    "q023": (True, True, False, False, False),     # "Sept 20, 2024" inside a sentence
    "q024": (False, False, False, False, False),   # "2024-11-050" is not the date
    "q016": (False, False, True, False, False),    # stale value only
    "q017": (True, False, False, True, False),     # stale and right value together, "&amp;"
    "q010": (False, False, False, False, False),   # "Dev" only inside "developer" and "Kardev"
    "q048": (True, False, False, False, False),    # "Alvaro" without the accent
    "q074": (True, False, False, False, False),    # HTML-escaped curly apostrophe
    "q001": (False, False, False, True, True),     # answer in facts/episodes, not in block
}


def selftest(questions_path):
    questions = read_jsonl(questions_path)
    results = read_jsonl(os.path.join(HERE, "score_selftest.jsonl"))
    qmap = {q["id"]: q for q in questions}
    failures = []
    for r in results:
        exp = SELFTEST_EXPECT.get(r["id"])
        if exp is None:
            failures.append(f"{r['id']}: no expectation")
            continue
        v = judge(qmap[r["id"]], r)
        got = (v["hit"], v["date_hit"], v["stale"], v["in_facts"], v["in_episodes"])
        if got != exp:
            failures.append(f"{r['id']}: expected {exp}, got {got}")
    missing = set(SELFTEST_EXPECT) - {r["id"] for r in results}
    failures += [f"{m}: expectation without a result line" for m in sorted(missing)]
    subset = [qmap[i] for i in SELFTEST_EXPECT]
    summary, _ = score(subset, results)
    totals = (summary["categories"]["all"]["hits"], summary["categories"]["time"]["date_hits"],
              summary["categories"]["change"]["stale_only"], summary["missing_results"])
    if totals != (9, 5, 1, 0):
        failures.append(f"totals (hits, date hits, stale, missing) = {totals}, expected (9, 5, 1, 0)")
    full, _ = score(questions, results)
    if full["missing_results"] != len(questions) - len(results):
        failures.append("missing results are not counted as misses")
    if failures:
        print("selftest FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"selftest ok: {len(results)} cases, 9 hits, 5 date hits, 1 stale")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", default=os.path.join(HERE, "questions.jsonl"))
    ap.add_argument("--results", help="JSONL from `agentmem recall --json` (all users concatenated)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--verbose", action="store_true", help="list every question's verdict")
    ap.add_argument("--queries", action="store_true", help="print recall stdin lines instead of scoring")
    ap.add_argument("--user", help="with --queries: only this user's questions")
    ap.add_argument("--selftest", action="store_true", help="check the scorer on score_selftest.jsonl")
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest(args.questions)
    questions = read_jsonl(args.questions)
    if args.queries:
        for line in queries(questions, args.user):
            print(line)
        return 0
    if not args.results:
        ap.error("--results is required (or --queries / --selftest)")
    summary, verdicts = score(questions, read_jsonl(args.results))
    if args.json:
        if args.verbose:
            summary["verdicts"] = verdicts
        print(json.dumps(summary, indent=2))
    else:
        print_report(summary, verdicts, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
