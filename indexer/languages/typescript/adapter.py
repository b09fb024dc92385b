"""scip-typescript behind the language seam: the whole run and the binding (``analyzer.py``) and the
incremental pass built on it (``incremental.py``), one ``ADAPTER``."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages.typescript import incremental
from indexer.languages.typescript.analyzer import (
    ANALYZER,
    TOOL,
    ModuleTable,
    RepositoryTsFacts,
    TypescriptHooks,
    analyze_repository,
    cache_key,
    probe,
)
from indexer.scip.route import ScipAdapter, interface_of


class ScipTypescriptAdapter(ScipAdapter[RepositoryTsFacts]):
    """scip-typescript (with the pinned TypeScript checker) behind the language seam, on the SCIP route."""

    analyzer = ANALYZER
    facts_type = RepositoryTsFacts
    hooks = TypescriptHooks()
    tool = TOOL

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> ModuleTable:
        return ModuleTable(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        return cache_key(repo, hashes, identity)

    def interface(self, facts: RepositoryTsFacts) -> list[tuple[str, str]] | None:
        return interface_of(facts)

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryTsFacts:
        return analyze_repository(repo, corpus, timeout=timeout)

    def update(
        self,
        previous: RepositoryTsFacts,
        changed: Collection[str],
        repo: RepositoryFacts,
        corpus: Corpus,
        *,
        timeout: float,
    ) -> RepositoryTsFacts | None:
        return incremental.update(previous, changed, repo, corpus, timeout=timeout)


ADAPTER = ScipTypescriptAdapter()
bind = ADAPTER.bind  # the route's binding with TypeScript's hooks
