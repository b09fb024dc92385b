"""The working tree of a registered repository against a git revision, read with git itself, read-only.

``get_blast_radius`` with ``changes: {"base": rev}`` needs what git alone knows: the diff of the working tree
against a revision, the untracked files, and the base side's bytes of each changed file. Serve never writes:

- every command runs with ``--no-optional-locks`` (and ``GIT_OPTIONAL_LOCKS=0``), so ``git diff`` does not
  refresh ``.git/index`` or take ``index.lock`` in a repository it only reads; ``core.fsmonitor`` is off (a
  monitor hook is a program the repository's config names), and so are external diff drivers and textconv
  filters (``--no-ext-diff``, ``--no-textconv``): nothing the repository configures is executed;
- no pager, no prompt, no editor; the C locale, so messages are git's own;
- each command has a timeout and an output ceiling, and is killed (its whole process group) past either;
- a revision is resolved to a commit first (``rev-parse --verify``), refused when it could read as an
  option, and only the resolved commit id is passed on;
- paths come from git relative to the repository's registered root (``--relative``: a repository that is a
  directory of a larger checkout sees only its own files), and callers confine them to that root.

The tool functions run in worker threads (``server/app.py``), so a slow git never blocks the event loop.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass

GIT_TIMEOUT_SECONDS = 10.0
MAX_DIFF_BYTES = 4 << 20  # the diff of the working tree against the base
MAX_BLOB_BYTES = 32 << 20  # every base-side file read, together
_REVISION = re.compile(r"^[A-Za-z0-9_./~^@{}:+-]{1,256}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class GitError(Exception):
    """git could not answer; the message says why, for the agent."""


@dataclass(frozen=True)
class WorkingTreeDiff:
    """The working tree of one repository against a commit."""

    commit: str
    diff: str  # unified, -U0, paths relative to the repository root, a/ and b/ prefixes
    untracked: tuple[str, ...]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_EDITOR": "true",
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    return env


def run_git(root: str, *args: str, stdin: bytes = b"", limit: int = MAX_DIFF_BYTES) -> bytes:
    """git's stdout for ``args`` in ``root``; GitError on failure, a timeout or more than ``limit`` bytes."""
    argv = ["git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.quotepath=false", "-C", root, *args]
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_environment(),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise GitError(f"git cannot be run: {exc.strerror or exc}") from None
    try:
        out, err = process.communicate(stdin, timeout=GIT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT_SECONDS:g} seconds") from None
    if len(out) > limit:
        raise GitError(f"git {args[0]} answered more than {limit} bytes; pass a smaller diff as changes.diff")
    if process.returncode != 0:
        message = err.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit {process.returncode}'}")
    return out


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.communicate()


def resolve_commit(root: str, revision: str) -> str:
    """The commit ``revision`` names in the checkout at ``root`` (GitError naming the revision when none)."""
    if not _REVISION.match(revision) or revision.startswith("-"):
        raise GitError(f"{revision!r} is not a revision git would read as one (a branch, tag, commit or HEAD~N)")
    try:
        out = run_git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", limit=1 << 12)
    except GitError:
        raise GitError(f"{revision!r} names no commit here") from None
    commit = out.decode("ascii", "replace").strip()
    if not _COMMIT.match(commit):
        raise GitError(f"{revision!r} names no commit here")
    return commit


def working_tree_diff(root: str, revision: str) -> WorkingTreeDiff:
    """The tracked changes of the working tree against ``revision`` and the untracked files, under ``root``."""
    commit = resolve_commit(root, revision)
    diff = run_git(
        root,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--relative",
        "-U0",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        commit,
        "--",
    )
    untracked = run_git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
    return WorkingTreeDiff(
        commit=commit,
        diff=diff.decode("utf-8", "replace"),
        untracked=tuple(p for p in untracked.decode("utf-8", "replace").split("\0") if p),
    )


def base_blobs(root: str, commit: str, paths: list[str]) -> dict[str, bytes]:
    """The bytes of each repository-relative path at ``commit`` (a path it does not hold is left out)."""
    if not paths:
        return {}
    prefix = run_git(root, "rev-parse", "--show-prefix", limit=1 << 12).decode("utf-8", "replace").strip()
    request = "".join(f"{commit}:{prefix}{p}\n" for p in paths).encode()
    out = run_git(root, "cat-file", "--batch", stdin=request, limit=MAX_BLOB_BYTES)
    found: dict[str, bytes] = {}
    at = 0
    for path in paths:
        end = out.find(b"\n", at)
        if end < 0:
            break
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue  # "<name> missing", or not a file at that commit
        size = int(header[2])
        found[path] = out[at : at + size]
        at += size + 1
    return found
