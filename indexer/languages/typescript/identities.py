"""The package identities a TypeScript or JavaScript repository's bundle exports and imports (indexer/bundle.py
reads them): the npm package its package.json names, and each dependency at the version installed in its
node_modules (the range package.json asks for when none is installed)."""

from __future__ import annotations

import json
from pathlib import Path

from indexer.facts import FileFacts

Identity = tuple[str, str, str, str]  # (language, name, version, descriptor)


def package_identities(language: str, files: list[FileFacts], root: Path) -> tuple[list[Identity], list[Identity]]:
    manifest = _json(root / "package.json")
    name = manifest.get("name")
    exports: list[Identity] = []
    if isinstance(name, str) and name:
        exports.append(("npm", name, str(manifest.get("version", "")), "package.json"))
    imports: dict[str, Identity] = {}
    for section in ("dependencies", "peerDependencies", "devDependencies"):
        deps = manifest.get(section)
        if not isinstance(deps, dict):
            continue
        for dep in sorted(deps):
            installed = _json(root / "node_modules" / dep / "package.json")
            version = str(installed.get("version", "")) or str(deps[dep])
            imports.setdefault(dep, ("npm", dep, version, "node_modules"))
    return exports, [imports[k] for k in sorted(imports)]


def _json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
