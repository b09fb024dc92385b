"""A Corpus of any language module built the way the pipeline builds one: package names, extract, stable keys."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from indexer.corpus import Corpus, RepositoryFacts
from snapshot_format.stable_key import stable_key
from tests.python_corpus import BuiltCorpus, Declaration


def build_language_corpus(
    language: str, module: Any, repositories: Iterable[tuple[str, Path]], paths_of: Callable[[Path], list[str]]
) -> BuiltCorpus:
    """Extract the files ``paths_of(root)`` of each (name, root) repository with ``module`` and key them.

    Packages come from ``module.package_for_root`` (the repository root is known here).
    """
    repos: list[RepositoryFacts] = []
    keys: dict[tuple[str, str, str, str], str] = {}
    declarations: dict[str, Declaration] = {}

    def add(repository: str, path: str, package: str, qualified_name: str, kind: str) -> None:
        key = stable_key(
            language=language,
            repository=repository,
            package=package,
            module=path,
            qualified_name=qualified_name,
            kind=kind,
            discriminator="",
        )
        keys[(repository, path, qualified_name, kind)] = key
        declarations[key] = Declaration(repository, path, qualified_name, kind)

    for name, root in repositories:
        paths = paths_of(root)
        all_paths = frozenset(paths)
        facts = RepositoryFacts(name=name, root=str(root))
        for path in paths:
            package = module.package_for_root(root, path, all_paths)
            extracted = module.extract(path, (root / path).read_bytes(), package)
            facts.files.append(extracted)
            for sym in extracted.symbols:
                add(name, path, package, sym.qualified_name, sym.kind)
        repos.append(facts)

    def key_of(repository: str, path: str, qualified_name: str, kind: str) -> str | None:
        return keys.get((repository, path, qualified_name, kind))

    packages = {(r.name, f.path): f.package for r in repos for f in r.files}

    def declare(repository: str, path: str, fact: Any) -> None:
        """A declaration only an analyzer saw, keyed as the pipeline keys it (``Corpus.declare``)."""
        if (repository, path) in packages and (repository, path, fact.qualified_name, fact.kind) not in keys:
            add(repository, path, packages[(repository, path)], fact.qualified_name, fact.kind)

    corpus = Corpus(language=language, repositories=repos, key_of=key_of, declare=declare)
    return BuiltCorpus(corpus, declarations)
