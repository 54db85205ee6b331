"""Seeds `agentmem serve` for the load run: SESSIONS working-memory sessions of 6 messages
and MEMORIES long-term memories (facts) for the user `prompt-user`.

Usage: python3 seed.py BASE_URL SESSIONS MEMORIES NAMESPACE   (standard library only)
"""

import json
import sys
import urllib.request


def call(method, url, body):
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        if resp.status >= 300:
            raise SystemExit(f"{method} {url}: {resp.status}")


SUBJECTS = ["jazz", "hiking", "museums", "sushi", "chess", "cycling", "opera", "gardening", "poetry",
            "climbing", "tennis", "baking", "photography", "sailing", "astronomy", "pottery", "knitting",
            "surfing", "running", "painting", "Lisbon", "Kyoto", "Porto", "Oslo", "Thai food", "tapas"]
FORMS = ["The user likes {s} ({i})", "The user went to a {s} event in week {i}",
         "The user wants to learn more about {s}, note {i}", "The user's sister mentioned {s} on day {i}"]


def main(base, sessions, memories, ns):
    for i in range(1, sessions + 1):
        messages = []
        for j in range(3):
            messages.append({"role": "user", "content": f"Seed message {j} of session {i}: I like {SUBJECTS[(i + j) % len(SUBJECTS)]}"})
            messages.append({"role": "assistant", "content": f"Noted, {SUBJECTS[(i + j) % len(SUBJECTS)]} it is."})
        call("PUT", f"{base}/v1/working-memory/s{i}?namespace={ns}&user_id=u{i}",
             {"messages": messages, "namespace": ns, "user_id": f"u{i}", "session_id": f"s{i}"})
    batch = []
    for i in range(memories):
        s = SUBJECTS[i % len(SUBJECTS)]
        text = FORMS[(i // len(SUBJECTS)) % len(FORMS)].format(s=s, i=i)
        batch.append({"id": f"m{i}", "text": text, "user_id": "prompt-user", "namespace": ns,
                      "memory_type": "semantic"})
        if len(batch) == 100:
            call("POST", f"{base}/v1/long-term-memory/", {"memories": batch})
            batch = []
    if batch:
        call("POST", f"{base}/v1/long-term-memory/", {"memories": batch})


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
