#!/usr/bin/env python3
"""The input of bench/audit.sh: a file of IDs and the claim history they
are judged against, written into an etcd through its JSON gateway.

Usage: audit-data.py IDS_FILE ETCD_URL COUNT

Every slot of the Twitter layout (1,024) was held by 16 claims in turn,
each for an hour from 2024-01-01 on; the IDs are spread evenly over the
slots and claims, at times inside each claim. 1,000 IDs are written twice
(planted duplicates) and 100 carry a time between two claims of their
slot (issued by no known holder). IDs come in a shuffled order, as a table
read without ORDER BY would give them.
"""

import base64
import json
import random
import sys
import urllib.request

EPOCH = 1288834974657
START = 1704067200000  # 2024-01-01T00:00:00Z
HOUR = 3_600_000
SLOTS = 1024
CLAIMS = 16
FLEET = "audit"


def put(url, key, value):
    body = json.dumps({
        "key": base64.b64encode(key.encode()).decode(),
        "value": base64.b64encode(value.encode()).decode(),
    }).encode()
    request = urllib.request.Request(f"{url}/v3/kv/put", data=body, method="POST")
    urllib.request.urlopen(request).read()


def history(slot):
    records = []
    for generation in range(1, CLAIMS + 1):
        start = START + (generation - 1) * HOUR
        # Each claim ended at its hour's end, 10 s before the next began.
        last = start + HOUR - 10_000
        records.append({
            "generation": generation,
            "holder": f"host=web-{slot % 64} pid={1000 + generation} listen=10.0.{slot // 256}.{slot % 256}:8080 started=2024-01-01T00:00:00.000Z",
            "version": "0.1.0",
            "session": f"lease {slot:x}{generation:x}",
            "start_ms": start,
            "floor_ms": start - 10_001 if generation > 1 else None,
            "end_ms": last + 5,
            "last_ms": last,
            "ended": "release",
        })
    return {"v": 1, "records": records}


def main():
    path, url, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    put(url, f"/snowmint/{FLEET}/layout", f"41/5/5/12@{EPOCH}")
    for slot in range(SLOTS):
        put(url, f"/snowmint/{FLEET}/claims/{slot}", json.dumps(history(slot)))
        put(url, f"/snowmint/{FLEET}/hwm/{slot}", str(START + CLAIMS * HOUR))
    rng = random.Random(7)
    per_claim = count // (SLOTS * CLAIMS) + 1
    ids = []
    for slot in range(SLOTS):
        for generation in range(CLAIMS):
            base = START + generation * HOUR
            for n in range(per_claim):
                ms = base + n * 5_000 + rng.randrange(4_000)
                ids.append(((ms - EPOCH) << 22) | (slot << 12) | rng.randrange(4096))
    ids = ids[:count - 1_100]
    ids.extend(ids[:1_000])
    for n in range(100):
        # Between a claim's last mark and the next one's start.
        ms = START + HOUR - 5_000
        ids.append(((ms - EPOCH) << 22) | (n << 12) | n)
    rng.shuffle(ids)
    with open(path, "w") as out:
        out.write("\n".join(map(str, ids)))
        out.write("\n")


if __name__ == "__main__":
    main()
