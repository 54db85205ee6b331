#!/usr/bin/env python3
"""The embedded default (agentmem CLI on a SQLite file) against tantivy on disk.

Same run, same 100,000 documents and 1,000 Zipf-distributed queries, top 10:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install tantivy==0.27.0
    cargo build --release --features cli --bin agentmem
    /tmp/venv/bin/python memory-stores/benches/compare/search_vs_tantivy.py \
        --agentmem target/release/agentmem [--criterion]

Writes docs.jsonl / queries.jsonl into --data (a temp dir by default). With
--criterion it also runs `cargo bench -p agentmemory-stores --bench documents` on the
same files (AGENTMEM_BENCH_DATA), for agentmem's per-query p50 through the library.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

DOCS = 100_000
QUERIES = 1_000
VOCABULARY = 30_000
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "po", "vi", "de", "da",
             "gu", "fe", "ri", "zo", "be", "ha", "ju", "ni", "qu", "xe"]


def zipf_sampler(rng, n):
    weights = [1.0 / r for r in range(1, n + 1)]
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)
    import bisect

    def draw():
        return bisect.bisect_left(cum, rng.random() * total)
    return draw


def make_data(directory, seed=7):
    rng = random.Random(seed)
    words, seen = [], set()
    while len(words) < VOCABULARY:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    draw = zipf_sampler(rng, VOCABULARY)
    docs_path = os.path.join(directory, "docs.jsonl")
    queries_path = os.path.join(directory, "queries.jsonl")
    with open(docs_path, "w") as f:
        for i in range(DOCS):
            n = rng.randint(8, 40)
            text = " ".join(words[draw()] for _ in range(n))
            f.write(json.dumps({"id": f"d{i}", "content": text}) + "\n")
    with open(queries_path, "w") as f:
        for i in range(QUERIES):
            n = rng.randint(1, 4)
            text = " ".join(words[draw()] for _ in range(n))
            f.write(json.dumps({"id": i, "query": text}) + "\n")
    return docs_path, queries_path


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def tantivy_run(directory, docs, queries):
    import tantivy
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("content", stored=True)
    schema = builder.build()
    path = os.path.join(directory, "tantivy")
    os.makedirs(path, exist_ok=True)
    started = time.perf_counter()
    index = tantivy.Index(schema, path=path)
    writer = index.writer()
    for d in docs:
        writer.add_document(tantivy.Document(id=d["id"], content=d["content"]))
    writer.commit()
    writer.wait_merging_threads()
    ingest = time.perf_counter() - started
    index.reload()
    searcher = index.searcher()
    lat = []
    started = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        query = index.parse_query(q["query"], ["content"])
        hits = searcher.search(query, 10).hits
        for _, addr in hits:
            searcher.doc(addr)  # fetch the stored id/content, as agentmem returns them
        lat.append(time.perf_counter() - t)
    total = time.perf_counter() - started
    return ingest, lat, total


def agentmem_run(exe, directory, docs_path, queries_path):
    db = os.path.join(directory, "agentmem.db")
    store = f"sqlite://{db}"
    started = time.perf_counter()
    subprocess.run([exe, "--store", store, "vectors", "upsert", "--namespace", "bench",
                    "--file", docs_path, "--batch-size", "10000"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ingest = time.perf_counter() - started
    out = {}
    for conc in (1, 2):
        with open(queries_path) as q:
            started = time.perf_counter()
            res = subprocess.run([exe, "--store", store, "vectors", "search", "--namespace", "bench",
                                  "-k", "10", "--concurrency", str(conc)],
                                 stdin=q, check=True, capture_output=True, text=True)
            wall = time.perf_counter() - started
        # the CLI's own line: "answered N queries ... in S s": search time without start-up
        line = [l for l in res.stderr.splitlines() if l.startswith("answered")][-1]
        secs = float(line.split(" in ")[1].split("s")[0])
        p50 = float(line.split("p50 ")[1].split(" ms")[0])
        p95 = float(line.split("p95 ")[1].split(" ms")[0])
        first = float(line.split("opens the index) ")[1].split(" ms")[0])
        after = float(line.split("ms, ")[-1].split(" queries/s after")[0])
        out[conc] = (wall, secs, len(res.stdout.splitlines()), p50, p95, first, after)
    return ingest, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agentmem", default="target/release/agentmem")
    p.add_argument("--data", default=None)
    p.add_argument("--criterion", action="store_true")
    a = p.parse_args()
    directory = a.data or tempfile.mkdtemp(prefix="agentmem-vs-tantivy-")
    os.makedirs(directory, exist_ok=True)
    docs_path, queries_path = make_data(directory)
    docs, queries = read_jsonl(docs_path), read_jsonl(queries_path)
    print(f"data: {directory} ({len(docs)} documents, {len(queries)} queries)")

    t_ingest, t_lat, t_total = tantivy_run(directory, docs, queries)
    a_ingest, a_search = agentmem_run(a.agentmem, directory, docs_path, queries_path)

    def ms(x):
        return f"{x * 1000:.3f} ms"
    print(f"tantivy (python bindings, on disk): ingest {t_ingest:.2f} s; "
          f"search p50 {ms(statistics.median(t_lat))}, "
          f"p95 {ms(sorted(t_lat)[int(0.95 * len(t_lat))])}, "
          f"{len(queries) / t_total:.0f} queries/s")
    print(f"agentmem CLI (sqlite): ingest {a_ingest:.2f} s (whole process)")
    for conc, (wall, secs, n, p50, p95, first, after) in a_search.items():
        print(f"agentmem CLI search --concurrency {conc}: {n} answers in {secs:.3f} s "
              f"({n / secs:.0f} queries/s; {after:.0f} queries/s once the index is open); "
              f"per query p50 {p50:.3f} ms, p95 {p95:.3f} ms; "
              f"the first query (loads the index) {first:.1f} ms; {wall:.2f} s whole process")
    if a.criterion:
        env = dict(os.environ, AGENTMEM_BENCH_DATA=directory)
        subprocess.run(["cargo", "bench", "-p", "agentmemory-stores", "--bench", "documents"],
                       env=env, check=True)


if __name__ == "__main__":
    sys.exit(main())
