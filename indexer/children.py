"""Analyzer subprocesses in their own process group, killed with the whole group on every exit path.

An analyzer (scip-python, scip-typescript, the Go helper) starts node or go
workers of its own. Starting it in a new session and killing that group when
the caller leaves — normal return, timeout, an exception, or the SIGINT /
SIGTERM that ``kivgraph index`` turns into an exception — leaves no analyzer
running with parent 1.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from typing import Any, cast


def spawn(cmd: list[str], **popen_kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``cmd`` as the leader of a new process group (use with ``reaped``)."""
    return cast("subprocess.Popen[bytes]", subprocess.Popen(cmd, start_new_session=True, **popen_kwargs))


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of ``proc``'s group (stragglers included) and reap the leader."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(Exception):
            proc.communicate()


@contextlib.contextmanager
def reaped(proc: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """Kill ``proc``'s process group when the block ends, however it ends."""
    try:
        yield proc
    finally:
        kill_group(proc)


def run(cmd: list[str], *, timeout: float, **popen_kwargs: Any) -> tuple[int, bytes, bytes]:
    """Run ``cmd`` in its own process group to completion: (exit code, stdout, stderr).

    Raises OSError when it cannot start and subprocess.TimeoutExpired after ``timeout``; the
    whole group is killed on every way out.
    """
    proc = spawn(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen_kwargs)
    with reaped(proc):
        stdout, stderr = proc.communicate(timeout=timeout)
        return proc.returncode, stdout, stderr
