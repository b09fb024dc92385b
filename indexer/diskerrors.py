"""Saying what a failed write means: which directory, and whether the disk (or a size limit) is full."""

from __future__ import annotations

import errno

import lmdb

_FULL = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EFBIG: "a file size limit was reached",
}


def write_failure(exc: BaseException, directory: object) -> str:
    """``could not write into DIR: <cause>`` naming a full disk when that is the cause."""
    code = getattr(exc, "errno", None)
    text = str(exc)
    if code in _FULL:
        cause = f"{_FULL[code]} ({exc.strerror or text})"  # type: ignore[attr-defined]
    elif isinstance(exc, lmdb.MapFullError):
        cause = f"the database reached its size limit ({text})"
    elif isinstance(exc, lmdb.Error) and ("Input/output error" in text or "No space" in text or "too large" in text):
        cause = f"the write did not reach the disk, which is usually a full disk ({text})"
    else:
        cause = text or type(exc).__name__
    return f"could not write into {directory}: {cause}"
