"""A Go Corpus built the way the pipeline builds one, for tests: walk, package_for_root, extract, stable keys."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from indexer.languages import go
from tests.language_corpus import build_language_corpus
from tests.python_corpus import BuiltCorpus


def go_paths(root: Path) -> list[str]:
    """Repository-relative paths of the non-test Go files under ``root``, sorted, hidden dirs left out."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")) and d not in ("testdata", "vendor"))
        for name in filenames:
            if name.endswith(".go") and not name.endswith("_test.go"):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)


def build_go_corpus(repositories: Iterable[tuple[str, Path]]) -> BuiltCorpus:
    """Extract every Go file of each (name, root) repository and key its declarations."""
    return build_language_corpus("go", go, repositories, go_paths)
