"""The plain writer graphscope's Perfetto export is measured against (benchmarks/perfetto_export.py): what
an engineer writes in an afternoon. SQLite rows streamed, one dict per event, one json.dumps each; the
same tracks (CUDA calls per thread, work per GPU stream) and the same launch flows.

    python benchmarks/plain_perfetto_writer.py EXPORT.sqlite OUT.json
"""

import json
import sqlite3
import sys

db, target = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
names = dict(con.execute("SELECT id, value FROM StringIds"))
work = {"kernel": "CUPTI_ACTIVITY_KIND_KERNEL", "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY"}
work["memset"] = "CUPTI_ACTIVITY_KIND_MEMSET"
tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
work = {cat: table for cat, table in work.items() if table in tables}
every = ["CUPTI_ACTIVITY_KIND_RUNTIME", *work.values()]
starts = [con.execute(f"SELECT min(start) FROM {t}").fetchone()[0] for t in every]
origin = min(s for s in starts if s is not None)
launched = {row[0] for table in work.values() for row in con.execute(f"SELECT correlationId FROM {table}")}
with open(target, "w") as out:
    out.write('{"displayTimeUnit":"ns","traceEvents":[\n')
    first = True

    def emit(event):
        global first
        out.write(("" if first else ",\n") + json.dumps(event, separators=(",", ":")))
        first = False

    query = "SELECT start, end, nameId, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"
    for start, end, name, thread, correlation in con.execute(query):
        pid, tid, ts = (thread >> 24) & 0xFFFFFF, thread & 0xFFFFFF, round((start - origin) / 1000, 3)
        emit({"ph": "X", "cat": "cuda_api", "name": names[name], "pid": pid, "tid": tid, "ts": ts,
              "dur": round((end - start) / 1000, 3)})  # fmt: skip
        if correlation in launched:
            emit({"ph": "s", "cat": "launch", "name": "launch", "id": correlation, "pid": pid, "tid": tid, "ts": ts})
    for cat, table in work.items():
        name = "shortName" if cat == "kernel" else "NULL"
        query = f"SELECT start, end, deviceId, streamId, correlationId, {name} FROM {table} ORDER BY start"
        for start, end, device, stream, correlation, name_id in con.execute(query):
            pid, ts = 1_000_000 + device, round((start - origin) / 1000, 3)
            name = names[name_id][:200] if name_id is not None else cat
            emit({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": stream, "ts": ts,
                  "dur": round((end - start) / 1000, 3)})  # fmt: skip
            emit({"ph": "f", "bp": "e", "cat": "launch", "name": "launch", "id": correlation, "pid": pid,
                  "tid": stream, "ts": ts})  # fmt: skip
    out.write("\n]}\n")
