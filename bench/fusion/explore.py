#!/usr/bin/env python3
"""Score-normalising fusions tried on the seen sets, outside the Rust runner.

Reads the rankings `fusion_eval` writes with FUSION_EVAL_DUMP (standard library only):

    FUSION_EVAL_DUMP=/tmp/fusion.json cargo run -p agentmemory-core --features local-embed \
        --example fusion_eval
    python3 bench/fusion/explore.py /tmp/fusion.json

Prints, per whole seen set (tune + seen parts), each method's score and its gap to the
better of sparse and dense alone. `weighted` and `max-scaled` reproduce the runner's
`Fusion::Weighted` and `Fusion::MaxScaled` (same figures); the others were candidates
that are not in the library.
"""
import json
import math
import sys


def metric(ranked, answers, k):
    for i, (doc, _) in enumerate(ranked):
        if doc in answers:
            return 1 / (i + 1) if k == 0 else float(i < k)
    return 0.0


def fused(sparse, dense, score):
    """Every document of either list, best first (ties: first met, sparse list first)."""
    ids = list(dict.fromkeys(d for d, _ in sparse + dense))
    s, d = dict(sparse), dict(dense)
    return sorted(((i, score(s.get(i, 0.0), d.get(i, 0.0), i)) for i in ids), key=lambda x: -x[1])


def head(scores, n):
    """The n best scores, padded with zeros, with their mean and deviation."""
    top = sorted(scores, reverse=True)[:n]
    top += [0.0] * (n - len(top))
    mu = sum(top) / n
    return top, mu, math.sqrt(sum((x - mu) ** 2 for x in top) / n)


def weighted(w):
    return lambda sp, de: fused(sp, de, lambda s, d, _: w * max(d, 0) + (1 - w) * min(max(s, 0), 1))


def max_scaled(w):
    def method(sp, de):
        best = max((s for _, s in sp), default=0.0)
        return fused(sp, de, lambda s, d, _: w * max(d, 0) + (1 - w) * (s / best if best > 0 else 0))
    return method


def z_sum(n):
    """CombSUM of z-scores, each list normalised over its n best scores."""
    def method(sp, de):
        _, ms, ss = head([s for _, s in sp], n)
        _, md, sd = head([s for _, s in de], n)
        z = lambda x, m, s: (x - m) / s if s > 0 else 0.0
        return fused(sp, de, lambda s, d, _: 0.5 * z(d, md, sd) + 0.5 * z(s, ms, ss))
    return method


def min_max(n):
    """CombSUM of min-max scores over each list's n best."""
    def method(sp, de):
        ts, _, _ = head([s for _, s in sp], n)
        td, _, _ = head([s for _, s in de], n)
        mm = lambda x, t: max(0.0, (x - t[-1]) / (t[0] - t[-1])) if t[0] > t[-1] else 0.0
        return fused(sp, de, lambda s, d, _: 0.5 * mm(d, td) + 0.5 * mm(s, ts))
    return method


def top_z_weight(n):
    """A convex mix of the cosines, the dense share per query from each list's top-1
    z-score over its n best (the side whose best stands out more leads)."""
    def method(sp, de):
        ts, ms, ss = head([s for _, s in sp], n)
        td, md, sd = head([s for _, s in de], n)
        cs = (ts[0] - ms) / ss if ss > 0 else 0.0
        cd = (td[0] - md) / sd if sd > 0 else 0.0
        w = cd / (cd + cs) if cd + cs > 0 else 0.5
        return fused(sp, de, lambda s, d, _: w * max(d, 0) + (1 - w) * min(max(s, 0), 1))
    return method


def main():
    data = json.load(open(sys.argv[1]))
    sets = {name: (v["k"], v["tune"] + v["held_out"]) for name, v in data.items()}

    def score(method, runs, k):
        return 100 * sum(metric(method(r["sparse"], r["dense"]), set(r["answers"]), k) for r in runs) / len(runs)

    sparse = lambda sp, de: sp
    dense = lambda sp, de: de
    methods = [("sparse", sparse), ("dense", dense)]
    methods += [(f"weighted {w}", weighted(w)) for w in (0.8, 0.95)]
    methods += [(f"z-score sum, top {n}", z_sum(n)) for n in (5, 10, 20, 50)]
    methods += [(f"min-max sum, top {n}", min_max(n)) for n in (5, 10, 20, 50)]
    methods += [(f"top-1 z weight, top {n}", top_z_weight(n)) for n in (5, 10, 20, 50)]
    methods += [(f"max-scaled {w}", max_scaled(w)) for w in (0.8, 0.9, 0.95, 0.96)]
    print("| method | " + " | ".join(f"{n} ({len(r)})" for n, (_, r) in sets.items()) + " | worst gap |")
    print("|---|" + "---|" * (len(sets) + 1))
    for name, method in methods:
        cells, gaps = [], []
        for k, runs in sets.values():
            value = score(method, runs, k)
            gap = value - max(score(sparse, runs, k), score(dense, runs, k))
            cells.append(f"{value:.1f} ({gap:+.1f})")
            gaps.append(gap)
        print(f"| {name} | " + " | ".join(cells) + f" | {min(gaps):+.1f} |")


if __name__ == "__main__":
    main()
