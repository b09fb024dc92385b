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


def pending_exact(gen: Generation) -> dict[str, Any] | None:
    """``{"files", "paths", "note"}`` when the generation waits for an exact pass, else None."""
    key = (str(gen.path), gen.id, access_tag(gen))  # a limited token's view lists only its own files
    if key in _known:
        return _known[key]
    paths: list[str] = []
    for repo in gen.repositories():
        if any(a.mode == PENDING for a in repo.analyses):
            paths += [f"{repo.name}:{f.path}" for f in gen.files(repo.name) if f.analysis == PENDING]
    found = None
    if paths:
        found = {
            "files": len(paths),
            "paths": paths[:LISTED],
            "note": "these files changed or depend on a change: their edges are CANDIDATE until the exact "
            "analysis publishes the next snapshot, which this server follows",
        }
    if len(_known) > 8:
        _known.clear()
    _known[key] = found
    return found
