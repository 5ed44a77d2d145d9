"""The parent side of a workload child: spawn it, send requests, wait with a timeout, name failures.

A crash, a CUDA fault or a hang in the child ends as a `WorkloadError`; the caller's process (the
GUI, the CLI, the session database) is never touched by user code.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, NoReturn

import graphscope
from graphscope.core.errors import NoGpuError, WorkloadError
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.process import user_environment
from graphscope.core.progress import CancelToken
from graphscope.workload.protocol import decode, describe_error, encode

DEFAULT_TIMEOUT_S = 300.0
PIN_ENV = "GRAPHSCOPE_PIN_CPU"  # the child pins itself to this core: launch speed differs between cores
POLL_S = 0.05


CHILD_ARGUMENT = "_workload-child"  # how a frozen (PyInstaller) graphscope starts its workload child


def child_command() -> list[str]:
    """The command that starts a workload child: `python -m ...`, or the frozen app itself."""
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_ARGUMENT]
    return [sys.executable, "-m", "graphscope.workload.child"]


def child_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours, with graphscope importable even when it is not installed."""
    env = user_environment()
    root = str(Path(graphscope.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def raise_for(error: dict[str, Any]) -> None:
    """Turn a child's error response into the exception the user sees."""
    kind = error.get("kind", "raised")
    message = describe_error(kind, error.get("message", ""))
    if kind == "no_gpu":
        raise NoGpuError(
            f"{message}; graphscope runs workloads on a CUDA GPU with CuPy "
            '(from a checkout: pip install -e ".[cuda13]", or ".[cuda12]" for a CUDA 12 driver)'
        )
    raise WorkloadError(message, kind, error.get("traceback", ""))


class WorkloadSession:
    """One workload loaded in a child process; `request()` runs a command there."""

    def __init__(
        self,
        path: Path,
        config: LaunchConfig | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        cancel: CancelToken | None = None,
        cpu: int | None = None,
        sizes: list[int] | None = None,
    ) -> None:
        self.path = Path(path).resolve()
        self.timeout = timeout
        self.cancel = cancel
        self.stderr_tail: deque[str] = deque(maxlen=200)
        self._responses: queue.Queue[str | None] = queue.Queue()
        self.process = subprocess.Popen(
            child_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_environment({PIN_ENV: str(cpu)} if cpu is not None else None),
            start_new_session=True,
        )
        threading.Thread(target=self._read_responses, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        try:
            self.request("hello", timeout=60)
            self.info = self.request(
                "load", path=str(self.path), config=config.to_json() if config else None, sizes=sizes
            )
        except BaseException:
            self.close()
            raise

    def _read_responses(self) -> None:
        for line in self.process.stdout or ():  # a pipe (Popen with PIPE): never None
            self._responses.put(line)
        self._responses.put(None)

    def _read_stderr(self) -> None:
        for line in self.process.stderr or ():
            self.stderr_tail.append(line.rstrip("\n"))

    def request(self, command: str, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its answer; raise a WorkloadError (or NoGpuError) on failure."""
        if self.process.poll() is not None:
            self._died()
        stdin = self.process.stdin
        assert stdin is not None  # Popen with PIPE
        try:
            stdin.write(encode({"command": command, **fields}))
            stdin.flush()
        except (BrokenPipeError, OSError):
            self._died()
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            if self.cancel is not None and self.cancel.cancelled:
                self.kill()
                self.cancel.check()
            try:
                line = self._responses.get(timeout=POLL_S)
            except queue.Empty:
                if time.monotonic() > deadline:
                    self.kill()
                    raise WorkloadError(
                        describe_error(
                            "timeout",
                            f"{command} took longer than {limit:g} s (a hang?); the workload process was stopped",
                        ),
                        "timeout",
                    ) from None
                continue
            if line is None:
                self._died()
            response = decode(line)
            if response.get("ok"):
                return response["result"]
            raise_for(response.get("error", {}))

    def _died(self) -> NoReturn:
        code = self.process.wait()
        cause = f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        last = next((line for line in reversed(self.stderr_tail) if line.strip()), "")
        raise WorkloadError(
            describe_error("died", cause + (f"; last output: {last}" if last else "")),
            "died",
            "\n".join(self.stderr_tail),
        )

    def kill(self) -> None:
        """Stop the child and everything it started (its own process group)."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.wait()

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(Exception):  # a child that cannot say goodbye is stopped anyway
                self.request("shutdown", timeout=10)
        self.kill()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> WorkloadSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
