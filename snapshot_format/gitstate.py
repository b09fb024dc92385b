"""The HEAD of a repository, read from git's files directly (no subprocess, no git): the one git-state reader.

The server reads it on every list_repositories call (the live HEAD against the
indexed one); the indexer reads it for the commit and branch it records.

Only regular files are read, each bounded, and symbolic refs at most a few levels
deep, so a FIFO or a ref loop planted in ``.git`` cannot hang or crash a call.
About two small file reads per repository: ``.git`` (a directory, or a file
``gitdir: <path>`` for worktrees and submodules), ``HEAD``, then the loose ref
or ``packed-refs`` (in the common directory for a linked worktree).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_MAX_READ = 1 << 16
_MAX_PACKED_REFS = 64 << 20


@dataclass(frozen=True)
class Head:
    """What HEAD names now; ``error`` explains an unreadable HEAD."""

    commit: str = ""
    branch: str = ""
    error: str = ""


_MAX_REF_DEPTH = 5  # as git: a symbolic ref may point at a symbolic ref, a few levels deep, never in a loop


def _open_regular(path: Path) -> int:
    """A descriptor on ``path`` only if it is a regular file: a FIFO or device must never block a read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path.name} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_small(path: Path) -> str:
    """At most 64 KiB of a regular file, decoded leniently."""
    fd = _open_regular(path)
    try:
        return os.read(fd, _MAX_READ).decode("utf-8", "replace")
    finally:
        os.close(fd)


def find_git_dir(start: Path) -> Path | None:
    """The git directory of the checkout containing ``start`` (walking up), or None."""
    current = start
    for _ in range(64):
        dot_git = current / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = _read_small(dot_git).strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (current / target)
            return None
        if current.parent == current:
            return None
        current = current.parent
    return None


def _common_dir(git_dir: Path) -> Path:
    try:
        text = _read_small(git_dir / "commondir").strip()
    except OSError:
        return git_dir
    common = Path(text)
    return common if common.is_absolute() else (git_dir / common)


def _resolve_ref(git_dir: Path, ref: str, depth: int = 0) -> str:
    """The commit a ref names: the loose file first, then packed-refs; "" when neither has it."""
    if depth >= _MAX_REF_DEPTH:
        raise OSError(errno.ELOOP, f"symbolic refs nest deeper than {_MAX_REF_DEPTH} levels (a loop?) at {ref}")
    for base in dict.fromkeys((git_dir, _common_dir(git_dir))):
        try:
            value = _read_small(base / ref).strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
        if value.startswith("ref:"):
            return _resolve_ref(git_dir, value[4:].strip(), depth + 1)
        if _SHA.match(value):
            return value
    for base in dict.fromkeys((git_dir, _common_dir(git_dir))):
        packed = base / "packed-refs"
        try:
            fd = _open_regular(packed)
            if os.fstat(fd).st_size > _MAX_PACKED_REFS:
                os.close(fd)
                continue
            with open(fd, "rb") as fh:
                for raw in fh:
                    line = raw.decode("utf-8", "replace").strip()
                    if not line or line[0] in "#^":
                        continue
                    sha, _, name = line.partition(" ")
                    if name == ref and _SHA.match(sha):
                        return sha
        except OSError:
            continue
    return ""


def read_head(root: str | os.PathLike[str]) -> Head:
    """HEAD of the checkout holding ``root``: commit and branch, or the reason it cannot be read."""
    try:
        git_dir = find_git_dir(Path(root))
        if git_dir is None:
            return Head(error="not a git checkout")
        head = _read_small(git_dir / "HEAD").strip()
    except OSError as exc:
        return Head(error=f"cannot read HEAD: {exc.strerror or exc}")
    if head.startswith("ref:"):
        ref = head[4:].strip()
        branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
        try:
            commit = _resolve_ref(git_dir, ref)
        except OSError as exc:
            return Head(branch=branch, error=f"cannot read {ref}: {exc.strerror or exc}")
        if not commit:
            return Head(branch=branch, error=f"{ref} has no commit yet")
        return Head(commit=commit, branch=branch)
    if _SHA.match(head):
        return Head(commit=head)
    return Head(error="HEAD is neither a ref nor a commit")
