"""Arguments cut at their offsets: pointers found (plain and inside structs), and what differs named."""

from __future__ import annotations

from graphscope.diverge.audit import audit_launches
from graphscope.diverge.launches import auditable, differences, opaque
from graphscope.workload.child.graph_memory import MemoryMap
from tests.diverge.fake_driver import FakeDriver


def blob(*words: int, size: int = 1720) -> str:
    raw = b"".join(w.to_bytes(8, "little") for w in words)
    return (raw + bytes(size - len(raw))).hex()


def test_pointers_inside_an_opaque_blob_are_found_and_a_moved_one_is_named() -> None:
    drv = FakeDriver()
    a, b, d = drv.malloc(4096), drv.malloc(4096), drv.malloc(4096)
    memory = MemoryMap(drv)
    memory.freeze()
    from graphscope.workload.child.graph_memory import mark_pointers

    first = {"name": "gemm", "grid": [1, 1, 1], "block": [128, 1, 1], "shared_mem": 0, "param_info": True,
             "params": [{"offset": 0, "size": 1720, "hex": blob(7, a, 3, d)}]}
    second = {**first, "params": [{"offset": 0, "size": 1720, "hex": blob(7, b, 3, d)}]}
    found = mark_pointers(first, memory)
    mark_pointers(second, memory)
    assert [key for key, _ in found] == [(0, 8), (0, 24)]  # two words point into device memory, 7 and 3 do not
    assert opaque(first) and not auditable(first)
    (diff,) = differences(first, second)
    assert diff["what"] == "pointer" and diff["first_byte"] // 8 == 1  # in the word at byte 8
    assert diff["captured"] == f"ptr 0x{a:x} inside the struct"
    audit = audit_launches([first], [second])
    assert audit["flagged"] == [0] and audit["audited_nodes"] == 0 and audit["node_share"] == 0.0


def test_a_scalar_change_in_an_opaque_blob_is_not_flagged_and_pool_pointers_may_move() -> None:
    base = {"name": "gemm", "grid": [1, 1, 1], "block": [128, 1, 1], "shared_mem": 0, "param_info": True,
            "params": [{"offset": 0, "size": 1720, "hex": blob(7)}]}
    other = {**base, "params": [{"offset": 0, "size": 1720, "hex": blob(9)}]}
    assert audit_launches([base], [other])["flagged"] == []
    p = {"offset": 0, "size": 8, "pointer": True, "memory": "graph_pool"}
    one = {**base, "params": [{**p, "hex": (4096).to_bytes(8, "little").hex()}]}
    two = {**base, "params": [{**p, "hex": (8192).to_bytes(8, "little").hex()}]}
    assert audit_launches([one], [two])["flagged"] == []
    assert audit_launches([one], [{**two, "params": [{**two["params"][0], "memory": "allocated"}]}])["flagged"] == [0]


def test_times_give_the_share_of_gpu_time_audited() -> None:
    small = {"name": "k", "grid": [1, 1, 1], "block": [1, 1, 1], "shared_mem": 0, "param_info": True,
             "params": [{"offset": 0, "size": 4, "hex": "01000000"}]}
    gemm = {**small, "name": "gemm", "params": [{"offset": 0, "size": 1720, "hex": blob(1)}]}
    audit = audit_launches([small, gemm], [small, gemm], times=[1000.0, 3000.0])
    assert audit["node_share"] == 0.5 and audit["time_share"] == 0.25 and audit["flagged"] == []


def test_a_pointer_into_a_pool_block_reaches_only_to_the_next_pointer() -> None:
    drv = FakeDriver()
    base = drv.malloc(1 << 20)
    memory = MemoryMap(drv)
    memory.add(base, 1 << 20, "graph_pool")  # one free block after capture, holding every intermediate
    memory.add(base + 8192, 4096, "declared", "float32")
    memory.freeze()
    memory.cuts = [base, base + 4096, base + 65536]
    assert (memory.region(base).nbytes, memory.region(base).kind) == (4096, "graph_pool")
    assert memory.region(base + 65536).nbytes == (1 << 20) - 65536  # the last one: to the block's end
    declared = memory.region(base + 8192)
    assert (declared.nbytes, declared.kind, declared.dtype) == (4096, "declared", "float32")
    assert memory.region(12345) is None and memory.region(base + (1 << 21)) is None


def test_at_two_sizes_a_grid_that_stays_while_its_size_argument_changes_is_flagged() -> None:
    from graphscope.diverge.audit import audit_sizes
    from graphscope.text.diverge import render_audit

    def launch(name: str, grid: int, n: int) -> dict:
        return {"name": name, "grid": [grid, 1, 1], "block": [256, 1, 1], "shared_mem": 0, "param_info": True,
                "params": [{"offset": 0, "size": 4, "hex": n.to_bytes(4, "little").hex()}]}

    small = [launch("scale", 1, 256), launch("split", 4, 256), launch("tail", 1, 7)]
    large = [launch("scale", 64, 16384), launch("split", 4, 16384), launch("other", 1, 7)]
    audit = audit_sizes(small, large, (1, 64))
    assert audit["flagged"] == [1] and audit["compared_nodes"] == 2
    (flag,) = audit["nodes"][1]["flags"]
    assert flag["text"] == "grid 4x1x1 at both sizes while argument 0 (scalar, offset 0): at 1 256, at 64 16384"
    text = render_audit({"nodes": [], "kernel_nodes": 3, "audited_nodes": 3, "node_share": 1.0, "sizes": audit})
    assert "at batch sizes 1 and 64: 2 of 3 kernel nodes compared" in text
    assert "split (#1 in capture order)" in text


def test_a_torch_node_gets_the_module_and_operator_of_the_profiled_launch() -> None:
    from types import SimpleNamespace

    from graphscope.diverge.launches import node_title
    from graphscope.workload.child.diverge_gpu import attribute

    profiled = [
        {"kernel": "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >()",
         "module": None, "op": "aten::fill_"},
        {"kernel": "roll_cuda_kernel", "module": "decoder.slot2", "op": "aten::roll"},
    ]
    live = SimpleNamespace(fw=SimpleNamespace(name="torch"), launches=profiled)
    live.operator_launches = lambda: live.launches  # LiveWorkload's, with the profile already taken
    launches = [{"name": "vectorized_elementwise_kernel"}, {"name": "roll_cuda_kernel"}]
    assert attribute(live, launches) is None
    assert launches[1]["module"] == "decoder.slot2" and launches[1]["operator"] == "aten::roll"
    title = node_title({**launches[1], "node": 9}, 1)
    assert title == "roll_cuda_kernel (#1 in capture order, graph node 9; decoder.slot2, aten::roll)"
    live.launches = "RuntimeError: CUPTI unavailable"
    assert attribute(live, [{"name": "k"}]) == "RuntimeError: CUPTI unavailable"


def test_pointers_that_only_moved_inside_the_pool_are_summed_up() -> None:
    from graphscope.text.diverge import difference_lines

    diffs = [
        {"what": "scalar", "index": 1, "offset": 8, "captured": "1", "reference": "2"},
        {"what": "pointer", "index": 2, "offset": 16, "captured": "ptr 0x1", "reference": "ptr 0x2",
         "memory": ["graph_pool", "graph_pool"]},
    ]
    assert difference_lines(diffs, "") == [
        "argument 1 (scalar, offset 8): captured 1, eager 2",
        "1 pointer(s) into the graphs' own pool differ: where each capture put its intermediates, not a fault by "
        "itself",
    ]


def test_bytes_that_differ_between_two_captures_at_one_state_are_not_held_against_the_graph() -> None:
    def node(field: int, scalar: int) -> dict:
        struct = (65536).to_bytes(8, "little") + (65536).to_bytes(8, "little") + field.to_bytes(8, "little")
        return {"name": "cupy_multiply", "grid": [4, 1, 1], "block": [128, 1, 1], "shared_mem": 0, "param_info": True,
                "params": [{"offset": 0, "size": 4, "hex": scalar.to_bytes(4, "little").hex()},
                           {"offset": 8, "size": 24, "hex": struct.hex()}]}

    # CuPy's indexer passes a working field the host never sets: 8 in one capture, 3 in the next
    assert audit_launches([node(8, 1)], [node(5, 1)], control=[node(3, 1)])["flagged"] == []
    assert audit_launches([node(8, 1)], [node(5, 1)])["flagged"] == [0]  # without a control it would be flagged
    flagged = audit_launches([node(8, 2)], [node(5, 1)], control=[node(3, 1)])
    assert flagged["flagged"] == [0] and [f["flag"] for f in flagged["nodes"][0]["flags"]] == ["frozen_scalar"]
