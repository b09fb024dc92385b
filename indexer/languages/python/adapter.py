"""scip-python behind the language seam: the whole run and the binding (``analyzer.py``) and the
incremental pass built on it (``incremental.py``), one ``ADAPTER``."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages.python import incremental
from indexer.languages.python.analyzer import (
    ANALYZER,
    TOOL,
    ModuleTable,
    PythonHooks,
    RepositoryScipFacts,
    analyze_repository,
    cache_key,
    installed_providers,
    probe,
    providers,
)
from indexer.languages.python.installed import InstalledPackage, fingerprint
from indexer.scip.route import ScipAdapter, interface_of


class ScipPythonAdapter(ScipAdapter[RepositoryScipFacts]):
    """scip-python behind the language seam, on the SCIP route."""

    analyzer = ANALYZER
    facts_type = RepositoryScipFacts
    hooks = PythonHooks()
    tool = TOOL

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> ModuleTable:
        return ModuleTable(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        key = cache_key(repo, hashes, identity)
        installed = installed_providers(repo, corpus, providers(repo, corpus))
        if not installed:
            return key
        seen = [InstalledPackage(p.repository, p.version, p.name, p.root, p.files) for p in installed]
        return hashlib.blake2b(key + fingerprint(seen), digest_size=20).digest()

    def interface(self, facts: RepositoryScipFacts) -> list[tuple[str, str]] | None:
        return interface_of(facts)

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryScipFacts:
        return analyze_repository(repo, corpus, timeout=timeout)

    def update(
        self,
        previous: RepositoryScipFacts,
        changed: Collection[str],
        repo: RepositoryFacts,
        corpus: Corpus,
        *,
        timeout: float,
    ) -> RepositoryScipFacts | None:
        return incremental.update(previous, changed, repo, corpus, timeout=timeout)


ADAPTER = ScipPythonAdapter()
