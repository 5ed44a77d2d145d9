"""Shared memory scrubbed before a step: the check compute-sanitizer cannot make (child process only).

compute-sanitizer's initcheck tracks reads of global memory only, and racecheck hazards between
threads; a kernel that reads shared-memory slots it never wrote passes all three tools. Measured on an
H200: a reduction that fills a 1024-float shared tile in `1024 / blockDim.x` strides matched the
reference at block 384 (its unwritten slots held the previous launch's values) and compute-sanitizer
found nothing. So, before one replay of the step, a kernel fills every SM's shared memory with a NaN
pattern (one block per SM at the kernel's opt-in maximum, several waves); a kernel that reads what it
never wrote then reads NaN, and its outputs no longer match.
"""

from __future__ import annotations

from typing import Any

from graphscope.workload.child.live import compare_outputs

SCRUB_SOURCE = r"""
extern "C" __global__ void graphscope_scrub_shared(unsigned int pattern, unsigned int words) {
    extern __shared__ unsigned int slots[];
    for (unsigned int i = threadIdx.x; i < words; i += blockDim.x) slots[i] = pattern;
    __syncthreads();
    if (threadIdx.x == 0 && slots[words - 1] != pattern) slots[0] = 0u;  // keeps the stores
}
"""
NAN_PATTERN = 0x7FC00000  # a quiet float NaN; as an integer, a value no kernel expects
WAVES = 4  # blocks per SM, launched as one grid: the scheduler spreads them over every SM


def scrub_shared(cupy: Any, stream_handle: int) -> int:
    """Fill the shared memory of every SM with NAN_PATTERN on the given stream; returns the bytes a block."""
    device = cupy.cuda.Device()
    attributes = device.attributes
    nbytes = int(attributes.get("MaxSharedMemoryPerBlockOptin", 49152))
    sms = int(attributes["MultiProcessorCount"])
    kernel = cupy.RawKernel(SCRUB_SOURCE, "graphscope_scrub_shared")
    kernel.max_dynamic_shared_size_bytes = nbytes
    stream = cupy.cuda.ExternalStream(stream_handle)
    with stream:
        kernel((sms * WAVES,), (1024,), (cupy.uint32(NAN_PATTERN), cupy.uint32(nbytes // 4)), shared_mem=nbytes)
    return nbytes


def scrubbed_replay(live: Any) -> dict[str, Any]:
    """One replay of the live graph (its current in-place config) right after shared memory was scrubbed:
    {'match', 'note', 'shared_bytes', ...} as compare_outputs gives them."""
    import cupy

    fw = live.fw
    if live.graph is None:
        live.capture_graph()
    live.reset_state()
    nbytes = scrub_shared(cupy, fw.stream_handle())
    fw.launch(live.graph)
    fw.synchronize()
    outputs = compare_outputs(live.reference, fw.snapshot(), live.dtypes)
    return {**outputs, "shared_bytes": nbytes}
