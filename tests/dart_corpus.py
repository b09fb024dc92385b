"""A Dart Corpus built the way the pipeline builds one, for tests: walk, package_for_root, extract, stable keys."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages import dart
from snapshot_format.stable_key import stable_key
from tests.python_corpus import BuiltCorpus, Declaration

FIXTURES = Path(__file__).parent / "fixtures"


def dart_paths(root: Path) -> list[str]:
    """Repository-relative paths of the Dart files under ``root``, sorted, hidden directories left out."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(Path(dirpath, n).relative_to(root).as_posix() for n in filenames if n.endswith(".dart"))
    return sorted(out)


def build_dart_corpus(repositories: Iterable[tuple[str, Path]]) -> BuiltCorpus:
    """Extract every Dart file of each (name, root) repository and key its declarations."""
    repos: list[RepositoryFacts] = []
    keys: dict[tuple[str, str, str, str], str] = {}
    declarations: dict[str, Declaration] = {}
    for name, root in repositories:
        paths = dart_paths(root)
        all_paths = frozenset(paths)
        facts = RepositoryFacts(name=name, root=str(root))
        for path in paths:
            package = dart.package_for_root(root, path, all_paths)
            extracted = dart.extract(path, (root / path).read_bytes(), package)
            facts.files.append(extracted)
            for sym in extracted.symbols:
                key = stable_key(
                    language="dart",
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

    return BuiltCorpus(Corpus(language="dart", repositories=repos, key_of=key_of), declarations)


def fixture_corpus() -> BuiltCorpus:
    """The two fixture packages, consumer first: ``app`` (tests/fixtures/dart_app) uses ``geo``."""
    return build_dart_corpus([("dart_app", FIXTURES / "dart_app"), ("dart_geo", FIXTURES / "dart_geo")])
