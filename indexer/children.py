"""Analyzer subprocesses in their own process group, killed with the whole group on every exit path.

An analyzer (scip-python, scip-typescript, the Go helper) starts node or go
workers of its own. Starting it in a new session and killing that group when
the caller leaves — normal return, timeout, an exception, or the SIGINT /
SIGTERM that ``kivgraph index`` turns into an exception — leaves no analyzer
running with parent 1.

SIGKILL of the indexer (the OOM killer, a CI timeout, ``kill -9``) runs no code of
ours, so the group's leader is a watchdog (``indexer/watchdog.py``) that runs the
analyzer and ends the group when a pipe only the indexer writes reads end-of-file,
which the kernel makes happen however the indexer dies. Each group is also recorded
under the run's scratch directory while it lives; the next run (which holds the
indexer lock, so no other run owns those groups) ends any group a record still
names, once it has checked that the process is the one recorded (its start time).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from snapshot_format.regular import read_regular

_WATCHDOG = str(Path(__file__).with_name("watchdog.py"))
# Read end for the watchdogs, write end held by this process alone (never inherited) until it exits.
_life: tuple[int, int] | None = None
# Where the live groups are recorded (set by the run's scratch directory), or None outside a run.
_groups_dir: Path | None = None

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
    global _spawning, _life
    if _life is None:
        _life = os.pipe()  # both ends close-on-exec: only the watchdogs get the read end, through pass_fds
    report_r, report_w = os.pipe()
    _spawning += 1
    try:
        try:
            proc = cast(
                "subprocess.Popen[bytes]",
                subprocess.Popen(
                    [sys.executable, "-I", "-S", _WATCHDOG, str(_life[0]), str(report_w), *cmd],
                    start_new_session=True,
                    pass_fds=(_life[0], report_w, *popen_kwargs.pop("pass_fds", ())),
                    **popen_kwargs,
                ),
            )
        finally:
            os.close(report_w)
    except BaseException:
        _spawning -= 1
        os.close(report_r)
        _raise_pending()  # a stop that came while the child failed to start wins over the failure
        raise
    try:
        _spawning -= 1
        _record(proc.pid)
        _raise_pending()
        _raise_exec_failure(report_r, proc, cmd[0])
        yield proc
    finally:
        kill_group(proc)


def _raise_exec_failure(report_r: int, proc: subprocess.Popen[bytes], program: str) -> None:
    """Wait for the watchdog to start the analyzer; raise its OSError as Popen would when it could not."""
    try:
        with os.fdopen(report_r, "rb") as report:
            failure = report.read()  # end of file once the analyzer runs (or the watchdog died)
    except OSError:
        return
    if failure.strip().isdigit():
        proc.wait()
        code = int(failure)
        raise OSError(code, os.strerror(code), program)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of ``proc``'s group (stragglers included) and reap the leader."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(Exception):
            proc.communicate()
    _forget(proc.pid)


# --- groups a killed run left -----------------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()  # after the command name, which may hold spaces
    return int(fields[19])


def _record(pid: int) -> None:
    if _groups_dir is None:
        return
    with contextlib.suppress(OSError):
        _groups_dir.mkdir(parents=True, exist_ok=True)
        (_groups_dir / f"{pid}.json").write_text(json.dumps({"pgid": pid, "start": _start_time(pid)}))


def _forget(pid: int) -> None:
    if _groups_dir is not None:
        with contextlib.suppress(OSError):
            (_groups_dir / f"{pid}.json").unlink()


def _members(pgid: int, since: int) -> list[int]:
    """Running processes of group ``pgid`` (and its session) started no earlier than its recorded leader."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        alive = fields[0] not in (b"Z", b"X")  # a zombie holds no memory: nothing to end
        if alive and int(fields[2]) == pgid and int(fields[3]) == pgid and int(fields[19]) >= since:
            found.append(int(entry.name))
    return found


def _recorded_groups(groups_dir: Path) -> Iterator[tuple[Path, int, list[int]]]:
    """(record, group id, running members) of each recorded group that is still the one recorded.

    Still the one recorded: its leader has the recorded start time, or the leader is gone and members of
    its session started after it remain (a process id is not reused while its group lives).
    """
    try:
        records = sorted(groups_dir.glob("*.json"))
    except OSError:
        return
    for path in records:
        members: list[int] = []
        pgid = 0
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            record = json.loads(read_regular(path, limit=4096))
            pgid, since = int(record["pgid"]), record["start"]
            leader = _start_time(pgid)
            if since is not None and (leader is None or leader == since):
                members = _members(pgid, int(since))
        yield path, pgid, members


def leftover_analyzers(groups_dir: Path) -> list[int]:
    """The running processes of analyzer groups a killed run recorded in ``groups_dir`` (nothing is signalled)."""
    return sorted(pid for _path, _pgid, members in _recorded_groups(groups_dir) for pid in members)


def end_leftovers(groups_dir: Path) -> list[int]:
    """End the analyzer groups a killed run recorded in ``groups_dir``; the process ids that were ended.

    Call with the indexer lock held: no live run owns those groups.
    """
    ended: list[int] = []
    for path, pgid, members in list(_recorded_groups(groups_dir)):
        if members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            ended.extend(members)
        with contextlib.suppress(OSError):
            path.unlink()
    return sorted(ended)


@contextlib.contextmanager
def recorded_in(groups_dir: Path) -> Iterator[None]:
    """Record every analyzer group started in the block under ``groups_dir`` while it lives."""
    global _groups_dir
    previous, _groups_dir = _groups_dir, groups_dir
    try:
        yield
    finally:
        _groups_dir = previous


def run(cmd: list[str], *, timeout: float, **popen_kwargs: Any) -> tuple[int, bytes, bytes]:
    """Run ``cmd`` in its own process group to completion: (exit code, stdout, stderr).

    Raises OSError when it cannot start and subprocess.TimeoutExpired after ``timeout``; the
    whole group is killed on every way out.
    """
    with spawned(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen_kwargs) as proc:
        stdout, stderr = proc.communicate(timeout=timeout)
        return proc.returncode, stdout, stderr
