"""Shared pieces of the fault suite: a small indexed home, damage helpers, process waits without sleeps."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
from pathlib import Path

from snapshot_format.layout import StateLayout, resolve_layout
from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph, write_repo

SOURCE = {
    "pkg/__init__.py": "from .core import run\n",
    "pkg/core.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n",
    "pkg/more.py": "from .core import helper\n\n\ndef more():\n    return helper() + 1\n",
}


def layout_of(home: Path) -> StateLayout:
    return resolve_layout(environ={"KIVGRAPH_HOME": str(home)})


def indexed_home(
    tmp: Path,
    *,
    generations: int = 1,
    files: dict[str, str] | None = None,
    analyzer: bool = False,
    distinct: bool = False,
) -> Path:
    """A KIVGRAPH_HOME with one registered python repository and ``generations`` published generations.

    The exact analyzer is switched off unless asked for (KIVGRAPH_SCIP_PYTHON pointing nowhere), so
    a run takes about a second. Later generations are ``--full`` rebuilds: an unchanged tree is not
    published again otherwise. Such a rebuild links the repository's unchanged layer (one file in every
    generation); ``distinct`` adds a file to the repository before each later run, so each generation has a
    layer of its own (what damage to one generation's files must leave the others).
    """
    repo = write_repo(tmp / "repo", files or SOURCE)
    home = tmp / "home"
    result = run_kivgraph(home, "init", str(repo), "--languages", "python")
    assert result.returncode == 0, result.stderr
    for n in range(generations):
        if distinct and n:
            (repo / "pkg" / f"later_{n}.py").write_text(f"def later_{n}():\n    return {n}\n")
        result = index(home, *(["--full"] if n else []), analyzer=analyzer)
        assert result.returncode == 0, result.stderr
    return home


def no_analyzer_env() -> dict[str, str]:
    return {"KIVGRAPH_SCIP_PYTHON": "/nonexistent/scip-python"}


def index(
    home: Path, *args: str, analyzer: bool = False, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    extra = {} if analyzer else no_analyzer_env()
    return run_kivgraph(home, "index", *args, timeout=timeout, **{**extra, **env})


def spawn_index(home: Path, *args: str, analyzer: bool = False, **env: str) -> subprocess.Popen[bytes]:
    extra = {} if analyzer else no_analyzer_env()
    return subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "index", *args],
        cwd=REPO_ROOT,
        env=kivgraph_env(home, **{**extra, **env}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_stopped(pid: int, timeout: float = 120) -> None:
    """Block (bounded) until our child ``pid`` is stopped by a fault hook's SIGSTOP: waitid, no polling."""
    seen: list[object] = []
    waiter = threading.Thread(
        target=lambda: seen.append(os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOWAIT)), daemon=True
    )
    waiter.start()
    waiter.join(timeout)
    assert seen, f"process {pid} did not stop within {timeout}s"
    info = seen[0]
    assert getattr(info, "si_code", None) == os.CLD_STOPPED, info


def exits(pid: int, timeout: float = 30) -> bool:
    """Whether ``pid`` (not necessarily our child) has exited or does within ``timeout``: its pidfd turns readable."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _w, _x = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


def read_line(stream: object, timeout: float = 120) -> bytes:
    """One line from a child's pipe, waiting at most ``timeout`` for it to arrive."""
    fd = stream.fileno()  # type: ignore[attr-defined]
    buf = b""
    while not buf.endswith(b"\n"):
        ready, _w, _x = select.select([fd], [], [], timeout)
        assert ready, f"no line from the child within {timeout}s (got {buf!r})"
        chunk = os.read(fd, 1)
        if not chunk:
            break
        buf += chunk
    return buf


def flip_bytes(path: Path, offsets: list[int]) -> None:
    """Invert the bytes at ``offsets`` in place (the size does not change)."""
    with open(path, "r+b") as fh:
        for off in offsets:
            fh.seek(off)
            b = fh.read(1)
            fh.seek(off)
            fh.write(bytes([b[0] ^ 0xFF]))
