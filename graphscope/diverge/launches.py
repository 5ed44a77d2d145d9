"""One kernel node's launch as plain data, and what differs between two launches of the same node.

A launch (as the workload child reads it from a graph node, workload/child/diverge_gpu.py):

    {"position": 3, "node": 5, "name": "gelu", "grid": [8, 1, 1], "block": [256, 1, 1], "shared_mem": 0,
     "params": [{"offset": 0, "size": 8, "hex": "0000a0c1...", "pointer": True, "memory": "declared"}, ...],
     "param_info": True, "site": "gelu#0", "line": "decoder.py:88", "operator": ..., "module": ...}

`params` comes from the node's argument buffer cut at the offsets and sizes `cuFuncGetParamInfo` gives;
without them (`param_info` False) nothing is decoded. A parameter is a pointer when it is 8 bytes that
point into device memory; `memory` says whose (memory_kinds below).
"""

from __future__ import annotations

import struct
from typing import Any

OPAQUE_BYTES = 64
"""A node whose arguments are one parameter larger than this is one opaque blob (a cuBLASLt kernel takes
a 1,720-byte one, measured on an H100): its scalars and pointers cannot be told apart, so it is not
audited."""

MEMORY_KINDS = {
    "graph_pool": "the graph's own memory pool (allocated during capture)",
    "declared": "a buffer the workload passed or declared (ctx.launch arguments, ctx.outputs)",
    "allocated": "memory allocated by the framework outside the graph's pool (weights, inputs, state)",
    "freed": "memory the allocator holds as free: the buffer it pointed to was released",
    "device": "device memory graphscope cannot attribute",
}
"""Whose memory a pointer argument points into; "freed" is always a finding."""


def scalar_text(hex_bytes: str) -> str:
    """A parameter's bytes as a reader wants them: 4 and 8 bytes as integer and float, others as hex."""
    raw = bytes.fromhex(hex_bytes)
    if len(raw) == 4:
        (integer,) = struct.unpack("<i", raw)
        (real,) = struct.unpack("<f", raw)
        return f"{integer}" if abs(integer) < 1 << 24 else f"{real:.6g} (0x{raw[::-1].hex()})"
    if len(raw) == 8:
        (integer,) = struct.unpack("<q", raw)
        (real,) = struct.unpack("<d", raw)
        return f"{integer}" if abs(integer) < 1 << 40 else f"{real:.9g} (0x{raw[::-1].hex()})"
    if len(raw) in (1, 2):
        return str(int.from_bytes(raw, "little", signed=True))
    return f"{len(raw)} bytes" if len(raw) > 16 else f"0x{raw[::-1].hex()}"


def param_text(param: dict[str, Any]) -> str:
    """'ptr 0x7f3a00001000 (declared)', 'int 4096', '1720 bytes'."""
    if param.get("label") and not param.get("pointer"):  # a copy's size or a memset's value: a plain number
        return str(int.from_bytes(bytes.fromhex(param["hex"]), "little"))
    if param.get("pointer"):
        value = int.from_bytes(bytes.fromhex(param["hex"]), "little")
        return f"ptr 0x{value:x} ({param.get('memory', 'device')})"
    return scalar_text(param["hex"])


def opaque(launch: dict[str, Any]) -> bool:
    """One parameter that is a large blob (cuBLASLt's 1,720 bytes): unauditable."""
    params = launch.get("params") or []
    return len(params) == 1 and int(params[0]["size"]) > OPAQUE_BYTES


def auditable(launch: dict[str, Any]) -> bool:
    """Its parameters were cut at their offsets and are not one opaque blob."""
    return bool(launch.get("param_info")) and not opaque(launch)


def differences(captured: dict[str, Any], reference: dict[str, Any]) -> list[dict[str, Any]]:
    """What differs between the captured launch and the reference one (the eager step's launch at the same
    position): kernel, grid, block, shared memory, each parameter. Each difference says what it is
    ('kernel', 'grid', 'block', 'shared_mem', 'pointer', 'scalar', 'params') and both values as text."""
    found: list[dict[str, Any]] = []
    if captured.get("name") != reference.get("name"):
        found.append({"what": "kernel", "captured": captured.get("name"), "reference": reference.get("name")})
        return found
    for key in ("grid", "block", "shared_mem"):
        if captured.get(key) != reference.get(key):
            found.append({"what": key, "captured": _dim(captured.get(key)), "reference": _dim(reference.get(key))})
    mine, theirs = captured.get("params") or [], reference.get("params") or []
    if len(mine) != len(theirs):
        found.append({"what": "params", "captured": f"{len(mine)} parameters", "reference": f"{len(theirs)}"})
        return found
    for index, (a, b) in enumerate(zip(mine, theirs)):
        if a["hex"] == b["hex"]:
            continue
        kind = "pointer" if a.get("pointer") or b.get("pointer") else "scalar"
        entry = {"what": kind, "index": index, "offset": a["offset"], "captured": param_text(a)}
        if a.get("label"):
            entry["label"] = a["label"]
        if kind == "pointer":
            entry["memory"] = [a.get("memory"), b.get("memory")]
        entry["reference"] = param_text(b)
        if kind == "scalar" and int(a["size"]) > 16:  # a struct: name the first differing bytes
            raw_a, raw_b = bytes.fromhex(a["hex"]), bytes.fromhex(b["hex"])
            first = next((i for i in range(min(len(raw_a), len(raw_b))) if raw_a[i] != raw_b[i]), 0)
            entry["first_byte"] = first
            words = {at: kind for at, kind in (a.get("words") or []) + (b.get("words") or [])}
            word = first - first % 8
            if word in words:  # the first difference is a pointer inside the struct
                entry["what"] = "pointer"
                mine_at, theirs_at = dict(map(tuple, a.get("words") or [])), dict(map(tuple, b.get("words") or []))
                entry["memory"] = [mine_at.get(word), theirs_at.get(word)]
                entry["captured"] = f"ptr 0x{int.from_bytes(raw_a[word : word + 8], 'little'):x} inside the struct"
                entry["reference"] = f"ptr 0x{int.from_bytes(raw_b[word : word + 8], 'little'):x}"
        found.append(entry)
    return found


def difference_text(diff: dict[str, Any]) -> str:
    """'argument 0 (pointer): captured ptr 0x... (freed), eager ptr 0x... (declared)'."""
    what = diff["what"]
    if diff.get("label"):  # a copy's or memset's source, destination, size or value
        where = f"{diff['label']} ({what})"
    elif what in ("pointer", "scalar"):
        where = f"argument {diff['index']} ({what}, offset {diff['offset']}"
        where += f", first differing byte {diff['first_byte']})" if "first_byte" in diff else ")"
    else:
        where = {"shared_mem": "dynamic shared memory", "params": "argument count"}.get(what, what)
    return f"{where}: captured {diff['captured']}, eager {diff['reference']}"


def _dim(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "x".join(str(v) for v in value)
    return str(value)


def launch_text(launch: dict[str, Any]) -> list[str]:
    """The lines that show one launch: kernel, where it came from, configuration, arguments."""
    lines = [str(launch.get("name", "?"))]
    origin = [str(launch[k]) for k in ("site", "line", "operator", "module") if launch.get(k)]
    if origin:
        lines.append("from " + ", ".join(origin))
    if launch.get("grid") is not None:
        shared = launch.get("shared_mem", 0)
        lines.append(f"grid {_dim(launch.get('grid'))}, block {_dim(launch.get('block'))}, shared {shared} B")
    if not launch.get("param_info"):
        lines.append("arguments: not readable (cuFuncGetParamInfo gave no layout)")
    for index, param in enumerate(launch.get("params") or []):
        lines.append(f"  {param_label(param, index)}: {param_text(param)}")
    return lines


def param_label(param: dict[str, Any], index: int) -> str:
    """'arg 3 @24 (4 B)', or a copy's 'source', 'destination', 'bytes'."""
    return str(param["label"]) if param.get("label") else f"arg {index} @{param['offset']} ({param['size']} B)"


def node_title(launch: dict[str, Any] | None, position: int) -> str:
    """'stage3 (#3 in capture order, graph node 5; stage3#0, pipeline.py:63)': # counts the kernel, copy
    and memset nodes, the ones a prefix switches."""
    launch = launch or {}
    where = [f"#{position} in capture order"]
    if launch.get("node") is not None:
        where.append(f"graph node {launch['node']}")
    origin = [str(launch[k]) for k in ("site", "line", "module", "operator") if launch.get(k)]
    text = f"{launch.get('name', '?')} ({', '.join(where)}"
    return text + (f"; {', '.join(origin)})" if origin else ")")
