"""The identity of the indexer's own code: a digest of its source files, part of every run's input fingerprint.

A release number changes with a release, but what a run produces depends on the code that resolves and joins,
which a development checkout, a patched install or a resolver fix changes without one. With the digest in the
fingerprint, a run on different indexer code never calls its inputs unchanged and skips publication (the
extractor versions and adapter keys still decide what the fact cache reuses: a fact a version did not change
is not recomputed).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_ROOTS = ("indexer", "snapshot_format")


@functools.cache
def code_digest() -> str:
    """blake2b over the relative path and bytes of every ``.py`` file of the indexer and the format, in order."""
    base = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=16)
    for root in _ROOTS:
        for path in sorted((base / root).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            h.update(path.relative_to(base).as_posix().encode())
            h.update(b"\0")
            try:
                h.update(path.read_bytes())
            except OSError as exc:  # an unreadable file is still a different install than a readable one
                h.update(f"unreadable: {exc.strerror}".encode())
            h.update(b"\0")
    return h.hexdigest()
