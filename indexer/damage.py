"""Moving damage aside: what stands where the state directory needs a file of its own is renamed, not deleted.

The renamed copy keeps the time it was found (``factcache.damaged-20261203T141502Z``), so a person can
inspect it later; the command goes on as if the path had been absent. Only the indexer does this, under
its lock.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

DAMAGED = ".damaged-"


def set_aside(path: Path) -> Path:
    """Rename ``path`` to ``<name>.damaged-<UTC time>`` beside it (a free name); the new path."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}{DAMAGED}{stamp}")
    n = 1
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}{DAMAGED}{stamp}-{n}")
    os.rename(path, target)
    return target


def remove_tree(path: Path | str) -> None:
    """Remove a directory tree, or whatever stands in its place (``rmtree`` opens its top: a FIFO would block it)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)
