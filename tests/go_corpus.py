"""A Go Corpus built the way the pipeline builds one, for tests: walk, package_for_root, extract, stable keys."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages import go
from snapshot_format.stable_key import stable_key
from tests.python_corpus import BuiltCorpus, Declaration


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
    repos: list[RepositoryFacts] = []
    keys: dict[tuple[str, str, str, str], str] = {}
    declarations: dict[str, Declaration] = {}
    for name, root in repositories:
        paths = go_paths(root)
        all_paths = frozenset(paths)
        facts = RepositoryFacts(name=name, root=str(root))
        for path in paths:
            package = go.package_for_root(root, path, all_paths)
            extracted = go.extract(path, (root / path).read_bytes(), package)
            facts.files.append(extracted)
            for sym in extracted.symbols:
                key = stable_key(language="go", repository=name, package=package, module=path,
                                 qualified_name=sym.qualified_name, kind=sym.kind, discriminator="")
                keys[(name, path, sym.qualified_name, sym.kind)] = key
                declarations[key] = Declaration(name, path, sym.qualified_name, sym.kind)
        repos.append(facts)

    def key_of(repository: str, path: str, qualified_name: str, kind: str) -> str | None:
        return keys.get((repository, path, qualified_name, kind))

    return BuiltCorpus(Corpus(language="go", repositories=repos, key_of=key_of), declarations)
