"""What torch.profiler's `events()` carries for the user's line of an operator (GPU): stacks on operator
events with `with_stack=True` alone and with the verbose experimental config, Python-function events and
whether they are operators' parents. Prints one JSON object per configuration.

    python benchmarks/probe_profiler_stacks.py
"""

from __future__ import annotations

import json


def probe(verbose: bool) -> dict[str, object]:
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()
    x = torch.randn(4, 64, device="cuda")
    model(x)
    torch.cuda.synchronize()
    config = torch._C._profiler._ExperimentalConfig(verbose=True) if verbose else None
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, with_stack=True, record_shapes=True,
                                experimental_config=config) as prof:  # fmt: skip
        model(x)
        torch.cuda.synchronize()
    events = list(prof.events())
    launching = [e for e in events if getattr(e, "kernels", None)]
    chain = []
    current = launching[0] if launching else None
    while current is not None and len(chain) < 12:
        chain.append([str(current.name)[:80], len(getattr(current, "stack", []) or [])])
        current = getattr(current, "cpu_parent", None)
    return {
        "torch": torch.__version__,
        "verbose": verbose,
        "events": len(events),
        "with_stack": sum(1 for e in events if getattr(e, "stack", None)),
        "python_function": sum(1 for e in events if getattr(e, "is_python_function", False)),
        "launching": len(launching),
        "launching_with_stack": sum(1 for e in launching if getattr(e, "stack", None)),
        "first_stack": [str(f) for f in (getattr(launching[0], "stack", None) or [])][:6] if launching else [],
        "parent_chain": chain,
    }


if __name__ == "__main__":
    for verbose in (False, True):
        try:
            print(json.dumps(probe(verbose)))
        except Exception as exc:  # one configuration failing must not hide the other
            print(json.dumps({"verbose": verbose, "error": f"{type(exc).__name__}: {exc}"[:300]}))
