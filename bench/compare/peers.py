"""The peers' side of the comparison harness: `python peers.py WORKLOAD DIR`.

Runs the same work as `agentmem-compare run WORKLOAD DIR` on the same files and prints
one JSON object per peer: {"tool": ..., "metrics": {...}} (times in microseconds).
"""

import datetime
import gc
import json
import os
import sqlite3
import sys
import tempfile
import time

K = 10
WINDOW_TOKENS = 4000
DIM = 384
# Threads every peer may use (compare.py sets it, with the BLAS/OpenMP thread variables,
# to the same count as agentmem's RAYON_NUM_THREADS).
THREADS = int(os.environ.get("COMPARE_THREADS", "1"))


def lines(d, name):
    with open(os.path.join(d, name), encoding="utf-8") as f:
        return f.read().splitlines()


def percentiles(samples):
    s = sorted(samples)
    at = lambda p: s[round((len(s) - 1) * p)]
    return at(0.5), at(0.95)


def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def timed(n, budget_s, op):
    start = time.perf_counter()
    samples = []
    for i in range(n):
        t = time.perf_counter()
        op(i)
        samples.append((time.perf_counter() - t) * 1e6)
        if time.perf_counter() - start > budget_s and len(samples) >= 5:
            break
    p50, p95 = percentiles(samples)
    return p50, p95, len(samples)


def emit(tool, metrics):
    print(json.dumps({"tool": tool, "metrics": metrics}), flush=True)


def window(d, history):
    """Two ways to keep the window with `trim_messages`: over the whole history (what its
    docs show), and over the last messages only (slice first, then count), sliced to as
    many messages as could ever fit: the budget over the cheapest message of the data, so
    both keep the same window."""
    from langchain_core.messages import AIMessage, HumanMessage, trim_messages

    texts = lines(d, "messages.txt")

    # The same count as agentmem's default: ceil(chars / 4) + 4 per message.
    def cost(text):
        return (len(text) + 3) // 4 + 4

    def count(messages):
        return sum(cost(m.content) for m in messages)

    cheapest = min(cost(t) for t in texts)
    slice_len = WINDOW_TOKENS // cheapest

    for tool, sliced in (("langchain-core trim_messages", False),
                         ("langchain-core trim_messages, sliced", True)):
        msgs = [
            HumanMessage(t) if i % 2 == 0 else AIMessage(t)
            for i, t in enumerate(texts[:history])
        ]
        kept = []

        def turn(i):
            msgs.append(HumanMessage(texts[i % len(texts)]))
            msgs.append(AIMessage(texts[(i + 1) % len(texts)]))
            source = msgs[-slice_len:] if sliced else msgs
            kept[:] = trim_messages(
                source, max_tokens=WINDOW_TOKENS, token_counter=count, strategy="last"
            )

        p50, p95, n = timed(500, 3.0, turn)
        metrics = {"turn_p50_us": p50, "turn_p95_us": p95, "turns": n,
                   "window_messages": len(kept)}
        if sliced:
            # Checked once, untimed: the sliced window is the whole history's window.
            whole = trim_messages(msgs, max_tokens=WINDOW_TOKENS, token_counter=count,
                                  strategy="last")
            metrics["slice_messages"] = slice_len
            metrics["same_window_as_unsliced"] = (
                [m.content for m in whole] == [m.content for m in kept])
        emit(tool, metrics)


def sparse(d, threads):
    """Top-10 BM25 search. On one thread (`threads == 1`): bm25s, tantivy and rank-bm25;
    on more, tantivy alone, the one peer whose index build uses threads."""
    import numpy as np

    docs = lines(d, "docs.txt")
    queries = lines(d, "queries.txt")

    def measure(tool, build, search, n_queries=len(queries)):
        gc.collect()
        before = resident()
        t = time.perf_counter()
        index = build()
        build_us = (time.perf_counter() - t) * 1e6
        gc.collect()
        bytes_per_doc = (resident() - before) / len(docs)
        samples = []
        for q in queries[:n_queries]:
            t = time.perf_counter()
            search(index, q)
            samples.append((time.perf_counter() - t) * 1e6)
        p50, p95 = percentiles(samples)
        emit(tool, {"search_p50_us": p50, "search_p95_us": p95, "build_us": build_us,
                    "bytes_per_doc": bytes_per_doc, "queries": len(samples)})
        del index
        gc.collect()

    import bm25s

    def bm25s_build():
        r = bm25s.BM25()
        r.index(bm25s.tokenize(docs, stopwords=None, show_progress=False), show_progress=False)
        return r

    def bm25s_search(r, q):
        r.retrieve(bm25s.tokenize([q], stopwords=None, show_progress=False), k=K,
                   show_progress=False, n_threads=1)

    if threads == 1:
        measure("bm25s", bm25s_build, bm25s_search)

    import tantivy

    def tantivy_build():
        sb = tantivy.SchemaBuilder()
        # Term frequencies without positions: what agentmem's keyword index holds (no
        # phrase queries), so both sides index the same; the default ("position") also
        # stores every word's position, about 90 more bytes a document.
        sb.add_text_field("body", stored=False, index_option="freq")
        sb.add_unsigned_field("id", stored=True)
        schema = sb.build()
        index = tantivy.Index(schema)  # in RAM
        w = index.writer(heap_size=200_000_000, num_threads=threads)
        for i, text in enumerate(docs):
            w.add_document(tantivy.Document(body=text, id=i))
        w.commit()
        w.wait_merging_threads()
        index.reload()
        return index, index.searcher()

    def tantivy_search(ix, q):
        index, searcher = ix
        # count=False: TopDocs alone, as a top-k search is written; counting every hit
        # (the default) turns off tantivy's block-max pruning.
        searcher.search(index.parse_query(q, ["body"]), K, count=False)

    measure("tantivy", tantivy_build, tantivy_search)
    if threads != 1:
        return

    from rank_bm25 import BM25Okapi

    def rank_build():
        return BM25Okapi([t.split() for t in docs])

    def rank_search(r, q):
        scores = r.get_scores(q.split())
        np.argpartition(-scores, K)[:K]

    # rank-bm25 scores every document in Python per query: 20 queries are plenty.
    measure("rank-bm25", rank_build, rank_search, n_queries=20)


def read_vectors(d, name):
    import numpy as np

    v = np.fromfile(os.path.join(d, name), dtype="<f4").reshape(-1, DIM)
    return v / np.linalg.norm(v.astype(np.float64), axis=1, keepdims=True).astype(np.float32)


def blas_info():
    """Which BLAS (and OpenMP) numpy and faiss run, with how many threads: threadpoolctl's
    view of the loaded libraries, numpy's build configuration, faiss's compile options."""
    import faiss
    import numpy as np
    from threadpoolctl import threadpool_info

    config = np.show_config(mode="dicts")
    return {
        "threadpoolctl": [
            {k: lib.get(k) for k in ("user_api", "internal_api", "prefix", "version",
                                     "architecture", "threading_layer", "num_threads")}
            for lib in threadpool_info()
        ],
        "numpy_blas": config.get("Build Dependencies", {}).get("blas", {}).get(
            "openblas configuration"),
        "numpy_simd": config.get("SIMD Extensions", {}).get("found"),
        "faiss_compile_options": faiss.get_compile_options(),
        "faiss_omp_threads": faiss.omp_get_max_threads(),
    }


def dense(d, threads):
    """Exact top-10 over the same normalised vectors: numpy, faiss `IndexFlatIP`, usearch
    (exact), and faiss's closest equivalent of agentmem's scan: an 8-bit scalar-quantised
    scan (`IndexScalarQuantizer`, QT_8bit) whose candidates `IndexRefineFlat` re-ranks
    exactly in f32. Every tool answers the whole batch of queries; its top-10 ids go to
    `compare.py`, which checks them against numpy's on every query."""
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(threads)
    rows = np.ascontiguousarray(read_vectors(d, "vectors.f32"), dtype=np.float32)
    queries = np.ascontiguousarray(read_vectors(d, "dense_queries.f32"), dtype=np.float32)
    n = len(rows)
    single = queries[:100]

    def report(tool, search_one, search_batch, build_us, bytes_per_vector, extra=None):
        samples = []
        for q in single:
            t = time.perf_counter()
            search_one(q)
            samples.append((time.perf_counter() - t) * 1e6)
        p50, p95 = percentiles(samples)
        t = time.perf_counter()
        top = search_batch(queries)
        batch = (time.perf_counter() - t) * 1e6 / len(queries)
        emit(tool, {"single_p50_us": p50, "single_p95_us": p95, "batch_per_query_us": batch,
                    "build_us": build_us, "bytes_per_vector": bytes_per_vector,
                    "batch_size": len(queries), "threads": threads, **(extra or {}),
                    "top10": [list(map(int, r)) for r in top]})

    def np_one(q):
        s = rows @ q
        best = np.argpartition(-s, K)[:K]
        return best[np.argsort(-s[best], kind="stable")]

    def np_batch(qs):
        s = qs @ rows.T
        best = np.argpartition(-s, K, axis=1)[:, :K]
        order = np.argsort(-np.take_along_axis(s, best, axis=1), axis=1, kind="stable")
        return np.take_along_axis(best, order, axis=1)

    # numpy and usearch (exact) scan the f32 array itself: its size is their memory.
    report("numpy", np_one, np_batch, 0.0, rows.nbytes / n, {"blas": blas_info()})

    def faiss_peer(tool, make, extra=None):
        gc.collect()
        before = resident()
        t = time.perf_counter()
        index = make()
        build = (time.perf_counter() - t) * 1e6
        size = (resident() - before) / n
        report(tool, lambda q: index.search(q.reshape(1, -1), K),
               lambda qs: index.search(qs, K)[1], build, size, extra)
        del index
        gc.collect()

    def flat():
        index = faiss.IndexFlatIP(DIM)
        index.add(rows)
        return index

    faiss_peer("faiss IndexFlatIP", flat)

    k_factor = 4
    keep = []

    def sq8_refine():
        sq = faiss.IndexScalarQuantizer(DIM, faiss.ScalarQuantizer.QT_8bit,
                                        faiss.METRIC_INNER_PRODUCT)
        index = faiss.IndexRefineFlat(sq)
        index.k_factor = k_factor
        index.train(rows)
        index.add(rows)
        keep.append(sq)  # the wrapper does not own its base index
        return index

    faiss_peer("faiss SQ8 + IndexRefineFlat", sq8_refine,
               {"k_factor": k_factor, "candidates_rescored": k_factor * K})

    from usearch.index import MetricKind, search

    report("usearch exact",
           lambda q: search(rows, q, K, MetricKind.IP, exact=True, threads=threads),
           lambda qs: search(rows, qs, K, MetricKind.IP, exact=True, threads=threads).keys,
           0.0, rows.nbytes / n)


def facts(d):
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    facts = lines(d, "facts.txt")
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=DIM))
    store.add_texts(facts[:1000])
    samples = []
    for i, f in enumerate(facts[1000:]):
        query = facts[(i * 7) % 1000]
        t = time.perf_counter()
        store.add_texts([f])
        store.similarity_search(query, k=5)
        samples.append((time.perf_counter() - t) * 1e6)
    p50, p95 = percentiles(samples)
    emit("langchain-core InMemoryVectorStore", {"turn_p50_us": p50, "turn_p95_us": p95})


def ulid():
    """A ULID as agentmem's messages carry (48-bit milliseconds, 80 random bits, Crockford
    base32, 26 characters)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(alphabet[(n >> (5 * i)) & 31] for i in reversed(range(26)))


def sqlite(d):
    """The writes agentmem's SQLite store does per turn, written by hand with the same
    schema (its migrations' `conversations` and `events` tables: foreign key with ON
    DELETE CASCADE, WITHOUT ROWID, the `message_id` column and its partial index) and the
    same connection settings (journal_mode=WAL, synchronous=NORMAL, foreign_keys=ON,
    busy timeout 10 s): one IMMEDIATE transaction that reads the conversation's last seq,
    inserts each message unless its id is already logged (an index probe, then the
    insert: the same statements agentmem runs), and bumps the last seq; each body is the same versioned JSON
    agentmem writes (`{"v": 1, "data": {"type": "message", "message": {...}}}`, the
    message's ULID and RFC 3339 time included). Then every event loaded in order."""
    texts = lines(d, "messages.txt")
    path = os.path.join(tempfile.mkdtemp(), "peer.db")
    db = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    db.executescript("""
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY NOT NULL, last_seq INTEGER NOT NULL, created_us INTEGER NOT NULL);
        CREATE TABLE events (
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL, at_us INTEGER NOT NULL, body TEXT NOT NULL,
            message_id TEXT,
            PRIMARY KEY (conversation_id, seq)) WITHOUT ROWID;
        CREATE INDEX events_by_message ON events (conversation_id, message_id)
            WHERE message_id IS NOT NULL;
    """)
    samples = []
    for i in range(1000):
        # Built before the clock starts, as agentmem's messages are.
        events = [(ulid(), "user", texts[2 * i]), (ulid(), "assistant", texts[2 * i + 1])]
        stamp = datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
        events = [(mid, {"type": "message", "message": {
            "id": mid, "role": role, "content": text, "created_at": stamp}})
            for mid, role, text in events]
        t = time.perf_counter()
        bodies = [(mid, json.dumps({"v": 1, "data": e}, separators=(",", ":")))
                  for mid, e in events]
        now = time.time_ns() // 1000
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT last_seq FROM conversations WHERE id = ?", ("c",)).fetchone()
        if row is None:
            db.execute("INSERT INTO conversations (id, last_seq, created_us) VALUES (?, 0, ?)",
                       ("c", now))
            last = 0
        else:
            last = row[0]
        for mid, body in bodies:
            if db.execute(KNOWN, ("c", mid)).fetchone() is None:
                last += 1
                db.execute(INSERT_EVENT, ("c", last, now, body, mid))
        db.execute("UPDATE conversations SET last_seq = ? WHERE id = ?", (last, "c"))
        db.execute("COMMIT")
        samples.append((time.perf_counter() - t) * 1e6)
    p50, p95 = percentiles(samples)
    t = time.perf_counter()
    loaded = [json.loads(b) for (b,) in db.execute(
        "SELECT body FROM events WHERE conversation_id = ? ORDER BY seq", ("c",))]
    load = (time.perf_counter() - t) * 1e6
    db.close()
    emit("python sqlite3", {"append_p50_us": p50, "append_p95_us": p95, "load_us": load,
                            "events": len(loaded), "sqlite_version": sqlite3.sqlite_version,
                            "durability": "journal_mode=WAL, synchronous=NORMAL"})


# agentmem's statements (memory-stores/src/sqlite/conversation.rs): is the message
# already logged in the conversation, and the insert.
KNOWN = "SELECT 1 FROM events WHERE conversation_id = ?1 AND message_id = ?2 LIMIT 1"
INSERT_EVENT = ("INSERT INTO events (conversation_id, seq, at_us, body, message_id) "
                "VALUES (?1, ?2, ?3, ?4, ?5)")


def embed(d, threads):
    """One short query at a time through ONNX Runtime: the same model (the ONNX graph
    `onnx_bert.py` writes from the model directory agentmem loads, then fused by ONNX
    Runtime's BERT optimiser: Attention, SkipLayerNormalization, BiasGelu), the same
    tokenizer file (Hugging Face `tokenizers`, no padding, at most 256 tokens as
    agentmem), mean pooling and L2 normalisation in numpy. `threads` intra-op threads,
    one inter-op thread, spinning off, sequential execution, every graph optimisation."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    import onnx_bert

    model_dir = os.environ["AGENTMEM_EMBED_MODEL"]
    path = onnx_bert.fused(model_dir, d)
    queries = lines(d, "embed_queries.txt")
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    types = {i.name: (np.int32 if i.type == "tensor(int32)" else np.int64)
             for i in session.get_inputs()}

    def one(q):
        ids = tok.encode(q).ids
        feed = {"input_ids": np.array([ids], dtype=types["input_ids"])}
        if "attention_mask" in types:
            feed["attention_mask"] = np.ones((1, len(ids)), dtype=types["attention_mask"])
        if "token_type_ids" in types:
            feed["token_type_ids"] = np.zeros((1, len(ids)), dtype=types["token_type_ids"])
        hidden = session.run(None, feed)[0][0]
        v = hidden.mean(axis=0)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    vectors = [one(q) for q in queries]  # the untimed warm-up pass
    samples = []
    for _ in range(10):
        for q in queries:
            t = time.perf_counter()
            one(q)
            samples.append((time.perf_counter() - t) * 1e6)
    p50, p95 = percentiles(samples)
    emit("onnxruntime", {"query_p50_us": p50, "query_p95_us": p95, "samples": len(samples),
                         "threads": threads, "onnxruntime": ort.__version__,
                         "graph": os.path.basename(path),
                         "vectors": [list(map(float, v)) for v in vectors]})


def main():
    workload, d = sys.argv[1], sys.argv[2]
    if workload.startswith("window_"):
        window(d, {"1k": 1000, "10k": 10000, "100k": 100000}[workload[len("window_"):]])
    elif workload in ("sparse", "sparse_threads"):
        sparse(d, THREADS)
    elif workload in ("dense_single", "dense_threads"):
        dense(d, THREADS)
    elif workload == "facts":
        facts(d)
    elif workload == "sqlite":
        sqlite(d)
    elif workload in ("embed_single", "embed_threads"):
        embed(d, THREADS)
    else:
        sys.exit(f"unknown workload {workload}")


if __name__ == "__main__":
    main()
