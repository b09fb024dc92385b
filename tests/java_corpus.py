"""A Java Corpus built the way the pipeline builds one, for tests: walk, package_for_root, extract, stable keys."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from indexer.languages import java
from tests.language_corpus import build_language_corpus
from tests.python_corpus import BuiltCorpus


def java_paths(root: Path) -> list[str]:
    """Repository-relative paths of the Java files under ``root``, sorted, hidden dirs and ``target`` left out."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in ("target", "build"))
        for name in filenames:
            if name.endswith(".java"):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)


def build_java_corpus(repositories: Iterable[tuple[str, Path]]) -> BuiltCorpus:
    """Extract every Java file of each (name, root) repository and key its declarations."""
    return build_language_corpus("java", java, repositories, java_paths)
