"""A result for a tree that moved on is never published: the tree is read again just before.

A run reads the tree once (discovery, then every file's bytes, hashed) and builds its generations from what
it read, while an analyzer reads the same files from disk seconds or minutes later. An edit or a revert
saved in between leaves the run with facts for a tree that no longer exists; published, they answer with
callers that are gone. So the run's inputs are read again (``ReadCheck``) the way the run read them: each
repository it read from disk is discovered again and every file it hashed is hashed again (content
decides, never mtimes); when the files are as read, the git state and the run's inputs fingerprint
(``indexer.fingerprint.run_inputs``: each analyzer's other inputs, such as go.mod or a tsconfig) are
computed again. The check runs

- after each analyzer run that missed the fact cache, before its facts are kept: facts of a tree that
  changed while the analyzer read it are never cached under the key of the tree as the run read it;
- inside publication, once the generation is built and validated and before it is renamed into place and
  named by CURRENT (``indexer.publish``'s ``validated`` step), for the CANDIDATE and the exact generation.

A stale result raises ``Stale``: the generation being built is removed as any publication stopped at that
step is, nothing of it is cached, and the run reads the tree again at once (``index_in_stages``), at most
``MAX_READS`` times in all; a tree still changing after that gets nothing more published and the run
fails with ``TreeKeptChanging`` naming the files (``--watch`` goes on: its watcher hears those changes). A
revert costs little: the tree as it was before the edit is in the fact cache, its analyzer run included.

Under ``--watch`` one more case is caught: a file edited and put back while an analyzer ran hashes as the
run read it, yet the analyzer may have read the edit. The watcher heard the writes
(``supersede.written_since``), so a result whose analyzer ran while one landed is stale too. A one-shot
``kivgraph index`` has no watcher: an edit and its exact revert both inside one analyzer run go unseen
there, since nothing records what an analyzer read.

Repositories carried over from the current generation (``--repository`` naming others) are not read again,
so the disk does not make their results stale: their content stays the generation's. An analyzer run over
one of them reads the disk, though; when their files there are not the carried ones, that run is refused
and the repository's language is on the fallback, with the files named (``carried_differs``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from indexer import supersede
from indexer.config import Repository
from indexer.discover import Candidate
from indexer.fingerprint import Inputs
from indexer.pipeline import Build, RepoWork, discover_repository, git_state_of
from indexer.progress import Progress

MAX_READS = 3  # reads of the tree in one run before a tree that keeps changing fails it
_SHOWN = 5  # changed files named in a message
_STAGES = {
    "candidate": "CANDIDATE generation",
    "exact": "exact generation",
    "analyzer": "analyzer run (its facts are not cached)",
}


def listed(changed: Sequence[str]) -> str:
    """A few changed entries, and how many more."""
    more = len(changed) - _SHOWN
    return ", ".join(changed[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


class Stale(Exception):
    """The tree changed since the run read it: the result of ``stage`` is dropped."""

    def __init__(self, stage: str, changed: Sequence[str]) -> None:
        self.stage = stage
        self.changed = tuple(changed)
        super().__init__(f"{listed(self.changed)} changed since the run read the tree: its {_STAGES[stage]} is dropped")

    def as_json(self) -> dict[str, object]:
        return {"stage": self.stage, "changed": list(self.changed[:20]), "count": len(self.changed)}


class TreeKeptChanging(RuntimeError):
    """The tree changed under every read of one run: nothing more is published for it."""

    def __init__(self, dropped: Sequence[Stale], serving: str) -> None:
        self.dropped = tuple(dropped)
        last = self.dropped[-1]
        super().__init__(
            f"the tree kept changing while it was indexed ({len(self.dropped)} reads, the last dropped its "
            f"{_STAGES[last.stage]}; changed: {listed(last.changed)}): "
            + (f"{serving} serves, built from an earlier read" if serving else "nothing was published")
            + "; run kivgraph index again once the files settle"
        )


def _content_hash(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return ""  # gone or unreadable: not the content the run read


def _differs(w: RepoWork, old: Candidate, new: Candidate) -> bool:
    if (old.language, old.size, old.skip_reason) != (new.language, new.size, new.skip_reason):
        return True
    digest = w.hashes.get(old.path)
    return bool(digest) and _content_hash(w.root / old.path) != digest


def _repository_changes(w: RepoWork, repo: Repository, max_file_bytes: int) -> list[str]:
    """``repository:path`` of each file added, removed, resized, skipped otherwise or hashing otherwise since ``w``
    was read; the hashes the run kept decide (a file the run did not hash counts by its listing only)."""
    try:
        now = discover_repository(repo, max_file_bytes)
    except OSError as exc:
        return [f"{w.name} (cannot be read again: {exc})"]
    before = {c.path: c for c in w.discovery.files}
    after = {c.path: c for c in now.files}
    out: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old is None:
            out.append(f"{w.name}:{path} (added)")
        elif new is None:
            out.append(f"{w.name}:{path} (removed)")
        elif _differs(w, old, new):
            out.append(f"{w.name}:{path}")
    return out


def tree_changes(b: Build, inputs: Inputs, inputs_of: Callable[[Build], Inputs]) -> list[str]:
    """What differs now from the tree the run read (empty: nothing); see the module doc."""
    repos = {r.name: r for r in b.loaded.repositories}
    max_bytes = b.loaded.indexing.max_file_bytes
    changed = [
        entry
        for w in b.work
        if w.carried is None and not w.problem and w.name in repos
        for entry in _repository_changes(w, repos[w.name], max_bytes)
    ]
    if changed:
        return changed
    for w in b.work:
        if w.carried is None and not w.problem and git_state_of(w) != b.git.get(w.name):
            changed.append(f"{w.name} (its git commit, branch or dirty state)")
    if changed:
        return changed
    now = inputs_of(b)
    if now.fingerprint != inputs.fingerprint:
        moved = sorted(
            f"{repo} (the inputs of its {language} analyzer)"
            for (language, repo), key in now.analyzer_keys.items()
            if inputs.analyzer_keys.get((language, repo)) != key
        )
        changed = moved or ["the run's inputs (an analyzer or its configuration)"]
    return changed


def carried_differs(w: RepoWork, repo: Repository, max_file_bytes: int) -> str:
    """Why an analyzer must not run over a carried repository now (its files on disk are not the carried
    ones), or ""."""
    differs = _repository_changes(w, repo, max_file_bytes)
    if not differs:
        return ""
    return (
        f"its files on disk are not those of the generation it is carried over from (--repository named "
        f"others): {listed(differs)}; index it to analyse it"
    )


@dataclass
class ReadCheck:
    """The check of one read of the tree: what the run read, and since when an analyzer has been running."""

    b: Build
    inputs: Inputs
    inputs_of: Callable[[Build], Inputs]
    analyzer_started: float = 0.0  # wall clock when this read's first analyzer started (0: none ran)

    def analyzer_starts(self) -> None:
        if not self.analyzer_started:
            self.analyzer_started = time.time()

    def carried(self, name: str) -> str:
        """``carried_differs`` for the repository ``name`` when it is carried over, else ""."""
        w = next((w for w in self.b.work if w.name == name), None)
        repo = next((r for r in self.b.loaded.repositories if r.name == name), None)
        if w is None or w.carried is None or repo is None:
            return ""
        return carried_differs(w, repo, self.b.loaded.indexing.max_file_bytes)

    def __call__(self, stage: str) -> None:
        """Raise ``Stale`` when the tree is no longer as the run read it."""
        started = time.perf_counter()
        changed = tree_changes(self.b, self.inputs, self.inputs_of)
        if not changed and self.analyzer_started:
            heard = supersede.written_since(self.analyzer_started)
            if heard:
                changed = [f"{heard} (written while the analyzer ran, as the watcher heard)"]
        self.b.timer.add("recheck", started)
        if changed:
            raise Stale(stage, changed)
        if stage != "analyzer":  # a step of the publication (the analyzer's own phase says when it ends)
            seconds = time.perf_counter() - started
            self.b.progress(Progress("publish", "*", f"the tree is as the run read it ({seconds:.2f}s)", 0, 1))
