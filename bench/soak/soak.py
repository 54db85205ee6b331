"""Soak driver for two `agentmem serve` processes on one store (bench/soak/run starts them
and injects the faults). Standard library only.

Usage: python3 soak.py BASE_A BASE_B SECONDS USERS NAMESPACE RESULT_JSON [VERIFY_SECONDS]

USERS simulated users, one thread each, for SECONDS, each sending to its own server
first and to the other one when that fails:

- working memory: PUT of the user's current session with one message more (the append
  pattern of agent-memory-client); a new session every 10 messages;
- long-term create: one episodic memory with an id of the user's;
- long-term search of the user; memory prompt of the user's session with long-term search.

A request that fails (connection error, 5xx, timeout) is tried again, on the other server,
with growing pauses, for up to RETRY_SECONDS: both writes are idempotent (the whole session;
a memory under its id). A request is acknowledged when a server answered it 2xx.

Afterwards it checks, through the servers:
- every session holds exactly the messages of its last acknowledged PUT, each once, in
  order (or those of a later PUT whose answer was lost);
- every acknowledged long-term memory is found exactly once among the user's memories, and
  no user's search ever returned another user's memory;
- no memory prompt of a user ever held another user's text.
The checks of all users must end within VERIFY_SECONDS (default 300): a user whose checks
did not end by then (or failed, a server not answering) is counted as unverified, a failure,
so a run never takes longer than SECONDS + VERIFY_SECONDS and a bit.
It prints the figures and writes them to RESULT_JSON; exit status 1 when a write was lost or
duplicated, a user saw another's data, a request failed after its retries, or a user could
not be checked.
"""

import json
import random
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone

RETRY_SECONDS = 30
# the checks afterwards: one request may take this long (a listing of all of a user's
# memories is slower than a search), all of them VERIFY_SECONDS (an argument)
VERIFY_TIMEOUT = 60
VERIFIERS = 4
SESSION_MESSAGES = 10
SUBJECTS = ["jazz", "hiking", "sushi", "chess", "opera", "tennis", "baking", "sailing",
            "pottery", "surfing", "Lisbon", "Kyoto", "Oslo", "tapas", "violin", "cycling"]
TOKEN = re.compile(r"usr(\d{3})tag")


def token(user):
    return f"usr{user:03d}tag"


class Failed(Exception):
    pass


def request(bases, first, method, path, body, deadline_s=RETRY_SECONDS, timeout=10):
    """(status, parsed body, attempts, failovers), trying the servers in turn until one
    answers below 500 or the deadline passes (then Failed)."""
    data = None if body is None else json.dumps(body).encode()
    start = time.monotonic()
    attempt, pause, failovers = 0, 0.05, 0
    which = first
    last = None
    while True:
        attempt += 1
        req = urllib.request.Request(bases[which] + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read() or b"null"), attempt, failovers
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return e.code, json.loads(e.read() or b"null"), attempt, failovers
            last = f"HTTP {e.code}: {e.read()[:200]!r}"
        except Exception as e:  # connection refused or reset, timeout
            last = f"{type(e).__name__}: {e}"
        if time.monotonic() - start > deadline_s:
            raise Failed(f"{method} {path}: {last}")
        which = 1 - which
        failovers += 1
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


class User(threading.Thread):
    def __init__(self, n, bases, ns, until, stats):
        super().__init__(daemon=True)
        self.n, self.bases, self.ns, self.until, self.stats = n, bases, ns, until, stats
        self.uid = f"soak-{n:03d}"
        self.tok = token(n)
        self.rng = random.Random(n)
        self.sessions = {}        # session id -> {"acked": [ids], "attempted": [ids] or None}
        self.current, self.messages, self.count = None, [], 0
        self.ltm_acked, self.ltm_maybe = set(), set()
        self.leaks = []

    def record(self, op, started, attempts, failovers):
        with self.stats["lock"]:
            self.stats["latency"].setdefault(op, []).append(time.monotonic() - started)
            self.stats["requests"] += attempts
            self.stats["failovers"] += failovers

    def fail(self, op, error):
        with self.stats["lock"]:
            self.stats["failed"].append(f"{self.uid} {op}: {error}")

    def check_tokens(self, what, text):
        for other in set(TOKEN.findall(text)):
            if int(other) != self.n:
                self.leaks.append(f"{self.uid} saw user {other}'s text in {what}")

    def put(self):
        if self.current is None or len(self.messages) >= SESSION_MESSAGES:
            self.current = f"{self.uid}-s{len(self.sessions)}"
            self.messages = []
            self.sessions[self.current] = {"acked": [], "attempted": None}
        self.count += 1
        role = "user" if len(self.messages) % 2 == 0 else "assistant"
        subject = self.rng.choice(SUBJECTS)
        self.messages.append({
            "id": f"{self.uid}-m{self.count}", "role": role,
            "content": f"{self.tok} message {self.count}: I really like {subject}",
            "created_at": datetime.now(timezone.utc).isoformat(),
        })
        ids = [m["id"] for m in self.messages]
        state = self.sessions[self.current]
        state["attempted"] = ids
        body = {"messages": self.messages, "user_id": self.uid, "namespace": self.ns,
                "session_id": self.current}
        started = time.monotonic()
        status, answer, attempts, failovers = request(
            self.bases, self.n % 2, "PUT",
            f"/v1/working-memory/{self.current}?namespace={self.ns}&user_id={self.uid}", body)
        if status != 200:
            raise Failed(f"PUT answered {status}: {answer}")
        self.record("put", started, attempts, failovers)
        state["acked"], state["attempted"] = ids, None

    def create(self):
        self.count += 1
        mid = f"{self.uid}-ltm{self.count}"
        subject = self.rng.choice(SUBJECTS)
        self.ltm_maybe.add(mid)
        body = {"memories": [{"id": mid, "text": f"{self.tok} note {self.count}: went to {subject} class",
                              "user_id": self.uid, "namespace": self.ns, "memory_type": "episodic"}]}
        started = time.monotonic()
        status, answer, attempts, failovers = request(
            self.bases, self.n % 2, "POST", "/v1/long-term-memory/", body)
        if status != 200:
            raise Failed(f"create answered {status}: {answer}")
        self.record("create", started, attempts, failovers)
        self.ltm_acked.add(mid)

    def search(self):
        subject = self.rng.choice(SUBJECTS)
        body = {"text": subject, "user_id": {"eq": self.uid}, "namespace": {"eq": self.ns}, "limit": 20}
        started = time.monotonic()
        status, answer, attempts, failovers = request(
            self.bases, self.n % 2, "POST", "/v1/long-term-memory/search", body)
        if status != 200:
            raise Failed(f"search answered {status}: {answer}")
        self.record("search", started, attempts, failovers)
        for m in answer.get("memories", []):
            if m.get("user_id") != self.uid:
                self.leaks.append(f"{self.uid} got a memory of {m.get('user_id')} from search")
        self.check_tokens("search", json.dumps(answer))

    def prompt(self):
        subject = self.rng.choice(SUBJECTS)
        body = {"query": f"what do I like about {subject}",
                "session": {"session_id": self.current or f"{self.uid}-s0", "user_id": self.uid,
                            "namespace": self.ns},
                "long_term_search": {"text": subject, "user_id": {"eq": self.uid},
                                     "namespace": {"eq": self.ns}, "limit": 5}}
        started = time.monotonic()
        status, answer, attempts, failovers = request(
            self.bases, self.n % 2, "POST", "/v1/memory/prompt", body)
        if status != 200:
            raise Failed(f"prompt answered {status}: {answer}")
        self.record("prompt", started, attempts, failovers)
        self.check_tokens("prompt", json.dumps(answer))

    def run(self):
        ops = [self.put] * 4 + [self.create] * 2 + [self.search] * 2 + [self.prompt] * 2
        while time.monotonic() < self.until:
            op = self.rng.choice(ops)
            try:
                op()
            except Failed as e:
                self.fail(op.__name__, e)
            except Exception as e:  # a bug of the driver or a malformed answer
                self.fail(op.__name__, f"{type(e).__name__}: {e}")

    def verify(self, deadline):
        """(lost, duplicated, extra) writes of this user, as lists of descriptions; Failed
        when the checks pass `deadline` (a time.monotonic())."""
        lost, duplicated, extra = [], [], []

        def left():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failed("not verified in time")
            return min(remaining, VERIFY_TIMEOUT)

        for sid, state in self.sessions.items():
            wait = left()
            status, answer, _, _ = request(
                self.bases, 0, "GET", f"/v1/working-memory/{sid}?namespace={self.ns}&user_id={self.uid}", None,
                deadline_s=wait, timeout=wait)
            if status == 404 and not state["acked"]:
                continue
            if status != 200:
                lost.append(f"{sid}: GET answered {status}")
                continue
            ids = [m["id"] for m in answer.get("messages", [])]
            self.check_tokens("a session", json.dumps(answer))
            if len(ids) != len(set(ids)):
                duplicated.append(f"{sid}: {ids}")
            if ids != state["acked"] and ids != state["attempted"]:
                missing = [i for i in state["acked"] if i not in ids]
                if missing:
                    lost.append(f"{sid}: {missing} missing")
                else:
                    extra.append(f"{sid}: holds {ids}, acknowledged {state['acked']}")
        found = []
        offset = 0
        while True:
            body = {"text": "", "user_id": {"eq": self.uid}, "namespace": {"eq": self.ns},
                    "limit": 1000, "offset": offset}
            wait = left()
            status, answer, _, _ = request(self.bases, 0, "POST", "/v1/long-term-memory/search", body,
                                           deadline_s=wait, timeout=wait)
            if status != 200:
                lost.append(f"long-term search answered {status}")
                break
            memories = answer.get("memories", [])
            for m in memories:
                if m.get("user_id") != self.uid:
                    self.leaks.append(f"{self.uid} got a memory of {m.get('user_id')} in the final search")
            found.extend(m["id"] for m in memories)
            if not answer.get("next_offset") or not memories:
                break
            offset = answer["next_offset"]
        mine = [i for i in found if i.startswith(f"{self.uid}-ltm")]
        for mid in self.ltm_acked:
            n = mine.count(mid)
            if n == 0:
                lost.append(f"long-term {mid}")
            elif n > 1:
                duplicated.append(f"long-term {mid} x{n}")
        for mid in set(mine) - self.ltm_maybe:
            extra.append(f"long-term {mid} was never sent")
        return lost, duplicated, extra


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main(base_a, base_b, seconds, users, ns, result_path, verify_seconds=300.0):
    bases = [base_a, base_b]
    stats = {"lock": threading.Lock(), "latency": {}, "requests": 0, "failovers": 0, "failed": []}
    started = time.monotonic()
    threads = [User(n, bases, ns, started + seconds, stats) for n in range(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    # the servers' background work (indexing, extraction) drains
    time.sleep(3)
    print(f"soak: load done after {elapsed:.0f}s; verifying", file=sys.stderr, flush=True)
    lost, duplicated, extra = [], [], []
    checked = {}
    deadline = time.monotonic() + verify_seconds

    reasons = {}

    def verify(t):
        try:
            checked[t.uid] = t.verify(deadline)
        except Failed as e:
            reasons[t.uid] = str(e)

    todo = list(threads)
    todo_lock = threading.Lock()

    def verifier():
        while True:
            with todo_lock:
                if not todo:
                    return
                t = todo.pop()
            verify(t)

    verifiers = [threading.Thread(target=verifier, daemon=True) for _ in range(VERIFIERS)]
    for v in verifiers:
        v.start()
    for v in verifiers:
        v.join()
    unverified = [f"{t.uid}: {reasons.get(t.uid, 'not checked')}" for t in threads
                  if t.uid not in checked]
    for t in threads:
        if t.uid not in checked:
            continue
        lo, du, ex = checked[t.uid]
        lost += lo
        duplicated += du
        extra += ex
    verified = time.monotonic() - started - elapsed
    leaks = [leak for t in threads for leak in t.leaks]
    answered = sum(len(v) for v in stats["latency"].values())
    result = {
        "users": users, "seconds": round(elapsed, 1), "requests_answered": answered,
        "attempts": stats["requests"], "failovers": stats["failovers"],
        "throughput_rps": round(answered / elapsed, 1),
        "ops": {op: {"count": len(v), "p50_ms": round(percentile(v, 50) * 1000, 2),
                     "p99_ms": round(percentile(v, 99) * 1000, 2)}
                for op, v in sorted(stats["latency"].items())},
        "acknowledged": {"messages": sum(len(s["acked"]) for t in threads for s in t.sessions.values()),
                         "sessions": sum(len(t.sessions) for t in threads),
                         "long_term": sum(len(t.ltm_acked) for t in threads)},
        "verify_seconds": round(verified, 1),
        "failed_requests": len(stats["failed"]), "lost": len(lost), "duplicated": len(duplicated),
        "unexpected": len(extra), "cross_user": len(leaks), "unverified_users": len(unverified),
    }
    with open(result_path, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    for name, items in [("failed", stats["failed"]), ("lost", lost), ("duplicated", duplicated),
                        ("unexpected", extra), ("cross-user", leaks), ("unverified", unverified)]:
        for item in items[:10]:
            print(f"{name}: {item}", file=sys.stderr)
    bad = stats["failed"] or lost or duplicated or extra or leaks or unverified
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6],
         *(float(a) for a in sys.argv[7:8]))
