"""How a kernel was launched, as Nsight Systems exports record it: the launch type, the thread-block
cluster's scheduling policy (the codes of `ENUM_CUDA_KERNEL_LAUNCH_TYPE` in the exports that carry it,
and of CUDA's `cudaClusterSchedulingPolicy`), worded once for every face that shows them."""

from __future__ import annotations

LAUNCH_TYPES = {
    0: "unknown",
    1: "regular",
    2: "cooperative (one device)",
    3: "cooperative (several devices)",
}
"""`launchType` (ENUM_CUDA_KERNEL_LAUNCH_TYPE of a 2025.5 export: Unknown, Regular, Coop Single Device,
Coop Multi Device)."""

CLUSTER_POLICIES = {0: "default", 1: "spread", 2: "load-balancing"}
"""`clusterSchedulingPolicy` (cudaClusterSchedulingPolicy: Default, Spread, LoadBalancing)."""


def launch_type_text(code: int) -> str:
    return LAUNCH_TYPES.get(code, f"code {code}")


def cluster_text(x: int, y: int, z: int, policy: int) -> str | None:
    """A thread-block cluster's shape and scheduling ("2x1x1 blocks, spread"); None without one."""
    if max(x, y, z) <= 0:
        return None
    shape = "x".join(str(max(d, 1)) for d in (x, y, z))
    return f"{shape} blocks" + (
        f", {CLUSTER_POLICIES.get(policy, f'policy {policy}')} scheduling" if policy >= 0 else ""
    )
