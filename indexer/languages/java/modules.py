"""Java package naming: a file's package is its ``package`` declaration (the directory below a source root
when the file has none it can be read from)."""

from __future__ import annotations

import re
from pathlib import Path

LANGUAGE = "java"
EXTENSIONS = (".java",)

# Source roots of the Maven and Gradle layouts, longest first: what lies below one is the package directory.
_SOURCE_ROOTS = ("src/main/java/", "src/test/java/", "src/java/", "src/", "java/")
_PACKAGE_LINE = re.compile(rb"^\s*package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*;", re.MULTILINE)
_HEAD_BYTES = 16384  # the package declaration comes before any type: after the licence header at most


def package_for(path: str, all_paths: frozenset[str]) -> str:
    """The package a path's directory names below its source root (``src/main/java/com/ex/A.java`` -> ``com.ex``)."""
    rel = path.replace("\\", "/")
    directory = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
    for root in _SOURCE_ROOTS:
        at = directory.find(root)
        if at == 0 or (at > 0 and directory[at - 1] == "/"):
            directory = directory[at + len(root) :]
            break
    return directory.rstrip("/").replace("/", ".")


def package_declared(source: bytes) -> str | None:
    """The name a ``package`` declaration gives (comments before it skipped), or None without one."""
    head = re.sub(rb"/\*.*?\*/|//[^\n]*", b" ", source[:_HEAD_BYTES], flags=re.DOTALL)
    found = _PACKAGE_LINE.search(head)
    return re.sub(rb"\s+", b"", found.group(1)).decode("ascii", "replace") if found else None


def package_for_root(root: Path, path: str, all_paths: frozenset[str]) -> str:
    """The package of a repository file: its ``package`` declaration; "" for the unnamed package."""
    try:
        with (root / path).open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return package_for(path, all_paths)
    declared = package_declared(head)
    return declared if declared is not None else ""


def module_qualified_name(path: str) -> str:
    """The file's own symbol (imports and top-level uses hang on it): named by its path, as Java names none."""
    return path.replace("\\", "/")
