"""A chain of kernels launched with programmatic dependent launch (PDL), to be traced (issue #45).

Each kernel of the chain lets its dependent launch at once (`griddepcontrol.launch_dependents`), waits
for its predecessor to finish (`griddepcontrol.wait`), then spins SPIN_NS on the GPU clock. Launched with
cuLaunchKernelEx and CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION on one stream, kernel i+1
starts (in CUPTI's timestamps) before kernel i ends and waits inside; analysis/overlap.py must count that
as overlap on the stream. The chain's first half is launched with the attribute, its second half without
(the control: no overlap expected there), with a sync and a host pause between.

    nsys profile --trace=cuda --sample=none --cpuctxsw=none -o pdl python3 benchmarks/pdl_chain.py
    python3 benchmarks/pdl_chain.py --torch-profile pdl.json.gz    (a PyTorch-profiler trace instead)

Prints, as JSON, the kernels launched each way and the GPU clock each kernel saw at its start and end
(read from a buffer the kernels write), so the overlap can be checked without any trace.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import shutil
import sys
import time
from pathlib import Path

KERNELS = 24  # per half
SPIN_NS = 20_000

PTX = b"""
.version 7.8
.target sm_90
.address_size 64
.visible .entry pdl_step(.param .u64 stamps, .param .u32 index, .param .u64 spin)
{
    .reg .u64 %t0, %t1, %d, %lim, %out, %off;
    .reg .u32 %i, %lane;
    .reg .pred %p, %first;
    mov.u32 %lane, %tid.x;
    setp.eq.u32 %first, %lane, 0;
    mov.u64 %t0, %globaltimer;
    ld.param.u64 %out, [stamps];
    cvta.to.global.u64 %out, %out;
    ld.param.u32 %i, [index];
    mul.wide.u32 %off, %i, 16;
    add.u64 %out, %out, %off;
    @%first st.global.u64 [%out], %t0;
    griddepcontrol.launch_dependents;
    griddepcontrol.wait;
    ld.param.u64 %lim, [spin];
    mov.u64 %t0, %globaltimer;
SPIN:
    mov.u64 %t1, %globaltimer;
    sub.u64 %d, %t1, %t0;
    setp.lt.u64 %p, %d, %lim;
    @%p bra SPIN;
    @%first st.global.u64 [%out+8], %t1;
    ret;
}
"""


def _ok(result, d):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != d.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {err!r}")
    return rest[0] if len(rest) == 1 else (rest or None)


def run() -> dict:
    from cuda.bindings import driver as d

    _ok(d.cuInit(0), d)
    dev = _ok(d.cuDeviceGet(0), d)
    ctx = _ok(d.cuDevicePrimaryCtxRetain(dev), d)
    _ok(d.cuCtxSetCurrent(ctx), d)
    fn = _ok(d.cuModuleGetFunction(_ok(d.cuModuleLoadData(PTX), d), b"pdl_step"), d)
    stream = _ok(d.cuStreamCreate(int(d.CUstream_flags.CU_STREAM_NON_BLOCKING)), d)
    stamps = _ok(d.cuMemAlloc(2 * KERNELS * 16), d)
    name = _ok(d.cuDeviceGetName(128, dev), d).split(b"\0")[0].decode()
    result = {"gpu": name, "kernels": KERNELS, "spin_ns": SPIN_NS}
    for half, programmatic in ((0, True), (1, False)):
        for k in range(KERNELS):
            index = half * KERNELS + k
            attr = d.CUlaunchAttribute()
            attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attr.value.programmaticStreamSerializationAllowed = 1 if programmatic else 0
            config = d.CUlaunchConfig()
            config.gridDimX, config.gridDimY, config.gridDimZ = 4, 1, 1
            config.blockDimX, config.blockDimY, config.blockDimZ = 64, 1, 1
            config.sharedMemBytes = 0
            config.hStream = stream
            config.attrs = [attr]
            config.numAttrs = 1
            args = (
                (int(stamps), index, SPIN_NS),
                (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64),
            )
            _ok(d.cuLaunchKernelEx(config, fn, args, 0), d)
        _ok(d.cuStreamSynchronize(stream), d)
        time.sleep(0.002)
    host = (ctypes.c_uint64 * (4 * KERNELS))()
    _ok(d.cuMemcpyDtoH(host, stamps, 2 * KERNELS * 16), d)
    for half, name in ((0, "programmatic"), (1, "plain")):
        at = [(host[2 * i], host[2 * i + 1]) for i in range(half * KERNELS, (half + 1) * KERNELS)]
        early = [max(0, at[i][1] - at[i + 1][0]) for i in range(len(at) - 1)]  # next began before this ended
        result[name] = {"started_early": sum(e > 0 for e in early), "early_ns": sum(early)}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch-profile", help="trace with torch.profiler into this .json.gz")
    parser.add_argument("-o", "--out", help="write the JSON here too")
    args = parser.parse_args()
    if args.torch_profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            result = run()
        raw = Path(args.torch_profile).with_suffix("")
        prof.export_chrome_trace(str(raw))
        with open(raw, "rb") as src, gzip.open(args.torch_profile, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        raw.unlink()
    else:
        result = run()
    print(json.dumps(result))
    if args.out:
        Path(args.out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
