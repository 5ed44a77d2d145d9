"""Counts computed with plain SQL, independently of graphscope's reader: the oracle for exact counts."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _scalar(conn: sqlite3.Connection, sql: str) -> int:
    return int(conn.execute(sql).fetchone()[0] or 0)


def expected_counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = _tables(conn)
    out: dict[str, int] = {}
    for key, table in (
        ("kernels", "CUPTI_ACTIVITY_KIND_KERNEL"),
        ("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"),
        ("memset", "CUPTI_ACTIVITY_KIND_MEMSET"),
    ):
        present = table in tables
        out[f"{key}.count"] = _scalar(conn, f"SELECT count(*) FROM {table}") if present else 0
        out[f"{key}.total_ns"] = _scalar(conn, f'SELECT sum("end" - start) FROM {table}') if present else 0
    out["memcpy.bytes"] = (
        _scalar(conn, "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY") if out["memcpy.count"] else 0
    )
    runtime = "CUPTI_ACTIVITY_KIND_RUNTIME"
    if runtime in tables:
        base = f"SELECT count(*) FROM {runtime} r JOIN StringIds s ON s.id = r.nameId WHERE r.eventClass <> 67"
        out["api.count"] = _scalar(conn, f"SELECT count(*) FROM {runtime} WHERE eventClass <> 67")
        out["api.launches"] = _scalar(
            conn, base + " AND (s.value LIKE 'cudaLaunchKernel%' OR s.value LIKE 'cuLaunchKernel%')"
        )
        out["api.graph_launches"] = _scalar(
            conn, base + " AND (s.value LIKE 'cudaGraphLaunch%' OR s.value LIKE 'cuGraphLaunch%')"
        )
    else:
        out["api.count"] = out["api.launches"] = out["api.graph_launches"] = 0
    node_rows = [
        f"SELECT globalPid >> 24 AS p, correlationId AS c FROM {t} WHERE graphNodeId IS NOT NULL"
        for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
        if t in tables
    ]
    out["graphs.node_activities"] = sum(_scalar(conn, f"SELECT count(*) FROM ({q})") for q in node_rows)
    node_launches = (
        _scalar(conn, f"SELECT count(*) FROM (SELECT DISTINCT p, c FROM ({' UNION ALL '.join(node_rows)}))")
        if node_rows
        else 0
    )
    whole = (
        _scalar(conn, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
        if "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in tables
        else 0
    )
    out["graphs.launches"] = node_launches + whole
    conn.close()
    return out
