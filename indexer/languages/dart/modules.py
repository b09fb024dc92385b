"""Dart module naming: a file's pub package (the ``name:`` of its pubspec.yaml) and its module symbol.

A repository may hold several packages (a pubspec.yaml in a subdirectory governs the files below it).
A file's package is the ``name:`` of the nearest pubspec.yaml at or above it, up to the repository root;
``package:NAME/PATH`` URIs name ``<that package's directory>/lib/PATH``.
"""

from __future__ import annotations

import re
from pathlib import Path

from snapshot_format import languages

LANGUAGE = "dart"
EXTENSIONS = languages.by_id(LANGUAGE).extensions  # its row in the language table

_NAME = re.compile(r"^name:\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?\s*(?:#.*)?$")
_CACHE: dict[Path, tuple[int, int, str]] = {}  # pubspec.yaml -> (mtime_ns, size, name)


def pubspec_name(pubspec: Path) -> str:
    """The top-level ``name:`` of a pubspec.yaml ("" when it is missing or has none), re-read on change."""
    try:
        st = pubspec.stat()
    except OSError:
        return ""
    cached = _CACHE.get(pubspec)
    if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
        return cached[2]
    name = ""
    try:
        text = pubspec.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        match = _NAME.match(line.rstrip())
        if match:
            name = match.group(1)
            break
    _CACHE[pubspec] = (st.st_mtime_ns, st.st_size, name)
    return name


def directory_of(path: str) -> str:
    """The directory of a repository-relative path ("" at the root)."""
    rel = path.replace("\\", "/")
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def guess_package_dir(path: str) -> str:
    """Without the repository on disk: the directory above the file's ``lib/`` (or its own directory)."""
    rel = path.replace("\\", "/")
    parts = rel.split("/")[:-1]
    if "lib" in parts:
        return "/".join(parts[: parts.index("lib")])
    return "/".join(parts)


def package_of(root: Path, path: str) -> tuple[str, str]:
    """(package directory relative to ``root``, pub name) of the nearest pubspec.yaml above ``path``.

    ("", "") when no pubspec.yaml governs the file.
    """
    parts = [p for p in directory_of(path).split("/") if p]
    for depth in range(len(parts), -1, -1):
        name = pubspec_name(Path(root, *parts[:depth], "pubspec.yaml"))
        if name:
            return "/".join(parts[:depth]), name
    return "", ""


def module_qualified_name(path: str) -> str:
    """The module symbol's qualified name: ``lib/src/shapes.dart`` → ``lib.src.shapes``."""
    rel = path.replace("\\", "/")
    if rel.endswith(".dart"):
        rel = rel[:-5]
    return rel.replace("/", ".")


def package_for(path: str, all_paths: frozenset[str]) -> str:
    """Without the repository root: the directory above the file's ``lib/`` ("." at the root)."""
    return guess_package_dir(path) or "."


def package_for_root(root: Path, path: str, all_paths: frozenset[str]) -> str:
    """A Dart file's package: the ``name:`` of the nearest pubspec.yaml at or above it, else ``package_for``."""
    _directory, name = package_of(root, path)
    return name or package_for(path, all_paths)
