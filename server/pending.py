"""Files a CANDIDATE generation leaves pending exact analysis (feature 6), named in every answer.

``kivgraph index`` and ``--watch`` publish a CANDIDATE generation before the exact pass when a few files
changed: those files (and the files that depend on them) are on CANDIDATE edges until the next
generation. The list is read once per generation (repository records first: most generations have none).
"""

from __future__ import annotations

from typing import Any

from server.access import access_tag
from snapshot_format.reader import Generation

PENDING = "pending"
LISTED = 10
_known: dict[tuple[str, int, str], dict[str, Any] | None] = {}
_waiting: dict[tuple[str, int, str, str], dict[str, list[str]]] = {}


def pending_exact(gen: Generation) -> dict[str, Any] | None:
    """``{"files", "paths", "note"}`` (and ``consumers``) when the generation waits for an exact pass, else None."""
    key = (str(gen.path), gen.id, access_tag(gen))  # a limited token's view lists only its own files
    if key in _known:
        return _known[key]
    paths: list[str] = []
    for repo in gen.repositories():
        if any(a.mode == PENDING for a in repo.analyses):
            paths += [f"{repo.name}:{f.path}" for f in gen.files(repo.name) if f.analysis == PENDING]
    waiting = waiting_consumers(gen)
    found: dict[str, Any] | None = None
    if paths:
        found = {
            "files": len(paths),
            "paths": paths[:LISTED],
            "note": "these files changed or depend on a change: their edges are CANDIDATE until the exact "
            "analysis publishes the next snapshot, which this server follows",
        }
    if waiting:
        found = found or {"files": 0, "paths": [], "note": ""}
        found["consumers"] = [
            {"repository": consumer, "of": provider}
            for provider, consumers in waiting.items()
            for consumer in consumers
        ]
        found["consumers_note"] = (
            "each of these repositories uses one whose files are pending: its edges into that repository are the "
            "ones of the snapshot before the edit until the exact analysis publishes the next snapshot (a use the "
            "edit added is missing, one it removed may still be listed)"
        )
    if len(_known) > 8:
        _known.clear()
    _known[key] = found
    return found


def waiting_consumers(gen: Generation) -> dict[str, list[str]]:
    """Provider -> the repositories using it whose edges into it are from before its pending edit.

    A repository with files pending exact analysis was edited; the repositories that use it (its package
    dependencies name them) keep their edges into it from the snapshot before the edit until the exact
    analysis publishes (a scoped run's CANDIDATE stage rebuilds the edited repository alone).
    """
    key = (str(gen.path), gen.id, access_tag(gen), "consumers")
    cached = _waiting.get(key)
    if cached is not None:
        return cached
    out: dict[str, list[str]] = {}
    for repo in gen.repositories():
        if not any(a.mode == PENDING for a in repo.analyses):
            continue
        if not any(f.analysis == PENDING for f in gen.files(repo.name)):
            continue
        users = sorted({d.consumer_repository for d in gen.package_dependencies(repo.name)} - {repo.name})
        if users:
            out[repo.name] = users
    if len(_waiting) > 8:
        _waiting.clear()
    _waiting[key] = out
    return out
