"""Repositories of the generation with indexed versus live HEAD freshness (list_repositories, graph_status)."""

from __future__ import annotations

from typing import Any

from snapshot_format.gitstate import read_head
from snapshot_format.records import Repository

DERIVED_PREFIX = "rust:"


def is_derived(name: str) -> bool:
    """Derived providers live in the reserved ``rust:`` namespace."""
    return name.startswith(DERIVED_PREFIX)


def analyses(repo: Repository) -> list[dict[str, Any]]:
    """How each language of the repository was analysed: exact, fallback or failed, with the reason."""
    out = []
    for a in repo.analyses:
        entry: dict[str, Any] = {"language": a.language, "mode": a.mode}
        if a.analyzer:
            entry["analyzer"] = a.analyzer + (f" {a.analyzer_version}" if a.analyzer_version else "")
        if a.reason:
            entry["reason"] = a.reason
        out.append(entry)
    return out


def freshness_row(repo: Repository) -> dict[str, Any]:
    """A repository row: what was indexed, what HEAD says now, and whether it moved."""
    row: dict[str, Any] = {"name": repo.name, "path": repo.root, "languages": list(repo.languages)}
    if is_derived(repo.name):
        row["derived"] = True
        row["moved"] = False
        row["moved_detail"] = "a derived provider has no commit to compare"
        return row
    if repo.commit:
        row["indexed_commit"] = repo.commit
        if repo.branch:
            row["indexed_branch"] = repo.branch
        row["indexed_dirty"] = repo.dirty
    head = read_head(repo.root)
    if head.commit:
        row["current_commit"] = head.commit
    if head.branch:
        row["current_branch"] = head.branch
    moved = bool(repo.commit and head.commit and repo.commit != head.commit)
    row["moved"] = moved
    if head.error:
        row["moved_detail"] = head.error
    elif not repo.commit:
        row["moved_detail"] = "indexed outside a git commit, so there is nothing to compare"
    elif moved:
        row["moved_detail"] = (
            f"indexed at {repo.commit[:12]}, HEAD is now {head.commit[:12]}: re-index to see the change"
        )
    row["analyses"] = analyses(repo)
    return row
