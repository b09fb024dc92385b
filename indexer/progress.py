"""Progress of an index run as people and programs read it: phase lines with elapsed time, and heartbeats.

``kivgraph index --json`` streams every event as NDJSON (``index_project`` forwards them to the MCP client
as progress notifications). A long analyzer run is one phase with no events of its own, so while it runs a
``Heartbeat`` repeats the phase's event every few seconds with the time spent so far: a client never sees
minutes of silence. On a terminal every event is a line with the elapsed time; elsewhere (CI logs, a pipe)
only the end of each phase is, once, so the output stays short and greppable.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

HEARTBEAT_SECONDS = 2.0
HEARTBEAT_ENV = "KIVGRAPH_HEARTBEAT_SECONDS"  # tests and slow pipes may ask for another pace


def heartbeat_seconds() -> float:
    try:
        value = float(os.environ.get(HEARTBEAT_ENV, HEARTBEAT_SECONDS))
    except ValueError:
        return HEARTBEAT_SECONDS
    return value if value > 0 else HEARTBEAT_SECONDS


@dataclass(frozen=True)
class Progress:
    phase: str
    repository: str
    detail: str
    completed: int
    total: int
    elapsed: float = 0.0  # seconds since the run started (stamped by the reporter when left at 0)


ProgressFn = Callable[[Progress], None]


class Heartbeat:
    """Repeat ``event`` through ``emit`` every ``interval`` seconds until the block ends (a daemon thread).

    Each repetition says how long the phase has been running; ``emit`` must be safe to call from another
    thread (the CLI's reporter takes a lock).
    """

    def __init__(self, emit: ProgressFn, event: Progress, interval: float | None = None) -> None:
        self._emit = emit
        self._event = event
        self._interval = heartbeat_seconds() if interval is None else interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __enter__(self) -> Heartbeat:
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="kivgraph-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            spent = time.monotonic() - self._started
            detail = f"{self._event.detail}: " if self._event.detail else ""
            try:
                self._emit(replace(self._event, detail=f"{detail}running for {spent:.0f}s"))
            except Exception:  # a reader that went away: the run itself reports it
                return


class PhaseLines:
    """Human progress lines: every event on a terminal, each phase's last event once elsewhere."""

    def __init__(self, write: Callable[[str], None], *, terminal: bool) -> None:
        self._write = write
        self._terminal = terminal
        self._lock = threading.Lock()
        self._open: Progress | None = None  # the phase whose end is not printed yet (non-terminal)

    def event(self, p: Progress) -> None:
        with self._lock:
            if self._terminal:
                self._write(_line(p))
                return
            if self._open is not None and (self._open.phase, self._open.repository) != (p.phase, p.repository):
                self._write(_line(self._open))
            self._open = p
            if p.total and p.completed >= p.total:
                self._write(_line(p))
                self._open = None

    def flush(self) -> None:
        with self._lock:
            if self._open is not None:
                self._write(_line(self._open))
                self._open = None


def _line(p: Progress) -> str:
    detail = p.detail or (f"{p.completed}/{p.total}" if p.total > 1 else "")
    return f"[{p.elapsed:7.2f}s] {p.phase:<16} {p.repository:<16} {detail}".rstrip()


def as_json(p: Progress) -> dict[str, Any]:
    return {
        "phase": p.phase,
        "repository": p.repository,
        "detail": p.detail,
        "completed": p.completed,
        "total": p.total,
        "elapsed": round(p.elapsed, 3),
    }
