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


# What linking reads of an installed npm package: its manifest, declarations and JavaScript.
_INSTALLED_SUFFIXES = (
    ".json",
    ".d.ts",
    ".d.mts",
    ".d.cts",
    ".ts",
    ".mts",
    ".cts",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
    ".tsx",
)
MAX_INSTALLED_BYTES = 256 << 20  # a consumer's installed packages carried in one bundle, at most


def linking_inputs(root: Path, max_file_bytes: int) -> list[str]:
    """What linking reads besides the facts (indexer/bundle.py carries it): every package.json, tsconfig and
    jsconfig, and the installed packages each package.json depends on (in its node_modules or the root's): a
    consumer's use of a registered provider through its published build maps to the provider's source there."""
    import os
    import posixpath

    from indexer.bundle import named_files

    out = named_files(
        root, lambda n: n in ("package.json", "jsconfig.json") or (n.startswith("tsconfig") and n.endswith(".json"))
    )
    total = 0
    for manifest in [p for p in out if p.rsplit("/", 1)[-1] == "package.json"]:
        data = _json(root / manifest)
        base = posixpath.dirname(manifest)
        for section in ("dependencies", "peerDependencies", "devDependencies", "optionalDependencies"):
            deps = data.get(section)
            for dep in sorted(deps) if isinstance(deps, dict) else ():
                for at in dict.fromkeys([base, ""]):
                    installed = root / at / "node_modules" / dep
                    if not installed.is_dir():
                        continue
                    for dirpath, dirnames, filenames in os.walk(installed, followlinks=True):
                        dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
                        for name in sorted(filenames):
                            if not name.endswith(_INSTALLED_SUFFIXES):
                                continue
                            full = Path(dirpath, name)
                            try:
                                size = full.stat().st_size
                            except OSError:
                                continue
                            if size <= max_file_bytes and total + size <= MAX_INSTALLED_BYTES:
                                rel = posixpath.join(at, "node_modules", dep, full.relative_to(installed).as_posix())
                                out.append(posixpath.normpath(rel))
                                total += size
                    break
    return out
