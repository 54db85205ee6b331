#!/usr/bin/env python3
"""The coverage fusion explored on fusion_eval's dumped rankings (the third attempt).

    FUSION_EVAL_DUMP=/tmp/fusion.json cargo run --release -p agentmemory-core \
        --features local-embed --example fusion_eval -- --fresh
    python3 bench/fusion/coverage.py /tmp/fusion.json [--unknown-ignored]

Reads the seven seen sets (the dump and its `.fresh` part), recomputes each sparse
candidate's coverage from the dumped query terms (`q_terms`: term, count, df) and the
terms each candidate holds (`held`), and prints the grid of
`w * max(cosine, 0) + (1 - w) * coverage^p` ranked by the worst gap to the better single
side, then the mean. A query term no document holds weighs as a term one document holds
(as `tfidf::coverage` does); `--unknown-ignored` gives such terms no weight instead (what
made pairs lose). Ties keep the order `fuse` gives them (sparse list first). Standard
library only.
"""
import json
import math
import sys


def load(path):
    sets = {}
    for p in [path, path + ".fresh"]:
        for name, v in json.load(open(p)).items():
            sets[name] = (v["k"], v["tune"] + v["held_out"])
    return sets


def coverage(run, n, unknown_ignored):
    weights = []
    for _term, count, df in run["q_terms"]:
        if df == 0 and unknown_ignored:
            w = 0.0
        else:
            w = math.log(1 + n / max(df, 1))
        weights.append((1 + math.log(count)) * w)
    total = sum(weights)
    return [sum(weights[j] for j in held) / total if total > 0 else 0.0 for held in run["held"]]


def score(run, ranking, k):
    for i, key in enumerate(ranking):
        if key in run["answers"]:
            if k == 0:
                return 1.0 / (i + 1)
            return 1.0 if i < k else 0.0
    return 0.0


def fused(run, cov, w, p):
    order, at = [], {}
    for (key, _s), c in zip(run["sparse"], cov):
        if key not in at:
            at[key] = len(order)
            order.append([key, 0.0, c])
    for key, d in run["dense"]:
        if key in at:
            if order[at[key]][1] == 0.0:
                order[at[key]][1] = d
        else:
            at[key] = len(order)
            order.append([key, d, 0.0])
    scored = [(key, w * max(d, 0.0) + (1 - w) * (c ** p if c > 0 else 0.0)) for key, d, c in order]
    scored.sort(key=lambda x: -x[1])
    return [key for key, _ in scored]


def rate(runs, k, rank):
    return 100.0 * sum(score(r, rank(r), k) for r in runs) / max(len(runs), 1)


def main():
    path = sys.argv[1]
    unknown_ignored = "--unknown-ignored" in sys.argv
    sets = load(path)
    for _name, (_k, runs) in sets.items():
        for r in runs:
            # Every document of the group is in the dense ranking (less the excluded ones).
            r["cov"] = coverage(r, len(r["dense"]), unknown_ignored)
    rows = []
    for w in [0.8, 0.82, 0.84, 0.85, 0.86, 0.88, 0.9, 0.92]:
        for p in [2, 2.5, 3, 3.5, 4, 5]:
            gaps = {}
            for name, (k, runs) in sets.items():
                sparse = rate(runs, k, lambda r: [x for x, _ in r["sparse"]])
                dense = rate(runs, k, lambda r: [x for x, _ in r["dense"]])
                hybrid = rate(runs, k, lambda r: fused(r, r["cov"], w, p))
                gaps[name] = hybrid - max(sparse, dense)
            worst = min(gaps.values())
            rows.append((round(worst, 1), sum(gaps.values()) / len(gaps), worst, w, p, gaps))
    rows.sort(key=lambda x: (-x[0], -x[1]))
    for _, mean, worst, w, p, gaps in rows:
        g = ", ".join(f"{k} {v:+.1f}" for k, v in gaps.items())
        print(f"worst {worst:+.2f} mean {mean:+.2f}  w={w} p={p}: {g}")


if __name__ == "__main__":
    main()
