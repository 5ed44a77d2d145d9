"""Ways a real export gets damaged or altered, as functions on an open sqlite3 connection.

Used by the fuzz tests (tests/trace/test_fuzz_exports.py) and by benchmarks/fuzz_exports.py, which
runs thousands of cases. Each mutation names its family, so a failure report says what kind of
damage broke what.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

EVENT_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "NVTX_EVENTS",
    "CUDA_GRAPH_NODE_EVENTS",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
)
SMALL_TABLES = (
    "StringIds",
    "PROCESSES",
    "ThreadNames",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_STREAM",
    "TARGET_INFO_CUDA_DEVICE",
    "META_DATA_CAPTURE",
    "META_DATA_EXPORT",
)
BAD_VALUES: tuple[object, ...] = (
    "0x10",
    "12abc",
    "1e999",
    "",
    "x",
    None,
    2**31,
    2**32 + 7,
    2**40,
    2**63 - 1,
    -(2**63),
    -1,
    -23037,  # negative, yet small enough for every narrowed column type
    1.5,
    1e308,
    float("nan"),
    b"\x00\xff",
)
ROWIDS = (2**40, 2**62, 2**63 - 1, -1, -(2**40), 0)


@dataclass(frozen=True)
class Mutation:
    family: str
    detail: str
    apply: Callable[[sqlite3.Connection], None]

    def __str__(self) -> str:
        return f"{self.family}: {self.detail}"


def tables(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def loosen(conn: sqlite3.Connection, table: str) -> None:
    """Rebuild a table without its constraints (NOT NULL, PRIMARY KEY), rows in the same order: a file
    damaged or written by another tool has no such guarantees."""
    conn.execute(f'CREATE TABLE "{table}_loose" AS SELECT * FROM "{table}" ORDER BY rowid')
    conn.execute(f'DROP TABLE "{table}"')
    conn.execute(f'ALTER TABLE "{table}_loose" RENAME TO "{table}"')


def _forcing(conn: sqlite3.Connection, table: str, sql: str, params: tuple = ()) -> None:
    try:
        conn.execute(sql, params)
    except (sqlite3.IntegrityError, sqlite3.OperationalError):
        loosen(conn, table)
        conn.execute(sql, params)


def set_value(table: str, column: str, value: object, rows: str = "first") -> Mutation:
    """One row's (or every row's) value replaced."""
    where = {"first": "rowid = (SELECT min(rowid) FROM {t})", "all": "1", "some": "rowid % 3 = 0"}[rows]

    def apply(conn: sqlite3.Connection) -> None:
        _forcing(conn, table, f'UPDATE "{table}" SET "{column}" = ? WHERE {where.format(t=table)}', (value,))

    return Mutation("bad value", f"{table}.{column} = {value!r} ({rows})", apply)


def set_rowid(table: str, rowid: int) -> Mutation:
    """A rowid far from the others: a gap (or a negative rowid)."""

    def apply(conn: sqlite3.Connection) -> None:
        conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))
        conn.execute(f'UPDATE "{table}" SET rowid = ? WHERE rowid = (SELECT max(rowid) FROM "{table}")', (rowid,))

    return Mutation("rowid gap", f"{table} rowid -> {rowid}", apply)


def delete_rows(table: str, modulo: int) -> Mutation:
    def apply(conn: sqlite3.Connection) -> None:
        conn.execute(f'DELETE FROM "{table}" WHERE rowid % {modulo} = 1')

    return Mutation("rowid gap", f"{table}: every {modulo}th row deleted", apply)


def add_column(table: str, name: str, value: object = "7") -> Mutation:
    """A column added by another tool (an explicit `rowid` shadows the real one)."""

    def apply(conn: sqlite3.Connection) -> None:
        conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{name}"')
        conn.execute(f'UPDATE "{table}" SET "{name}" = ?', (value,))

    return Mutation("extra column", f"{table}.{name} = {value!r}", apply)


def drop_column(table: str, column: str) -> Mutation:
    def apply(conn: sqlite3.Connection) -> None:
        _forcing(conn, table, f'ALTER TABLE "{table}" DROP COLUMN "{column}"')

    return Mutation("missing column", f"{table}.{column} dropped", apply)


def recase(table: str) -> Mutation:
    """Table and column names in another case (SQLite matches names without regard to case)."""

    def apply(conn: sqlite3.Connection) -> None:
        for column in columns(conn, table):
            conn.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{column}" TO "{column.upper()}"')
        conn.execute(f'ALTER TABLE "{table}" RENAME TO "{table.lower()}_tmp"')
        conn.execute(f'ALTER TABLE "{table.lower()}_tmp" RENAME TO "{table.lower()}"')

    return Mutation("name case", f"{table} lower-cased, its columns upper-cased", apply)


def without_rowid(table: str) -> Mutation:
    """The table rebuilt as WITHOUT ROWID (no rowid at all)."""

    def apply(conn: sqlite3.Connection) -> None:
        names = columns(conn, table)
        listed = ", ".join(f'"{c}"' for c in names)
        conn.execute(f'CREATE TABLE "{table}_wr" (_k INTEGER PRIMARY KEY, {listed}) WITHOUT ROWID')
        conn.execute(f'INSERT INTO "{table}_wr" SELECT rowid, {listed} FROM "{table}"')
        conn.execute(f'DROP TABLE "{table}"')
        conn.execute(f'ALTER TABLE "{table}_wr" RENAME TO "{table}"')

    return Mutation("without rowid", table, apply)


def empty_table(table: str) -> Mutation:
    def apply(conn: sqlite3.Connection) -> None:
        conn.execute(f'DELETE FROM "{table}"')

    return Mutation("empty table", table, apply)


def shift_string_ids(offset: int) -> Mutation:
    """Every string id moved: event rows now point at nothing, or at other strings."""

    def apply(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE StringIds SET id = -id - 1")  # two steps keep ids unique on the way
        conn.execute("UPDATE StringIds SET id = -id - 1 + ?", (offset,))

    return Mutation("dangling strings", f"StringIds ids shifted by {offset}", apply)


NAME_COLUMNS = {
    "CUPTI_ACTIVITY_KIND_RUNTIME": ("nameId",),
    "CUPTI_ACTIVITY_KIND_DRIVER": ("nameId",),
    "CUPTI_ACTIVITY_KIND_KERNEL": ("shortName", "demangledName", "mangledName"),
    "NVTX_EVENTS": ("textId",),
    "ThreadNames": ("nameId",),
    "CUDA_GRAPH_NODE_EVENTS": ("nameId",),
    "CUDA_GRAPH_EVENTS": ("nameId",),
    "OSRT_API": ("nameId",),
}


def sparse_string_ids(factor: int) -> Mutation:
    """StringIds renumbered to sparse ids (each id times `factor`) and every column that names a string
    updated alike: what trimmed or renumbered exports hold. The file means exactly what it meant."""

    def apply(conn: sqlite3.Connection) -> None:
        present = set(tables(conn))
        for table, names in NAME_COLUMNS.items():
            if table in present:
                for column in set(names) & set(columns(conn, table)):
                    conn.execute(f'UPDATE "{table}" SET "{column}" = "{column}" * ? WHERE "{column}" >= 0', (factor,))
        conn.execute("UPDATE StringIds SET id = id * ?", (factor,))

    return Mutation("sparse strings", f"StringIds ids times {factor}, references renumbered", apply)


def typed_column(table: str, column: str, declared: str, expression: str) -> Mutation:
    """A column re-declared (TEXT, REAL, or no type) and rewritten by an SQL expression of itself: other
    tools store timestamps as text in exponent form, or as REAL with a fraction."""

    def apply(conn: sqlite3.Connection) -> None:
        names = columns(conn, table)
        if column not in names:
            return
        decl = ", ".join(f'"{c}" {declared if c == column else ""}' for c in names)
        conn.execute(f'CREATE TABLE "{table}_typed" ({decl})')
        conn.execute(f'INSERT INTO "{table}_typed" SELECT * FROM "{table}" ORDER BY rowid')
        conn.execute(f'DROP TABLE "{table}"')
        conn.execute(f'ALTER TABLE "{table}_typed" RENAME TO "{table}"')
        conn.execute(f'UPDATE "{table}" SET "{column}" = {expression.format(c=quoted_name(column))}')

    return Mutation("typed timestamps", f"{table}.{column} as {declared or 'untyped'}: {expression}", apply)


def quoted_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


TYPED = (
    ("TEXT", "printf('%.15e', {c})"),  # '1.819366342000000e+09'
    ("REAL", "{c} + 0.25"),
    ("", "CAST({c} AS TEXT)"),
)


def hostile_names() -> Mutation:
    """Names that try to break every report format: line breaks of every kind, Markdown table and HTML
    markup, a spreadsheet formula, quotes and commas."""

    def apply(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE StringIds SET value = '=HYPERLINK(\"http://x\")' || char(13) || '| a | b |' || char(10) "
            "|| '<img src=x onerror=alert(1)>,\"' || value || '\u2028*_`#'"
        )

    return Mutation("hostile names", "formulas, CR/LF, table pipes, HTML, quotes in every string", apply)


def huge_names(size: int) -> Mutation:
    """Every string padded to `size` characters (kernel and NVTX names of a megabyte)."""

    def apply(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE StringIds SET value = value || substr(printf('%.*c', ?, 'x'), 1, ?)", (size, size))

    return Mutation("huge names", f"strings padded by {size} characters", apply)


def markup_names() -> Mutation:
    def apply(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE StringIds SET value = '<script>alert(1)</script>&<b>' || value || '\"'''")

    return Mutation("markup names", "every string wrapped in HTML", apply)


def wal_mode() -> Mutation:
    def apply(conn: sqlite3.Connection) -> None:
        conn.commit()
        conn.execute("PRAGMA journal_mode = WAL")

    return Mutation("journal mode", "WAL", apply)


def all_mutations(conn: sqlite3.Connection) -> list[Mutation]:
    """Every mutation that applies to this export's tables (a few hundred)."""
    present = set(tables(conn))
    found: list[Mutation] = [shift_string_ids(1), shift_string_ids(1 << 20), shift_string_ids(-(1 << 40))]
    found += [shift_string_ids(1 << 21), sparse_string_ids(27_000), sparse_string_ids(1 << 30)]
    found += [huge_names(1 << 20), markup_names(), hostile_names(), wal_mode()]
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        if table in present:
            found += [typed_column(table, c, kind, how) for c in ("start", "end") for kind, how in TYPED]
    for table in (*EVENT_TABLES, *SMALL_TABLES):
        if table not in present:
            continue
        names = columns(conn, table)
        found += [empty_table(table), recase(table), add_column(table, "rowid"), add_column(table, "oid", "x")]
        found += [set_rowid(table, r) for r in ROWIDS] + [delete_rows(table, 2), without_rowid(table)]
        for column in names:
            found += [set_value(table, column, v) for v in BAD_VALUES]
            found.append(drop_column(table, column))
        if names:
            found.append(set_value(table, names[0], None, rows="all"))
    return found
