"""Fault-injection hooks for the crash tests: stop or kill this process at a named point.

``KIVGRAPH_FAULT_KILL_AT=<point>`` sends SIGKILL to the indexer the first time it
reaches ``<point>``; ``<point>#<n>`` waits for the n-th time (1-based), so a test
can kill in the middle of a phase that passes the point once per file.
``KIVGRAPH_FAULT_STOP_AT`` sends SIGSTOP instead (the process keeps its locks).
Points: ``discover``, ``extract``, ``cache.write``, ``analyze`` and the
publication steps in ``indexer.publish.PUBLISH_STEPS``. Unset, a hook is one
dictionary lookup.
"""

from __future__ import annotations

import collections
import os
import signal

POINTS = ("discover", "extract", "cache.write", "analyze")
_hits: collections.Counter[str] = collections.Counter()


def _wanted(variable: str, point: str) -> bool:
    spec = os.environ.get(variable)
    if not spec:
        return False
    name, _sep, nth = spec.partition("#")
    if name != point:
        return False
    return _hits[point] == (int(nth) if nth.isdigit() else 1)


def fault_point(point: str) -> None:
    """Crash-test hook: SIGKILL (or SIGSTOP) here when the environment asks for this point."""
    _hits[point] += 1
    if _wanted("KIVGRAPH_FAULT_KILL_AT", point):
        os.kill(os.getpid(), signal.SIGKILL)
    if _wanted("KIVGRAPH_FAULT_STOP_AT", point):
        os.kill(os.getpid(), signal.SIGSTOP)
