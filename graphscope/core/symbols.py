"""The symbol table: every name (API call, kernel, NVTX text) is stored once; tables hold integer ids."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from graphscope.core.table import within
from graphscope.core.text import NAME_LIMIT as NAME_LIMIT  # NumPy-free, where a kept report is written
from graphscope.core.text import elide as elide

_API_VERSION_SUFFIX = re.compile(r"_v\d+$")


class SymbolTable:
    """Maps dense integer ids to strings and back.

    Ids from an export's `StringIds` table are kept as they are where they are dense (every export
    Nsight Systems writes), so event columns need no translation. A trimmed or renumbered export can
    hold a few strings under ids in the millions: then the strings get dense ids and `file_ids` keeps
    the file's (sorted), and `from_file` translates each name column once as it is read. New names are
    appended.
    """

    def __init__(self, strings: Sequence[str] = (), file_ids: np.ndarray | None = None) -> None:
        self._strings: list[str] = list(strings)
        self._ids: dict[str, int] | None = None
        self.file_ids = file_ids

    def from_file(self, ids: np.ndarray) -> tuple[np.ndarray, int]:
        """A name column's file ids as this table's ids (-1 where the file names no string it holds),
        and how many named a missing string. Dense files: the column itself, untouched."""
        if self.file_ids is None or not len(ids):
            return ids, 0
        at = np.minimum(np.searchsorted(self.file_ids, ids), len(self.file_ids) - 1)
        found = self.file_ids[at] == ids
        missing = int(np.count_nonzero(~found & (ids >= 0)))
        return np.where(found, at, -1).astype(ids.dtype), missing

    def file_name(self, file_id: int) -> str:
        """The string the file stores under `file_id`."""
        if self.file_ids is None:
            return self.name(file_id)
        at = int(np.searchsorted(self.file_ids, file_id))
        found = at < len(self.file_ids) and int(self.file_ids[at]) == file_id
        return self._strings[at] if found else f"[unknown #{file_id}]"

    def __len__(self) -> int:
        return len(self._strings)

    def __getitem__(self, symbol_id: int) -> str:
        return self.name(symbol_id)

    def name(self, symbol_id: int) -> str:
        """The string for an id; '[unknown #id]' for an id outside the table (a dangling reference)."""
        if 0 <= symbol_id < len(self._strings):
            return self._strings[symbol_id]
        return f"[unknown #{symbol_id}]"

    def intern(self, text: str) -> int:
        """The id of `text`, adding it if new."""
        ids = self._index()
        found = ids.get(text)
        if found is None:
            found = len(self._strings)
            self._strings.append(text)
            ids[text] = found
        return found

    def lookup(self, text: str) -> int | None:
        """The id of `text` if present, else None."""
        return self._index().get(text)

    def valid(self, ids: np.ndarray) -> np.ndarray:
        """Boolean mask: which ids point inside the table."""
        return (ids >= 0) & (ids < len(self._strings))

    def all_valid(self, ids: np.ndarray) -> bool:
        """Whether every id points inside the table (two reductions, no mask)."""
        return within(ids, len(self._strings))

    def _index(self) -> dict[str, int]:
        if self._ids is None:
            self._ids = {}
            for i, text in enumerate(self._strings):
                self._ids.setdefault(text, i)
        return self._ids


def kernel_short_name(full: str) -> str:
    """A demangled C++ kernel name shortened as Nsight Systems shows it: no return type, parameters,
    template arguments or namespaces ('void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)'
    -> 'vectorized_elementwise_kernel'). Names that are not C++ signatures come back as they are."""
    text = full.strip()
    if text.endswith(")"):  # drop the parameter list: from its matching '(' on
        depth = 0
        for i in range(len(text) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(text[i], 0)
            if depth == 0:
                text = text[:i]
                break
    plain, depth = [], 0
    for char in text:  # drop template arguments, nested or not
        if char == "<":
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif not depth:
            plain.append(char)
    name = "".join(plain).strip().split(" ")[-1].split("::")[-1]
    return name or full


def display_api_name(name: str) -> str:
    """An API name without its version suffix: 'cudaLaunchKernel_v7000' -> 'cudaLaunchKernel'."""
    return _API_VERSION_SUFFIX.sub("", name)


def _template_hint(full: str) -> str:
    """The template arguments of a demangled kernel name, namespaces dropped ('4, FillFunctor<float>, ...')."""
    text = full.strip()
    start = text.find("<")
    if start < 0:
        return ""
    depth, end = 0, len(text)
    for i in range(start, len(text)):
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        if depth == 0:
            end = i
            break
    inner = re.sub(r"\b[A-Za-z_]\w*::", "", text[start + 1 : end])
    return " ".join(inner.split())


def kernel_labels(short_names: list[str], full_names: list[str], width: int = 60) -> list[str]:
    """Row labels for kernels listed by short name: a short name several rows share gets what tells them
    apart (their template arguments, elided; else a number), so three `vectorized_elementwise_kernel`
    rows do not look the same."""
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(short_names):
        groups.setdefault(name, []).append(i)
    labels = list(short_names)
    for name, rows in groups.items():
        if len(rows) < 2:
            continue
        hints = [_template_hint(full_names[i]) for i in rows]
        distinct = len(set(hints)) == len(hints) and all(hints)
        for k, (i, hint) in enumerate(zip(rows, hints), start=1):
            labels[i] = f"{name} ‹{elide(hint, width)}›" if distinct else f"{name} #{k}"
    return labels
