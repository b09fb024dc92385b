"""An exact pass a newer edit makes moot, in ``kivgraph index --watch``: stop its analyzer and start again.

The watch loop publishes a CANDIDATE generation for an edit at once, then runs the exact pass. An edit saved
while that pass's analyzer runs would otherwise wait for it (seconds on an incremental pass, minutes on a
whole one) before its own CANDIDATE generation. So, while the loop watches, a second watcher listens during
each run; when a relevant change arrives while an analyzer runs for a run that already published its
CANDIDATE generation, the analyzer's process group is killed (the same way out as Ctrl-C: ``Superseded`` is
raised in the main thread through ``children.interrupt``), the CANDIDATE generation keeps serving with its
files pending, and the loop goes on to the next run, which takes both edits. Nothing else is interrupted: a
change that arrives while the run resolves, links or publishes waits for it, and a run that published no
CANDIDATE generation (a rebuild) is never superseded, so a steady stream of edits cannot starve it.
The listener also keeps the newest write it heard (``written_since``): ``indexer.staleness`` drops a
result whose analyzer ran while a file was written, even when the file is back as the run read it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from indexer import children


class Superseded(BaseException):
    """A newer edit arrived while the exact pass's analyzer ran (a BaseException: no analyzer error handler
    may take it for a failure of the analyzer)."""


# File times come from the kernel's coarse clock, a few milliseconds behind time.time(): a write just after a
# moment may carry a time just before it. Counting those is the safe side (a result dropped, never kept).
CLOCK_SLACK = 0.05

_dirty = threading.Event()  # a relevant change arrived since the current run began
_enabled = False  # the current run published its CANDIDATE generation: its exact pass may be superseded
_armed = False  # an analyzer of that pass is running now
_watching = False
_run_started = 0.0  # wall-clock time the current run began (file modification times use the same clock)
_newest_write: tuple[float, str] = (0.0, "")  # the latest write the listener heard: (modification time, path)


def begin_run() -> None:
    """A run starts: it reads the tree afresh, so the changes seen so far are its own."""
    global _run_started
    _run_started = time.time()
    _dirty.clear()


def newer_than_run(batch: Iterable[tuple[Any, str]]) -> bool:
    """Whether a file of ``batch`` was written after the current run began (the run read the others as they
    are now). The listener hears a change up to a debounce after it happened, so the change that started a
    run can reach it once the run is going; only a later write makes the run's exact pass moot. A removed
    file, or one moved in with its old time, does not count: its run may still finish (it never loses an
    edit, the next run takes it)."""
    return _newest_write_in(batch) is not None


def _newest_write_in(batch: Iterable[tuple[Any, str]]) -> tuple[float, str] | None:
    newest: tuple[float, str] | None = None
    for _change, path in batch:
        try:
            written = os.stat(path).st_mtime
        except OSError:
            continue
        if written >= _run_started and (newest is None or written > newest[0]):
            newest = (written, path)
    return newest


def written_since(moment: float) -> str:
    """The path of a file the listener heard written at or after ``moment`` (wall clock), else "".

    The staleness check (``indexer.staleness``) asks this about the time an analyzer started: a file edited
    and put back while the analyzer ran hashes as the run read it, yet the analyzer may have read the edit.
    It can only make a result stale, never vouch for one (content hashes do that); outside ``--watch`` nobody
    listens and it is always "".
    """
    written, path = _newest_write
    return path if path and written >= moment - CLOCK_SLACK else ""


@contextlib.contextmanager
def exact_stage(candidate_published: bool) -> Iterator[None]:
    """The exact pass of a run; its analyzers may be superseded only when a CANDIDATE generation serves."""
    global _enabled
    _enabled = _watching and candidate_published
    try:
        yield
    finally:
        _enabled = False


@contextlib.contextmanager
def analyzer_running() -> Iterator[None]:
    """An analyzer runs for the exact pass: a newer edit (now, or while it runs) stops it."""
    global _armed
    if _enabled and _dirty.is_set():
        raise Superseded()
    _armed = _enabled
    try:
        yield
    finally:
        _armed = False


def _note_write(write: tuple[float, str]) -> None:
    global _newest_write
    if write[0] >= _newest_write[0]:
        _newest_write = write  # one assignment: the main thread reads a whole pair


def _on_signal(_signum: int, _frame: object) -> None:
    if _armed:
        children.interrupt(Superseded())


def listen(batches: Callable[[threading.Event], Iterable[Any]], relevant: Callable[[Any], bool]) -> Callable[[], None]:
    """Start listening for changes in a background thread (``batches(stop)`` yields them); returns the stop.

    A relevant batch marks the run dirty and, while an analyzer may be superseded, signals the main thread
    (SIGUSR1), whose handler raises ``Superseded`` there.
    """
    global _watching
    stop = threading.Event()
    signal.signal(signal.SIGUSR1, _on_signal)

    def run() -> None:
        try:
            for batch in batches(stop):
                if stop.is_set():
                    return
                newest = _newest_write_in(batch) if batch and relevant(batch) else None
                if newest is not None:
                    _note_write(newest)
                    _dirty.set()
                    if _armed:
                        os.kill(os.getpid(), signal.SIGUSR1)
        except Exception as exc:  # a second watcher may be refused (the inotify limit): edits then wait, as before
            print(f"warning: edits saved during an exact pass will wait for it: {exc}", file=sys.stderr)

    thread = threading.Thread(target=run, name="kivgraph-newer-edits", daemon=True)
    _watching = True
    thread.start()

    def stop_listening() -> None:
        global _watching
        _watching = False
        stop.set()

    return stop_listening
