"""Logging for serve: stderr for people, a rotating JSON-lines event log in the state directory.

stdout belongs to the MCP protocol and is never written to.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import time
from pathlib import Path

from snapshot_format.regular import irregular

LOG_FILENAME = "serve.jsonl"
MAX_LOG_BYTES = 8 << 20
CALLS_LOGGER = "kivgraph.serve.calls"


class _JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class _NotCalls(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(CALLS_LOGGER)


def setup_logging(log_dir: Path, *, level: int = logging.INFO) -> Path | None:
    """stderr (lifecycle) plus ``log_dir/serve.jsonl`` (lifecycle and one event per call, 8 MiB, one rotation).

    Returns the event log path, or None when the directory cannot be written (then stderr only).
    """
    root = logging.getLogger("kivgraph")
    root.setLevel(level)
    root.propagate = False
    for handler in list(root.handlers):
        root.removeHandler(handler)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter("kivgraph serve: %(levelname)s %(message)s"))
    stderr.addFilter(_NotCalls())
    root.addHandler(stderr)
    # The MCP SDK's own warnings go to stderr too, never stdout.
    sdk = logging.getLogger("mcp")
    if not sdk.handlers:
        sdk.addHandler(stderr)
        sdk.setLevel(logging.WARNING)
    path = log_dir / LOG_FILENAME
    damaged = irregular(path) or irregular(path.with_name(f"{path.name}.1"))
    if damaged:  # a FIFO there would block the open for writing: stderr only, and say why
        root.warning("event log disabled: %s", damaged)
        return None
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_LOG_BYTES, backupCount=1, encoding="utf-8", delay=False
        )
    except OSError as exc:
        root.warning("event log disabled: cannot write %s (%s)", path, exc.strerror or exc)
        return None
    file_handler.setFormatter(_JsonLines())
    root.addHandler(file_handler)
    return path
