"""Runs agentmem and its peers on the same data, interleaved, and writes the results.

    python compare.py BINARY DATA_DIR OUT_DIR [--rounds N] [--only WORKLOAD,...]
    python compare.py --markdown RESULTS.json      # the README table, from a results file

Each round runs every workload once on each side, alternating which side goes first;
the figure kept per (tool, metric) is the median over rounds. The load average is
recorded before and after every run, beside the figures.
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

# (workload, extra environment): dense_single pins every side to one thread.
ONE_THREAD = {"RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1"}
WORKLOADS = [
    ("window_1k", {}), ("window_10k", {}), ("window_100k", {}),
    ("sparse", {}),
    ("dense_single", ONE_THREAD), ("dense_parallel", {}),
    ("facts", {}),
    ("sqlite", {}),
]
# The metrics compared (lower is better), and how the table names them.
COMPARED = {
    "window_1k": [("turn_p50_us", "window per turn, 1k history")],
    "window_10k": [("turn_p50_us", "window per turn, 10k history")],
    "window_100k": [("turn_p50_us", "window per turn, 100k history")],
    "sparse": [("search_p50_us", "sparse top-10 p50, 100k docs"),
               ("search_p95_us", "sparse top-10 p95, 100k docs"),
               ("build_us", "sparse index build, 100k docs"),
               ("bytes_per_doc", "sparse index bytes per doc")],
    "dense_single": [("single_p50_us", "dense top-10, 100k x 384, 1 thread"),
                     ("batch_per_query_us", "dense batch of 1,000 per query, 1 thread")],
    "dense_parallel": [("single_p50_us", "dense top-10, 100k x 384, all cores"),
                       ("batch_per_query_us", "dense batch of 1,000 per query, all cores")],
    "facts": [("turn_p50_us", "fact upsert + search per turn")],
    "sqlite": [("append_p50_us", "SQLite append per turn"),
               ("load_us", "SQLite load of 2,000 events")],
}


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
    return {"cores": os.cpu_count(), "cpu_model": model, "system": platform.platform(),
            "python": platform.python_version()}


def run_json(cmd, env):
    load_before = os.getloadavg()[0]
    out = subprocess.run(cmd, env={**os.environ, **env}, check=True, capture_output=True,
                         text=True, cwd=HERE)
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
            values = [s[key] for s in samples if isinstance(s.get(key), (int, float))]
            merged[key] = statistics.median(values) if values and not isinstance(samples[-1][key], bool) else samples[-1][key]
        out[tool] = merged
    return out


def agreement(results):
    """Share of the first queries' top-10 id lists where agentmem equals numpy exactly."""
    out = {}
    for w in ("dense_single", "dense_parallel"):
        tools = results.get(w, {})
        a, n = tools.get("agentmem", {}).get("top10"), tools.get("numpy", {}).get("top10")
        if a and n:
            out[w] = sum(x == y for x, y in zip(a, n)) / len(a)
    return out


def measure(binary, data, rounds, only):
    results, loads = {}, []
    workloads = [w for w in WORKLOADS if not only or w[0] in only]
    for rnd in range(rounds):
        for name, env in workloads:
            sides = [[binary, "run", name, data], [sys.executable, "peers.py", name, data]]
            if rnd % 2 == 1:
                sides.reverse()
            for cmd in sides:
                t = time.time()
                for row in run_json(cmd, env):
                    results.setdefault(name, {}).setdefault(row["tool"], []).append(row["metrics"])
                    loads.append({"workload": name, "tool": row["tool"], "round": rnd,
                                  "load_1min": row["load"], "seconds": round(time.time() - t, 1)})
            print(f"round {rnd + 1}/{rounds} {name}: done", file=sys.stderr, flush=True)
    return {w: median_metrics(tools) for w, tools in results.items()}, loads


def ratios(results):
    out = []
    for workload, metrics in COMPARED.items():
        tools = results.get(workload, {})
        ours = tools.get("agentmem")
        if not ours:
            continue
        for peer, theirs in tools.items():
            if peer == "agentmem":
                continue
            for key, label in metrics:
                a, p = ours.get(key), theirs.get(key)
                if isinstance(a, (int, float)) and isinstance(p, (int, float)) and a > 0:
                    out.append({"workload": workload, "metric": key, "peer": peer,
                                "agentmem": a, "peer_value": p, "ratio": p / a,
                                "label": f"{label} vs {peer}"})
    return out


def fmt(key, v):
    if key == "bytes_per_doc":
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
    print(f"Measured {res['date']} on {m['cores']} cores ({m['cpu_model']}), load average "
          f"{res['load_average_range'][0]}–{res['load_average_range'][1]} during the run, "
          f"{res['rounds']} interleaved rounds (medians); dense kernel `{res['dense_kernel']}`.\n")
    print("| Workload | Peer | agentmem | peer | peer / agentmem |")
    print("|---|---|---:|---:|---:|")
    for r in res["ratios"]:
        label = r["label"].rsplit(" vs ", 1)[0]
        print(f"| {label} | {r['peer']} | {fmt(r['metric'], r['agentmem'])} | "
              f"{fmt(r['metric'], r['peer_value'])} | {r['ratio']:,.2f}× |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?")
    ap.add_argument("data", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    if args.markdown:
        markdown(args.markdown)
        return
    started = time.time()
    results, loads = measure(args.binary, args.data, args.rounds,
                             set(filter(None, args.only.split(","))))
    all_loads = [x for l in loads for x in l["load_1min"]]
    dense = results.get("dense_parallel", results.get("dense_single", {})).get("agentmem", {})
    out = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "load_average_range": [min(all_loads, default=0), max(all_loads, default=0)],
        "rounds": args.rounds,
        "seconds": round(time.time() - started, 1),
        "dense_kernel": dense.get("kernel", "?"),
        "top10_agreement_with_numpy": agreement(results),
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
