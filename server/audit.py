"""The audit log of ``kivgraph serve --http``: STATE/logs/audit.jsonl, append-only JSON lines, never a secret.

Serve writes nothing but logs (PRODUCT.md §2), so what a token did is recorded here rather than in the token
store: each token's use (at most one line per token a minute, with the first request of each session), and
every ``index_project`` call (token, projects, outcome). ``kivgraph token list`` reads a token's last use
from it (snapshot_format.tokens.last_uses). 8 MiB, one rotation, like the event log.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import threading
import time
from pathlib import Path
from typing import Any

from snapshot_format.regular import irregular
from snapshot_format.tokens import AUDIT_FILENAME

MAX_AUDIT_BYTES = 8 << 20
USE_INTERVAL_SECONDS = 60.0

log = logging.getLogger("kivgraph.serve")


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


class AuditLog:
    """Appends audit events; a directory that cannot be written costs the audit lines, never a request."""

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / AUDIT_FILENAME
        self._lock = threading.Lock()
        self._last_use: dict[str, float] = {}
        self._handler: logging.Handler | None = None
        damaged = irregular(self.path) or irregular(self.path.with_name(AUDIT_FILENAME + ".1"))
        if damaged:  # a FIFO there would block the open for writing
            log.warning("audit log disabled: %s", damaged)
            return
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            self._handler = logging.handlers.RotatingFileHandler(
                self.path, maxBytes=MAX_AUDIT_BYTES, backupCount=1, encoding="utf-8"
            )
        except OSError as exc:
            log.warning("audit log disabled: cannot write %s (%s)", self.path, exc.strerror or exc)

    def record(self, event: str, *, token: str, token_id: str, **fields: Any) -> None:
        """One line: time, event, the token's name and id, and ``fields``."""
        if self._handler is None:
            return
        entry = {"ts": _now(), "event": event, "token": token, "token_id": token_id, **fields}
        line = logging.LogRecord("kivgraph.audit", logging.INFO, "", 0, json.dumps(entry, default=str), None, None)
        with self._lock:
            try:
                self._handler.emit(line)
            except Exception as exc:  # an audit line lost is logged, never a failed request
                log.warning("audit line not written: %s", exc)

    def used(self, token: str, token_id: str, *, session_start: bool = False) -> None:
        """A token made a request: recorded when a session starts, else at most once a minute per token."""
        now = time.monotonic()
        with self._lock:
            last = self._last_use.get(token_id)
            if not session_start and last is not None and now - last < USE_INTERVAL_SECONDS:
                return
            self._last_use[token_id] = now
        self.record("token_used", token=token, token_id=token_id)

    def close(self) -> None:
        if self._handler is not None:
            self._handler.close()
