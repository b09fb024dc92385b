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

# A stop signal (SIGINT, SIGTERM) that arrives while Popen is still starting a child would raise inside
# Popen, before the caller holds the process: the child would run on with parent 1. While a child is being
# spawned, the signal handlers of ``kivgraph index`` hand their exception here instead, and it is raised as
# soon as the child is in a block that kills its group on the way out.
_spawning = 0
_pending: list[BaseException] = []


def interrupt(exc: BaseException) -> None:
    """Raise ``exc`` now, or once the child being spawned is held (call from a signal handler)."""
    if _spawning:
        _pending.append(exc)
        return
    raise exc


def _raise_pending() -> None:
    if _pending:
        exc = _pending[0]
        _pending.clear()
        raise exc


@contextlib.contextmanager
def spawned(cmd: list[str], **popen_kwargs: Any) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd`` as the leader of a new process group; the whole group is killed when the block ends.

    A stop signal that arrives while the child starts takes effect inside the block, so the group is killed.
    """
    global _spawning
    _spawning += 1
    try:
        proc = cast("subprocess.Popen[bytes]", subprocess.Popen(cmd, start_new_session=True, **popen_kwargs))
    except BaseException:
        _spawning -= 1
        _raise_pending()  # a stop that came while the child failed to start wins over the failure
        raise
    try:
        _spawning -= 1
        _raise_pending()
        yield proc
    finally:
        kill_group(proc)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of ``proc``'s group (stragglers included) and reap the leader."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(Exception):
            proc.communicate()


def run(cmd: list[str], *, timeout: float, **popen_kwargs: Any) -> tuple[int, bytes, bytes]:
    """Run ``cmd`` in its own process group to completion: (exit code, stdout, stderr).

    Raises OSError when it cannot start and subprocess.TimeoutExpired after ``timeout``; the
    whole group is killed on every way out.
    """
    with spawned(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen_kwargs) as proc:
        stdout, stderr = proc.communicate(timeout=timeout)
        return proc.returncode, stdout, stderr
