"""Whole-file replacement that a crash cannot leave half-written (the one helper every writer uses).

The bytes go to a temp file beside the target (same directory, so the rename
stays on one file system), are fsynced, renamed over the target, and the
directory is fsynced so the rename itself survives a power loss. A reader sees
the old file or the new one, never a mix. Used for CURRENT and manifests
(indexer publication), kivgraph.toml, and MCP client configs.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fsync_directory(path: Path) -> None:
    """Make the directory's entries (a rename, a new file) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync the directory.

    A failure (disk full, a permission) leaves ``path`` as it was and no temp file behind.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.next")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_directory(path.parent)
