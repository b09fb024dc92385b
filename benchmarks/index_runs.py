"""One `kivgraph index --json` run of a benchmark's temporary KIVGRAPH_HOME, timed, with its final result."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def index_run(home: Path, env: dict[str, str], *, timeout: float = 3600) -> dict[str, Any]:
    """Wall time, the pipeline's timings and counts, and the per-language index and cache figures."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "index", "--json"],
        cwd=REPO_ROOT,
        env={**env, "KIVGRAPH_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - started
    result = None
    for line in proc.stdout.splitlines():
        event = json.loads(line)
        if event.get("event") == "result":
            result = event["result"]
    if proc.returncode != 0 or not result or not result.get("passed"):
        raise SystemExit(f"index failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return {
        "wall_seconds": round(wall, 3),
        "timings": result["timings"],
        "counts": result["counts"],
        "index": result["index"],
        "cache": result["cache"],
    }


def to_builtins(obj: Any) -> Any:
    """A record as JSON-able builtins."""
    import msgspec

    return msgspec.to_builtins(obj)
