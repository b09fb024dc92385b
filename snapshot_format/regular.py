"""Opening the state directory's files so that nothing in their place can hang or mislead a command.

A FIFO opened for reading blocks until a writer comes; a device or a directory reads as something else;
a symbolic link can point anywhere. Every file of the state directory and the configuration is therefore
opened without following a link and without blocking, checked to be a regular file, and only then used;
anything else is an ``IrregularFileError`` that names the path and what is there instead, so callers treat
it as damage with that reason.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path


class IrregularFileError(OSError):
    """A path of the state directory holds something other than a regular file; ``str()`` says what."""

    def __init__(self, reason: str, path: Path | str) -> None:
        super().__init__(errno.EINVAL, reason, str(path))
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def describe(mode: int) -> str:
    """What a file of this mode is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def irregular(path: Path, *, directory: bool = False) -> str:
    """Why ``path`` is not a usable regular file (a directory with ``directory``): "" when it is one or is
    absent. Links are not followed: a link in its place is what it is."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{path} cannot be examined: {exc.strerror or exc}"
    if (stat.S_ISDIR if directory else stat.S_ISREG)(mode):
        return ""
    return f"{path} is {describe(mode)}, not a {'directory' if directory else 'regular file'}"


def open_regular(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """``os.open`` that never blocks on what is in the file's place and refuses anything but a regular file.

    The descriptor is returned in blocking mode. Raises ``IrregularFileError`` for a FIFO, a directory,
    a device or a symbolic link, and the usual ``OSError`` (``FileNotFoundError`` ...) otherwise.
    """
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):  # a link; a directory; a socket
            raise IrregularFileError(irregular(Path(path)) or f"{path}: {exc.strerror}", path) from None
        raise
    try:
        file_mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(file_mode):
            raise IrregularFileError(f"{path} is {describe(file_mode)}, not a regular file", path)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``limit`` + 1 when a limit is given); see ``open_regular``."""
    fd = open_regular(path)
    try:
        chunks = []
        left = -1 if limit is None else limit + 1
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            if left > 0:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
