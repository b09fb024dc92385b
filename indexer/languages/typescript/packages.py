"""npm package identity of repositories and files: ``package.json`` names and entry points."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path, PurePosixPath


@lru_cache(maxsize=4096)
def _manifest(path: str) -> dict[str, object] | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def manifest(root: str, directory: str) -> dict[str, object] | None:
    """The parsed ``<root>/<directory>/package.json``, or None."""
    return _manifest(str(Path(root, directory, "package.json")))


def package_dirs(root: str, paths: list[str]) -> dict[str, str]:
    """Repository-relative directories holding a named ``package.json`` (``""`` = root) → package name.

    Only the ancestors of the given files are looked at, never ``node_modules``.
    """
    seen: dict[str, str] = {}
    checked: set[str] = set()
    for p in paths:
        parent = PurePosixPath(p).parent
        for d in (parent, *parent.parents):
            key = "" if str(d) == "." else str(d)
            if key in checked:
                break
            checked.add(key)
            data = manifest(root, key)
            name = data.get("name") if data else None
            if isinstance(name, str) and name:
                seen[key] = name
    return seen


def split_specifier(spec: str) -> tuple[str, str]:
    """A bare specifier's (package name, subpath): ``@s/p/a/b`` → (``@s/p``, ``a/b``)."""
    parts = spec.split("/")
    n = 2 if spec.startswith("@") and len(parts) > 1 else 1
    return "/".join(parts[:n]), "/".join(parts[n:])


def entry_points(data: dict[str, object] | None) -> list[str]:
    """Candidate entry files named by a manifest, most source-like first (extension-less stems too)."""
    out: list[str] = []
    if data:
        for field in ("source", "types", "typings", "module", "main"):
            value = data.get(field)
            if isinstance(value, str) and value:
                out.append(value.removeprefix("./"))
    out += ["src/index", "index", "lib/index"]
    return out
