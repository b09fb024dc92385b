"""Commit, branch and dirty flag of a repository as the indexer records them.

Commit and branch come from the shared reader of git's files
(``snapshot_format.gitstate``: bounded, regular files only); only the dirty flag
needs git itself.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from snapshot_format.gitstate import read_head


@dataclass(frozen=True)
class GitState:
    commit: str = ""
    branch: str = ""
    dirty: bool = False


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").strip()


def read_git_state(root: Path) -> GitState:
    """The repository's HEAD commit, branch (empty when detached) and dirty flag; empty outside git."""
    head = read_head(root)
    if not head.commit:
        return GitState()
    # --no-optional-locks: git status would otherwise refresh .git/index and take index.lock in a
    # repository we only read.
    status = _git(root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--", ".")
    return GitState(commit=head.commit, branch=head.branch, dirty=bool(status))
