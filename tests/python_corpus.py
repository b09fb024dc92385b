"""A Python Corpus built the way the pipeline builds one, for tests: walk, package_for, extract, stable keys."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts, Resolution
from indexer.facts import EdgeFact, FileFacts
from indexer.languages import python as py
from snapshot_format.stable_key import stable_key
from snapshot_format.vocab import EdgeKind


@dataclass(frozen=True)
class Declaration:
    """Who a stable key belongs to."""

    repository: str
    path: str
    qualified_name: str
    kind: str


@dataclass
class BuiltCorpus:
    """A corpus plus the reverse key lookup tests need to read edges."""

    corpus: Corpus
    declarations: dict[str, Declaration] = field(default_factory=dict)

    def files(self) -> dict[tuple[str, str], FileFacts]:
        """Every extracted file by (repository, path)."""
        return {(r.name, f.path): f for r in self.corpus.repositories for f in r.files}

    def resolve(self) -> Resolution:
        """Run the Python resolver over the whole corpus."""
        return py.resolve(self.corpus)

    def key(self, qualified_name: str, repository: str | None = None) -> str:
        """The one stable key declared under ``qualified_name`` (optionally in one repository)."""
        found = [
            k
            for k, d in self.declarations.items()
            if d.qualified_name == qualified_name and repository in (None, d.repository)
        ]
        assert len(found) == 1, f"{qualified_name!r} declared {len(found)} times"
        return found[0]

    def edge_row(self, edge: EdgeFact) -> tuple[str, str, str]:
        """(kind name, source qualified name, target qualified name) of an edge."""
        return (
            EdgeKind(edge.kind).name,
            self.declarations[edge.source].qualified_name,
            self.declarations[edge.target].qualified_name,
        )


def python_paths(root: Path, skip_dirs: Iterable[str] = ()) -> list[str]:
    """Repository-relative paths of the Python files under ``root``, sorted, hidden and skipped dirs left out."""
    skip = set(skip_dirs)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in skip)
        for name in filenames:
            if name.endswith(py.EXTENSIONS):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)


def build_corpus(repositories: Iterable[tuple[str, Path]], skip_dirs: Iterable[str] = ()) -> BuiltCorpus:
    """Extract every Python file of each (name, root) repository and key its declarations."""
    skip = tuple(skip_dirs)
    repos: list[RepositoryFacts] = []
    keys: dict[tuple[str, str, str, str], str] = {}
    declarations: dict[str, Declaration] = {}
    for name, root in repositories:
        paths = python_paths(root, skip)
        all_paths = frozenset(paths)
        facts = RepositoryFacts(name=name, root=str(root))
        for path in paths:
            package = py.package_for(path, all_paths)
            extracted = py.extract(path, (root / path).read_bytes(), package)
            facts.files.append(extracted)
            for sym in extracted.symbols:
                key = stable_key(
                    language="python",
                    repository=name,
                    package=package,
                    module=path,
                    qualified_name=sym.qualified_name,
                    kind=sym.kind,
                    discriminator="",
                )
                keys[(name, path, sym.qualified_name, sym.kind)] = key
                declarations[key] = Declaration(name, path, sym.qualified_name, sym.kind)
        repos.append(facts)

    def key_of(repository: str, path: str, qualified_name: str, kind: str) -> str | None:
        return keys.get((repository, path, qualified_name, kind))

    return BuiltCorpus(Corpus(language="python", repositories=repos, key_of=key_of), declarations)
