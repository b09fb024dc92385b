"""Repository names: the one rule the indexer's config and the server's index_project both apply.

A name is a key component of every record (see keys.py), so both sides must
refuse the same names — the server before it asks the user's consent.
"""

from __future__ import annotations

import re

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
RESERVED_PREFIX = "rust:"


def repository_name_problem(name: str) -> str:
    """Why ``name`` cannot name a repository, or "" when it can."""
    if not name or name != name.strip():
        return "repository name must be non-empty without surrounding whitespace"
    if name.startswith(RESERVED_PREFIX):
        return f"the {RESERVED_PREFIX!r} prefix is reserved for derived providers"
    if name in (".", "..") or not _NAME_RE.match(name):
        return (
            f"repository name {name!r} is invalid (a letter or digit, then letters, digits, '.', '_', '+', '-'; "
            "no spaces or path separators)"
        )
    return ""


def repository_allowed(patterns: tuple[str, ...], repository: str) -> bool:
    """Whether ``repository`` matches one of ``patterns`` (exact names, or a prefix ending in ``*``)."""
    for pattern in patterns:
        if pattern.endswith("*"):
            if repository.startswith(pattern[:-1]):
                return True
        elif repository == pattern:
            return True
    return False
