"""Runs agentmem and its peers on the same data, interleaved, and writes the results.

    python compare.py BINARY DATA_DIR OUT_DIR [--rounds N] [--only WORKLOAD,...] [--note TEXT]
    python compare.py --markdown RESULTS.json      # the README table, from a results file

Each round runs every workload once on each side, alternating which side goes first;
the figure kept per (tool, metric) is the median over rounds. Both sides of a workload get
the same thread count through the same variables (RAYON_, OMP_, OPENBLAS_, MKL_..._THREADS):
1, or for the rows that say so, the machine's core count; OpenBLAS core-type overrides are
removed and the BLAS kernel numpy and faiss load is recorded. The load average is recorded
before and after every run, `uptime` before and after the whole run, beside the figures.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Thread variables of every side: removed from the caller's environment, then set to the
# same count for both sides of a workload (COMPARE_THREADS tells peers.py).
THREAD_VARS = ["RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS", "GOTO_NUM_THREADS", "COMPARE_THREADS"]
# OpenBLAS core-type overrides (set on some machines for old OpenBLAS builds): they pin
# numpy to an older kernel, so they are removed and the kernel chosen is recorded.
REMOVED_VARS = THREAD_VARS + ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_VERBOSE",
                              "MKL_ENABLE_INSTRUCTIONS", "AGENTMEM_DENSE_KERNEL"]

# (workload, threads): 1 = every side on one thread; "all" = as many threads as the
# machine has cores, on both sides (rows labelled with the count and the machine).
WORKLOADS = [
    ("window_1k", 1), ("window_10k", 1), ("window_100k", 1),
    ("sparse", 1), ("sparse_threads", "all"),
    ("dense_single", 1), ("dense_threads", "all"),
    ("facts", 1),
    ("sqlite", 1),
    ("embed_single", 1), ("embed_threads", "all"),
]
# The workloads that run the embedding model (skipped when AGENTMEM_EMBED_MODEL is unset).
EMBED_WORKLOADS = {"embed_single", "embed_threads"}
# The metrics compared (lower is better), and how the table names them ({t}: threads of
# the threaded rows, {cores}: the machine's cores).
COMPARED = {
    "window_1k": [("turn_p50_us", "window per turn, 1k history")],
    "window_10k": [("turn_p50_us", "window per turn, 10k history")],
    "window_100k": [("turn_p50_us", "window per turn, 100k history")],
    "sparse": [("search_p50_us", "sparse top-10 p50, 100k docs, 1 thread"),
               ("search_p95_us", "sparse top-10 p95, 100k docs, 1 thread"),
               ("build_us", "sparse index build, 100k docs, 1 thread"),
               ("bytes_per_doc", "sparse index bytes per doc")],
    "sparse_threads": [("build_us", "sparse index build, 100k docs, {t} threads on {cores} shared cores")],
    "dense_single": [("single_p50_us", "dense top-10, 100k x 384, 1 thread"),
                     ("batch_per_query_us", "dense batch of 1,000, per query, 1 thread"),
                     ("bytes_per_vector", "dense memory per vector (agentmem: f32 + one-byte copy)")],
    "dense_threads": [("single_p50_us", "dense top-10, 100k x 384, {t} threads on {cores} shared cores"),
                      ("batch_per_query_us", "dense batch of 1,000, per query, {t} threads on {cores} shared cores")],
    "facts": [("turn_p50_us", "fact upsert + search per turn [different work, note 1]")],
    "sqlite": [("append_p50_us", "SQLite append per turn (WAL, synchronous=NORMAL)"),
               ("load_us", "SQLite load of 2,000 events")],
    "embed_single": [("query_p50_us", "one short query embedded, p50, 1 thread"),
                     ("query_p95_us", "one short query embedded, p95, 1 thread")],
    "embed_threads": [("query_p50_us", "one short query embedded, p50, {t} threads on {cores} shared cores"),
                      ("query_p95_us", "one short query embedded, p95, {t} threads on {cores} shared cores")],
}
NOTES = [
    "1. Not the same algorithm: agentmem reconciles each new fact against the user's current "
    "facts (reinforce, supersede or add) and ranks them by words (TF-IDF); LangChain's "
    "`InMemoryVectorStore` appends the text and ranks every stored text by cosine over "
    "`DeterministicFakeEmbedding` vectors. The row times what a user of each would call per "
    "turn, not one algorithm done two ways.",
]


def thread_count(threads):
    return (os.cpu_count() or 1) if threads == "all" else threads


def environment(threads):
    """The caller's environment less every thread and core-type variable, with the thread
    variables set to `threads` for both sides."""
    env = {k: v for k, v in os.environ.items() if k not in REMOVED_VARS}
    env.update({k: str(threads) for k in THREAD_VARS})
    return env


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gib = round(int(line.split()[1]) / 2**20, 1)
                    break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu_model": model, "memory_gib": mem_gib,
            "system": platform.platform(), "python": platform.python_version()}


def run_json(cmd, env):
    load_before = os.getloadavg()[0]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=HERE)
    load_after = os.getloadavg()[0]
    rows = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    for r in rows:
        r["load"] = [round(load_before, 2), round(load_after, 2)]
    return rows


def median_metrics(runs):
    """{tool: {metric: median}} over rounds (non-numeric metrics from the last round)."""
    out = {}
    for tool, samples in runs.items():
        merged = {}
        for key in samples[-1]:
            last = samples[-1][key]
            values = [s[key] for s in samples
                      if isinstance(s.get(key), (int, float)) and not isinstance(s[key], bool)]
            merged[key] = statistics.median(values) if values and not isinstance(last, bool) else last
        out[tool] = merged
    return out


def agree(tool_top, exact_top):
    """(mean share of exact top-k ids found, share of queries whose top-k list is the
    exact one, id for id in order, queries) over every query both answered."""
    pairs = list(zip(tool_top, exact_top))
    overlap = sum(len(set(a) & set(e)) / len(e) for a, e in pairs if e) / len(pairs)
    same = sum(list(a) == list(e) for a, e in pairs) / len(pairs)
    return overlap, same, len(pairs)


def round_agreement(tools):
    """{tool: (overlap, identical, queries)} of one round of a dense workload against
    numpy's exact scan."""
    exact = tools.get("numpy", {}).get("top10")
    if not exact:
        return {}
    return {tool: agree(m["top10"], exact) for tool, m in tools.items()
            if tool != "numpy" and m.get("top10")}


def agreement(rounds):
    """Top-10 agreement of every dense tool with numpy's exact scan, on every query of
    every round; the worst round is kept."""
    out = {}
    for w, per_round in rounds.items():
        if w in EMBED_WORKLOADS:
            continue
        for tools in per_round:
            for tool, r in tools.items():
                out.setdefault(w, {}).setdefault(tool, []).append(r)
    return {w: {tool: {"overlap": min(r[0] for r in rs), "identical": min(r[1] for r in rs),
                       "queries": min(r[2] for r in rs), "rounds": len(rs)}
                for tool, rs in tools.items()}
            for w, tools in out.items()}


def vector_agreement(tools):
    """(lowest cosine, largest absolute difference, vectors) between agentmem's and ONNX
    Runtime's vectors of the same queries in one round, or None when either is missing."""
    ours = tools.get("agentmem", {}).get("vectors")
    theirs = tools.get("onnxruntime", {}).get("vectors")
    if not ours or not theirs or len(ours) != len(theirs):
        return None
    cosines, diffs = [], []
    for a, b in zip(ours, theirs):
        dot = sum(x * y for x, y in zip(a, b))
        norms = (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5
        cosines.append(dot / norms if norms else 0.0)
        diffs.append(max(abs(x - y) for x, y in zip(a, b)))
    return min(cosines), max(diffs), len(ours)


def measure(binary, data, rounds, only):
    results, loads, per_round = {}, [], {}
    workloads = [w for w in WORKLOADS if not only or w[0] in only]
    if not os.environ.get("AGENTMEM_EMBED_MODEL"):
        skipped = [w for w, _ in workloads if w in EMBED_WORKLOADS]
        if skipped:
            print(f"compare.py: {', '.join(skipped)} skipped: AGENTMEM_EMBED_MODEL (the model "
                  f"directory, scripts/fetch-model) is not set", file=sys.stderr)
        workloads = [w for w in workloads if w[0] not in EMBED_WORKLOADS]
    if (os.cpu_count() or 1) == 1:
        workloads = [w for w in workloads if w[1] != "all"]
    for rnd in range(rounds):
        for name, threads in workloads:
            env = environment(thread_count(threads))
            sides = [[binary, "run", name, data], [sys.executable, "peers.py", name, data]]
            if rnd % 2 == 1:
                sides.reverse()
            this_round = {}
            for cmd in sides:
                t = time.time()
                for row in run_json(cmd, env):
                    this_round[row["tool"]] = row["metrics"]
                    loads.append({"workload": name, "tool": row["tool"], "round": rnd,
                                  "load_1min": row["load"], "seconds": round(time.time() - t, 1)})
            if name.startswith("dense"):
                per_round.setdefault(name, []).append(round_agreement(this_round))
            if name in EMBED_WORKLOADS:
                agreed = vector_agreement(this_round)
                if agreed is None or agreed[0] < 0.9999 and agreed[1] > 1e-4:
                    sys.exit(f"compare.py: {name}: agentmem's and ONNX Runtime's vectors "
                             f"differ (lowest cosine, largest difference, queries): {agreed}")
                per_round.setdefault(name, []).append(agreed)
            # The id lists and vectors are checked (agreement) but not kept in the results.
            for tool, metrics in this_round.items():
                metrics.pop("top10", None)
                metrics.pop("vectors", None)
                results.setdefault(name, {}).setdefault(tool, []).append(metrics)
            print(f"round {rnd + 1}/{rounds} {name}: done", file=sys.stderr, flush=True)
    return {w: median_metrics(tools) for w, tools in results.items()}, loads, per_round


def threads_of(workload):
    return next((t for w, t in WORKLOADS if w == workload), 1)


def ratios(results):
    out = []
    cores = os.cpu_count() or 1
    for workload, metrics in COMPARED.items():
        tools = results.get(workload, {})
        ours = tools.get("agentmem")
        if not ours:
            continue
        t = thread_count(threads_of(workload))
        for peer, theirs in tools.items():
            if peer == "agentmem":
                continue
            for key, label in metrics:
                a, p = ours.get(key), theirs.get(key)
                if isinstance(a, (int, float)) and isinstance(p, (int, float)) and a > 0:
                    name = label.format(t=t, cores=cores)
                    out.append({"workload": workload, "metric": key, "peer": peer,
                                "agentmem": a, "peer_value": p, "ratio": p / a,
                                "label": f"{name} vs {peer}"})
    return out


def fmt(key, v):
    if key.startswith("bytes_per"):
        return f"{v:,.0f} B"
    if v >= 1e6:
        return f"{v / 1e6:,.2f} s"
    if v >= 1e3:
        return f"{v / 1e3:,.2f} ms"
    return f"{v:,.2f} µs"


def markdown(path):
    with open(path) as f:
        res = json.load(f)
    m = res["machine"]
    lo, hi = res["load_average_range"]
    print(f"Measured {res['date']} on {m['cores']} cores ({m['cpu_model']}, "
          f"{m.get('memory_gib', '?')} GiB), {res['rounds']} interleaved rounds (medians), "
          f"{res['seconds']:.0f} s of measuring.\n")
    print(f"- Load: 1-minute load average {lo}–{hi} over the runs; `uptime` before: "
          f"`{res.get('uptime_before', '?')}`, after: `{res.get('uptime_after', '?')}`.")
    if res.get("note"):
        print(f"- Machine and load, in words: {res['note']}")
    env = res.get("environment", {})
    removed = ", ".join(env.get("removed_from_caller", [])) or "none was set"
    print(f"- Threads: every row runs on 1 thread on both sides unless it names a count; "
          f"{', '.join(f'`{v}`' for v in env.get('thread_vars', []))} are set to that count "
          f"for both sides; OpenBLAS core-type and thread variables of the caller are dropped "
          f"({removed}).")
    blas = res.get("blas") or {}
    libs = "; ".join(f"{l['internal_api']}{' ' + l['version'] if l.get('version') else ''} ({l['prefix']}"
                     + (f", kernel {l['architecture']}" if l.get("architecture") else "")
                     + f", threads: {l['num_threads']})"
                     for l in blas.get("threadpoolctl", []))
    if libs:
        print(f"- BLAS/OpenMP loaded by numpy and faiss (threadpoolctl): {libs}; faiss "
              f"compiled with `{blas.get('faiss_compile_options', '?').strip()}`.")
    print(f"- agentmem's dense kernel: `{res['dense_kernel']}`.")
    for w, tools in res.get("dense_top10_agreement_with_numpy", {}).items():
        parts = ", ".join(f"{t} {a['overlap']:.4f} ({a['identical']:.1%} identical lists)"
                          for t, a in tools.items())
        print(f"- Top-10 agreement with numpy's exact scan, `{w}`, all "
              f"{next(iter(tools.values()))['queries']:,} queries of every round (worst round; "
              f"share of exact ids found): {parts}.")
    sql = res.get("results", {}).get("sqlite", {}).get("python sqlite3", {})
    if sql:
        print(f"- SQLite rows: both sides write the same schema with the same statements, "
              f"journal_mode=WAL and synchronous=NORMAL (a commit survives a process crash, "
              f"not necessarily a power loss), foreign_keys=ON; Python's SQLite "
              f"{sql.get('sqlite_version', '?')}, agentmem's bundled with rusqlite.")
    for w, a in res.get("embed_vectors_vs_onnxruntime", {}).items():
        print(f"- `{w}`: the same {a['queries']} queries on both sides; vectors agree with "
              f"ONNX Runtime's to cosine ≥ {a['lowest_cosine']:.6f}, largest difference "
              f"{a['largest_abs_diff']:.1e} (worst of {a['rounds']} rounds); ONNX Runtime with "
              f"intra-op threads = the row's count, spinning off, its BERT fusions applied.")
    print()
    print("| Workload | Peer | agentmem | peer | peer / agentmem |")
    print("|---|---|---:|---:|---:|")
    for r in res["ratios"]:
        label = r["label"].rsplit(" vs ", 1)[0]
        print(f"| {label} | {r['peer']} | {fmt(r['metric'], r['agentmem'])} | "
              f"{fmt(r['metric'], r['peer_value'])} | {r['ratio']:,.2f}× |")
    print()
    for note in res.get("notes", []):
        print(note)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?")
    ap.add_argument("data", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--note", default="", help="what else the machine was doing, in words")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    if args.markdown:
        markdown(args.markdown)
        return
    started = time.time()
    uptime_before = uptime()
    results, loads, per_round = measure(args.binary, args.data, args.rounds,
                                        set(filter(None, args.only.split(","))))
    all_loads = [x for l in loads for x in l["load_1min"]]
    dense = results.get("dense_single", results.get("dense_threads", {}))
    blas = dense.get("numpy", {}).pop("blas", None)
    for tools in results.values():
        tools.get("numpy", {}).pop("blas", None)
    out = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "note": args.note,
        "uptime_before": uptime_before,
        "uptime_after": uptime(),
        "load_average_range": [min(all_loads, default=0), max(all_loads, default=0)],
        "rounds": args.rounds,
        "seconds": round(time.time() - started, 1),
        "environment": {
            "thread_vars": THREAD_VARS,
            "removed_from_caller": sorted(k for k in REMOVED_VARS if k in os.environ),
            "threads_per_workload": {w: thread_count(t) for w, t in WORKLOADS},
        },
        "blas": blas,
        "dense_kernel": dense.get("agentmem", {}).get("kernel", "?"),
        "dense_top10_agreement_with_numpy": agreement(per_round),
        "embed_vectors_vs_onnxruntime": {
            w: {"lowest_cosine": min(r[0] for r in rs), "largest_abs_diff": max(r[1] for r in rs),
                "queries": rs[0][2], "rounds": len(rs)}
            for w, rs in per_round.items() if w in EMBED_WORKLOADS},
        "notes": NOTES,
        "ratios": ratios(results),
        "results": results,
        "runs": loads,
    }
    os.makedirs(args.out, exist_ok=True)
    # A partial run (--only) never overwrites the full results.
    path = os.path.join(args.out, "compare-partial.json" if args.only else "compare.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(path)


if __name__ == "__main__":
    main()
