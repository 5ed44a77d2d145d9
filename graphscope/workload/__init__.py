"""Running user workloads in eager and graph mode in a child process, timing them, and nsys integration.

The parent side is this package's modules (runner, session, record, nsys, profiling, sanitizer, divergence,
launch_bench); `child/` is the workload child process, which the parent side never imports (import-linter
contract in pyproject.toml); both speak `protocol.py`."""
