#!/usr/bin/env python3
"""Score agentmem's facts on the frozen facts evaluation (issue 35).

Drives the `agentmem` CLI (Python 3, standard library only):

    score.py --bin AGENTMEM --work DIR [--parts changes,health,health_shared,histories] [--json OUT]

- changes:   each pair is ingested as two dated conversations into a fresh SQLite store per
             variant (in order; reversed; first, second, then the first file again), then
             `agentmem facts list --json` is read and checked against `current`, `kept` and
             `stale`. A fourth store ingests the first statement alone (was it captured at all).
- changes_fresh: the same on changes_fresh.jsonl (written 2026-12-07, see README.md); its stores,
             details file and summary key are named changes_fresh. Not in the default parts.
- changes_fresh2: the same on changes_fresh2.jsonl (written 2026-12-07, see README.md); its stores,
             details file and summary key are named changes_fresh2. Not in the default parts.
- changes_fresh3: the same on changes_fresh3.jsonl (written 2026-12-07, see README.md); its stores,
             details file and summary key are named changes_fresh3. Not in the default parts.
- changes_fresh4: the same on changes_fresh4.jsonl (written 2026-12-07, see README.md); its stores,
             details file and summary key are named changes_fresh4. Not in the default parts.
- changes_fresh5: the same on changes_fresh5.jsonl (written 2026-12-07, see README.md); its stores,
             details file and summary key are named changes_fresh5. Not in the default parts.
- changes_fresh6: the same on changes_fresh6.jsonl (written 2026-12-07, see README.md); its stores,
             details file and summary key are named changes_fresh6. Not in the default parts.
- health:    the disclosure is ingested, then `agentmem recall --json` is asked the question
             (at its own date); the answer must be in the memory block. `facts list` is read too.
- health_fresh: the same on health_fresh.jsonl (written 2026-12-07, see README.md); its store,
             details file and summary key are named health_fresh. Not in the default parts.
- health_fresh2: the same on health_fresh2.jsonl (written 2026-12-07, see README.md); its store,
             details file and summary key are named health_fresh2. Not in the default parts.
- health_fresh3: the same on health_fresh3.jsonl (written 2026-12-07, see README.md); its store,
             details file and summary key are named health_fresh3. Not in the default parts.
- health_fresh4: the same on health_fresh4.jsonl (written 2026-12-07, see README.md); its store,
             details file and summary key are named health_fresh4. Not in the default parts.
- health_fresh5: the same on health_fresh5.jsonl (written 2026-12-07, see README.md); its store,
             details file and summary key are named health_fresh5. Not in the default parts.
- changes_fresh7, health_fresh6: the same on changes_fresh7.jsonl and health_fresh6.jsonl (written
             2026-12-07, see README.md), named so. Not in the default parts.
- histories: every session of a user is ingested (in order; reversed; in order then the first
             session again), then recall is asked each question of that user.

Prints a summary table and writes DIR/summary.json (and --json OUT if given) and per-item
details in DIR/details_*.jsonl. See README.md for the scoring rules.
"""

import argparse
import html
import json
import os
import re
import subprocess
import sys
import unicodedata
from datetime import datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))

# Words that, in a fact's text, say the old state is over (the fact does not present it as current).
CLOSING_MARKERS = [
    "ex", "former", "formerly", "used to", "no longer", "not", "non", "late", "previously",
    "quit", "quitted", "stopped", "gave up", "given up", "left", "sold", "died", "passed away",
    "lost", "dropped out", "split", "broke up", "divorced", "put down", "put to sleep",
    "rehomed", "rehome", "moved from", "moved out", "called off", "ended", "cut out", "until",
    "before", "gone", "doesn't", "does not", "don't", "never", "dumped", "broke off", "finished",
    "retired", "gave away",
]

# The reply logged after each single statement of changes.jsonl and health.jsonl.
NEUTRAL_REPLY = "Thanks for telling me."


def norm(text):
    """Lower case, no accents, HTML entities unescaped, straight quotes, single spaces."""
    text = html.unescape(text or "")
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", text.lower()).strip()


def keyword_pattern(keyword):
    """A regex for keyword: word boundaries where it starts or ends with a letter or digit; a
    keyword ending in a letter also matches with a trailing s, es or 's."""
    k = norm(keyword)
    body = re.escape(k).replace(r"\ ", r"\s+")
    left = r"(?<![a-z0-9])" if k[:1].isalnum() else ""
    right = ""
    if k[-1:].isalpha():
        right = r"(?:'?s|es)?(?![a-z0-9])"  # a plural or possessive still matches: cat, cats, cat's
    elif k[-1:].isalnum():
        right = r"(?![a-z0-9])"
    return re.compile(left + body + right)


def has_any(text, keywords):
    t = norm(text)
    return any(keyword_pattern(k).search(t) for k in keywords)


def is_stale(fact, stale, current):
    """A current fact presents a stale value as current: it names a stale keyword, is not
    negative, does not also name the new value, has no end of validity and, outside the stale
    keyword itself, no closing marker ("ex-wife", "sold the focus"; but "has never been sporty"
    is stale for the keyword "never been sporty")."""
    text = fact.get("text") or ""
    if not stale or not has_any(text, stale):
        return False
    if (fact.get("polarity") or "").lower() == "negative":
        return False
    if fact.get("valid_to"):
        return False
    if current and has_any(text, current):
        return False
    rest = norm(text)
    for k in stale:
        rest = keyword_pattern(k).sub(" ", rest)
    return not has_any(rest, CLOSING_MARKERS)


def run(cmd, stdin_text=None):
    proc = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[:500]}")
    return proc.stdout


class Agentmem:
    def __init__(self, binary, ingest_args=(), recall_args=()):
        self.bin = binary
        self.ingest_args = list(ingest_args)
        self.recall_args = list(recall_args)

    def ingest(self, store, user, conversation, messages):
        lines = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
        run([self.bin, "ingest", "--store", store, "--user", user, "--conversation", conversation, "--json"]
            + self.ingest_args, lines)

    def facts(self, store, user):
        out = run([self.bin, "facts", "list", "--store", store, "--user", user, "--json"])
        out = out.strip()
        return json.loads(out) if out else []

    def recall(self, store, user, queries, k):
        lines = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries)
        out = run([self.bin, "recall", "--store", store, "--user", user, "--json", "-k", str(k)]
                  + self.recall_args, lines)
        results = {}
        for line in out.splitlines():
            if line.strip():
                r = json.loads(line)
                results[r.get("id")] = r
        return results


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def statement(stmt):
    """One user statement and a neutral reply a minute later."""
    t = datetime.strptime(stmt["at"], "%Y-%m-%dT%H:%M:%SZ")
    reply_at = (t + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        {"role": "user", "content": stmt["text"], "created_at": stmt["at"]},
        {"role": "assistant", "content": NEUTRAL_REPLY, "created_at": reply_at},
    ]


def fresh_store(work, name):
    path = os.path.join(work, name + ".db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return "sqlite://" + path


CHANGE_VARIANTS = {
    "in_order": ["a", "b"],
    "reversed": ["b", "a"],
    "replayed": ["a", "b", "a"],
}


def judge_change(pair, facts):
    texts = [f.get("text") or "" for f in facts]
    kind = pair["kind"]
    new_present = True
    if kind in ("change", "additive"):
        new_present = any(has_any(t, pair["current"]) for t in texts)
    kept_present = True
    if pair["kept"]:
        kept_present = any(has_any(t, pair["kept"]) for t in texts)
    stale = [f.get("text") for f in facts if is_stale(f, pair["stale"], pair["current"])]
    return {
        "hit": new_present and kept_present and not stale,
        "new_present": new_present,
        "kept_present": kept_present,
        "stale_current": stale,
        "facts": sorted(texts),
        "stated": sorted((f.get("text") or "", f.get("reinforcement_count")) for f in facts),
    }


def score_changes(am, work, name="changes"):
    """Score the pairs of NAME.jsonl; the stores are NAME_<variant>.db in work."""
    pairs = load(name + ".jsonl")
    stores = {v: fresh_store(work, name + "_" + v) for v in list(CHANGE_VARIANTS) + ["first_only"]}
    details = []
    for pair in pairs:
        convs = {"a": (pair["id"] + "-a", statement(pair["first"])), "b": (pair["id"] + "-b", statement(pair["second"]))}
        row = {"id": pair["id"], "kind": pair["kind"], "family": pair["family"]}
        am.ingest(stores["first_only"], pair["id"], *convs["a"])
        first = am.facts(stores["first_only"], pair["id"])
        first_kw = pair["kept"] or pair["stale"]
        row["first_captured"] = any(has_any(f.get("text") or "", first_kw) for f in first)
        for variant, order in CHANGE_VARIANTS.items():
            for key in order:
                am.ingest(stores[variant], pair["id"], *convs[key])
            row[variant] = judge_change(pair, am.facts(stores[variant], pair["id"]))
        for variant in ("reversed", "replayed"):
            row[variant]["same_as_in_order"] = row[variant]["facts"] == row["in_order"]["facts"]
            row[variant]["same_stated_counts"] = row[variant]["stated"] == row["in_order"]["stated"]
        details.append(row)
    return details


def summarize_changes(details):
    out = {"total": len(details), "first_captured": sum(r["first_captured"] for r in details), "by_kind": {}}
    for variant in CHANGE_VARIANTS:
        out[variant] = {
            "hits": sum(r[variant]["hit"] for r in details),
            "new_present": sum(r[variant]["new_present"] for r in details if r["kind"] in ("change", "additive")),
            "kept_present": sum(r[variant]["kept_present"] for r in details if r["kind"] != "change"),
            "stale_current": sum(bool(r[variant]["stale_current"]) for r in details),
        }
        if variant != "in_order":
            out[variant]["same_as_in_order"] = sum(r[variant]["same_as_in_order"] for r in details)
            out[variant]["same_stated_counts"] = sum(r[variant]["same_stated_counts"] for r in details)
    for kind in ("change", "additive", "other", "junk"):
        rows = [r for r in details if r["kind"] == kind]
        out["by_kind"][kind] = {"total": len(rows)}
        for variant in CHANGE_VARIANTS:
            out["by_kind"][kind][variant] = sum(r[variant]["hit"] for r in rows)
    return out


def score_health(am, work, k, name="health"):
    """Score the disclosures of NAME.jsonl; the store is NAME.db in work."""
    items = load(name + ".jsonl")
    store = fresh_store(work, name)
    details = []
    for item in items:
        am.ingest(store, item["id"], item["id"] + "-d", statement(item["disclosure"]))
        res = am.recall(store, item["id"], [{"id": item["id"], "query": item["question"]["text"],
                                              "at": item["question"]["at"]}], k).get(item["id"], {})
        facts = am.facts(store, item["id"])
        block = res.get("block") or ""
        details.append({
            "id": item["id"],
            "category": item["category"],
            "block_hit": has_any(block, item["answer"]),
            "recall_fact_hit": any(has_any(f.get("text") or "", item["answer"]) for f in res.get("facts") or []),
            "fact_captured": any(has_any(f.get("text") or "", item["answer"]) for f in facts),
            "facts": [f.get("text") for f in facts],
            "block": block,
        })
    return details


def score_health_shared(am, work, k):
    """All disclosures told by one user, each in its own dated conversation: every question
    then competes with the 35 other disclosures for the block."""
    items = load("health.jsonl")
    store = fresh_store(work, "health_shared")
    user = "health-all"
    for item in sorted(items, key=lambda i: i["disclosure"]["at"]):
        am.ingest(store, user, item["id"] + "-d", statement(item["disclosure"]))
    results = am.recall(store, user, [{"id": i["id"], "query": i["question"]["text"], "at": i["question"]["at"]}
                                      for i in items], k)
    details = []
    for item in items:
        res = results.get(item["id"]) or {}
        block = res.get("block") or ""
        details.append({
            "id": item["id"],
            "category": item["category"],
            "missing": not res,
            "block_hit": has_any(block, item["answer"]),
            "recall_fact_hit": any(has_any(f.get("text") or "", item["answer"]) for f in res.get("facts") or []),
            "block": block,
        })
    return details


def summarize_health(details):
    return {
        "total": len(details),
        "block_hits": sum(r["block_hit"] for r in details),
        "recall_fact_hits": sum(r["recall_fact_hit"] for r in details),
        "facts_captured": sum(r["fact_captured"] for r in details),
    }


def summarize_health_shared(details):
    return {
        "total": len(details),
        "block_hits": sum(r["block_hit"] for r in details),
        "recall_fact_hits": sum(r["recall_fact_hit"] for r in details),
        "missing": sum(r["missing"] for r in details),
    }


HISTORY_VARIANTS = ("in_order", "reversed", "replayed")


def score_histories(am, work, k):
    messages = load("histories.jsonl")
    questions = load("questions.jsonl")
    sessions = {}
    for m in messages:
        sessions.setdefault(m["user"], {}).setdefault(m["conversation"], []).append(
            {"role": m["role"], "content": m["content"], "created_at": m["created_at"]})
    details = []
    for variant in HISTORY_VARIANTS:
        store = fresh_store(work, "histories_" + variant)
        for user, convs in sessions.items():
            order = list(convs)
            if variant == "reversed":
                order = order[::-1]
            elif variant == "replayed":
                order = order + order[:1]
            for conv in order:
                am.ingest(store, user, conv, convs[conv])
            qs = [q for q in questions if q["user"] == user]
            results = am.recall(store, user, [{"id": q["id"], "query": q["query"], "at": q["at"]} for q in qs], k)
            listed = am.facts(store, user)
            for q in qs:
                res = results.get(q["id"])
                block = (res or {}).get("block") or ""
                facts = (res or {}).get("facts") or []
                answered = has_any(block, q["answer"])
                stale_shown = [f.get("text") for f in facts if is_stale(f, q["wrong"], q["answer"])]
                stale_listed = [f.get("text") for f in listed if is_stale(f, q["wrong"], q["answer"])]
                details.append({
                    "variant": variant, "id": q["id"], "user": user, "kind": q["kind"],
                    "missing": res is None,
                    "answered": answered,
                    "stale_presented": stale_shown,
                    "stale_only": (not answered) and bool(q["wrong"]) and has_any(block, q["wrong"]),
                    "stale_in_facts_list": stale_listed,
                    "hit": answered and not stale_shown,
                    "block_chars": len(block),
                    "block": block,
                })
    return details


def summarize_histories(details):
    out = {}
    for variant in HISTORY_VARIANTS:
        rows = [r for r in details if r["variant"] == variant]
        cur = [r for r in rows if r["kind"] == "current"]
        past = [r for r in rows if r["kind"] == "past"]
        out[variant] = {
            "total": len(rows),
            "current_total": len(cur),
            "current_hits": sum(r["hit"] for r in cur),
            "current_answered": sum(r["answered"] for r in cur),
            "stale_presented_as_current": sum(bool(r["stale_presented"]) for r in cur),
            "stale_only": sum(r["stale_only"] for r in cur),
            "stale_in_facts_list": sum(bool(r["stale_in_facts_list"]) for r in cur),
            "past_total": len(past),
            "past_hits": sum(r["hit"] for r in past),
            "missing": sum(r["missing"] for r in rows),
            "mean_block_chars": round(sum(r["block_chars"] for r in rows) / max(1, len(rows))),
            "max_block_chars": max([r["block_chars"] for r in rows] or [0]),
        }
    return out


def report_changes(c, title):
    """The table of one file of change pairs (changes, changes_fresh, changes_fresh2, changes_fresh3, changes_fresh4,
    changes_fresh5, changes_fresh6, changes_fresh7)."""
    lines = [f"{title} ({c['total']} pairs; first statement captured alone: {c['first_captured']}/{c['total']})"]
    lines.append(f"  {'variant':<10} {'hits':>9} {'new present':>12} {'kept':>6} {'stale current':>14} {'same as in-order':>17}")
    for v in CHANGE_VARIANTS:
        s = c[v]
        kept_total = sum(c["by_kind"][k]["total"] for k in ("additive", "other", "junk")) + 0
        new_total = c["by_kind"]["change"]["total"] + c["by_kind"]["additive"]["total"]
        same = f"{s['same_as_in_order']}/{c['total']}" if "same_as_in_order" in s else "-"
        lines.append(f"  {v:<10} {s['hits']:>4}/{c['total']:<4} {s['new_present']:>5}/{new_total:<6} "
                     f"{s['kept_present']:>2}/{kept_total:<3} {s['stale_current']:>14} {same:>17}")
    lines.append("  same facts and same stated (reinforcement) counts as in-order: "
                 f"reversed {c['reversed']['same_stated_counts']}/{c['total']}, "
                 f"replayed {c['replayed']['same_stated_counts']}/{c['total']}")
    lines.append("  by kind (hits in_order / reversed / replayed):")
    for kind, s in c["by_kind"].items():
        lines.append(f"    {kind:<9} {s['in_order']}/{s['total']}  {s['reversed']}/{s['total']}  {s['replayed']}/{s['total']}")
    return lines


def report(summary):
    lines = []
    for part, title in (("changes", "CHANGES"), ("changes_fresh", "CHANGES, FRESH SET (changes_fresh.jsonl)"),
                        ("changes_fresh2", "CHANGES, SECOND FRESH SET (changes_fresh2.jsonl)"),
                        ("changes_fresh3", "CHANGES, THIRD FRESH SET (changes_fresh3.jsonl)"),
                        ("changes_fresh4", "CHANGES, FOURTH FRESH SET (changes_fresh4.jsonl)"),
                        ("changes_fresh5", "CHANGES, FIFTH FRESH SET (changes_fresh5.jsonl)"),
                        ("changes_fresh6", "CHANGES, SIXTH FRESH SET (changes_fresh6.jsonl)"),
                        ("changes_fresh7", "CHANGES, SEVENTH FRESH SET (changes_fresh7.jsonl)")):
        if part in summary:
            lines.extend(report_changes(summary[part], title))
    for part, title in (("health", "HEALTH"), ("health_fresh", "HEALTH, FRESH SET (health_fresh.jsonl)"),
                        ("health_fresh2", "HEALTH, SECOND FRESH SET (health_fresh2.jsonl)"),
                        ("health_fresh3", "HEALTH, THIRD FRESH SET (health_fresh3.jsonl)"),
                        ("health_fresh4", "HEALTH, FOURTH FRESH SET (health_fresh4.jsonl)"),
                        ("health_fresh5", "HEALTH, FIFTH FRESH SET (health_fresh5.jsonl)"),
                        ("health_fresh6", "HEALTH, SIXTH FRESH SET (health_fresh6.jsonl)")):
        if part in summary:
            h = summary[part]
            lines.append(f"{title} ({h['total']} disclosures)")
            lines.append(f"  answer in recall block: {h['block_hits']}/{h['total']}   in recall facts: "
                         f"{h['recall_fact_hits']}/{h['total']}   captured as a fact (facts list): {h['facts_captured']}/{h['total']}")
    if "health_shared" in summary:
        h = summary["health_shared"]
        lines.append(f"HEALTH, ONE USER ({h['total']} disclosures told by one user, each question competing with the rest)")
        lines.append(f"  answer in recall block: {h['block_hits']}/{h['total']}   in recall facts: {h['recall_fact_hits']}/{h['total']}")
    if "histories" in summary:
        lines.append("HISTORIES")
        lines.append(f"  {'variant':<10} {'current hits':>13} {'answered':>9} {'stale presented':>16} {'stale only':>11} "
                     f"{'stale in list':>14} {'past hits':>10} {'block chars mean/max':>21}")
        for v, s in summary["histories"].items():
            lines.append(f"  {v:<10} {s['current_hits']:>6}/{s['current_total']:<6} {s['current_answered']:>4}/{s['current_total']:<4} "
                         f"{s['stale_presented_as_current']:>16} {s['stale_only']:>11} {s['stale_in_facts_list']:>14} "
                         f"{s['past_hits']:>4}/{s['past_total']:<5} {s['mean_block_chars']:>10}/{s['max_block_chars']}")
            if s["missing"]:
                lines.append(f"    missing result lines: {s['missing']}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the agentmem binary")
    ap.add_argument("--work", required=True, help="scratch directory (stores and details are written here)")
    ap.add_argument("--parts", default="changes,health,health_shared,histories")
    ap.add_argument("--k", type=int, default=int(os.environ.get("RECALL_K", "5")))
    ap.add_argument("--json", help="also write the summary JSON here")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    work = os.path.abspath(args.work)
    am = Agentmem(args.bin, os.environ.get("AGENTMEM_INGEST_ARGS", "").split(),
                  os.environ.get("AGENTMEM_RECALL_ARGS", "").split())
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    known = ("changes", "changes_fresh", "changes_fresh2", "changes_fresh3", "changes_fresh4", "changes_fresh5",
             "changes_fresh6", "changes_fresh7", "health", "health_fresh", "health_fresh2", "health_fresh3", "health_fresh4",
             "health_fresh5", "health_fresh6", "health_shared", "histories")
    unknown = [p for p in parts if p not in known]
    if unknown:
        ap.error(f"unknown part(s) {', '.join(unknown)}; known: {', '.join(known)}")
    summary = {}
    for part, scorer, summarizer in (
        ("changes", lambda: score_changes(am, work), summarize_changes),
        ("changes_fresh", lambda: score_changes(am, work, "changes_fresh"), summarize_changes),
        ("changes_fresh2", lambda: score_changes(am, work, "changes_fresh2"), summarize_changes),
        ("changes_fresh3", lambda: score_changes(am, work, "changes_fresh3"), summarize_changes),
        ("changes_fresh4", lambda: score_changes(am, work, "changes_fresh4"), summarize_changes),
        ("changes_fresh5", lambda: score_changes(am, work, "changes_fresh5"), summarize_changes),
        ("changes_fresh6", lambda: score_changes(am, work, "changes_fresh6"), summarize_changes),
        ("changes_fresh7", lambda: score_changes(am, work, "changes_fresh7"), summarize_changes),
        ("health", lambda: score_health(am, work, args.k), summarize_health),
        ("health_fresh", lambda: score_health(am, work, args.k, "health_fresh"), summarize_health),
        ("health_fresh2", lambda: score_health(am, work, args.k, "health_fresh2"), summarize_health),
        ("health_fresh3", lambda: score_health(am, work, args.k, "health_fresh3"), summarize_health),
        ("health_fresh4", lambda: score_health(am, work, args.k, "health_fresh4"), summarize_health),
        ("health_fresh5", lambda: score_health(am, work, args.k, "health_fresh5"), summarize_health),
        ("health_fresh6", lambda: score_health(am, work, args.k, "health_fresh6"), summarize_health),
        ("health_shared", lambda: score_health_shared(am, work, args.k), summarize_health_shared),
        ("histories", lambda: score_histories(am, work, args.k), summarize_histories),
    ):
        if part not in parts:
            continue
        details = scorer()
        with open(os.path.join(work, f"details_{part}.jsonl"), "w", encoding="utf-8") as f:
            for row in details:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        summary[part] = summarizer(details)
    text = report(summary)
    print(text)
    with open(os.path.join(work, "report.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    for path in [os.path.join(work, "summary.json")] + ([args.json] if args.json else []):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
