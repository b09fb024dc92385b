"""Go's exact analyzer behind the language seam: the whole run and binding (``analyzer.py``) and the
incremental pass built on it (``incremental.py``), one ``ADAPTER``."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages.go import incremental
from indexer.languages.go.analyzer import (
    ANALYZER,
    ModuleTable,
    RepositoryGoFacts,
    analyze_repository,
    bind,
    cache_key,
    executable,
    identity,
    install,
    installed_modules,
    probe,
    reachable_hashes,
    version,
)
from indexer.languages.spec import ExactAdapter, ExactOutcome


class GoTypesAdapter(ExactAdapter[RepositoryGoFacts]):
    """Our go/types helper behind the language seam."""

    analyzer = ANALYZER
    facts_type = RepositoryGoFacts

    def install(self) -> str:
        return install()

    def executable(self) -> Path:
        return executable()

    def version(self) -> str:
        return version()

    def identity(self) -> str:
        return identity()

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> ModuleTable:
        return ModuleTable(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        key = cache_key(repo, reachable_hashes(repo, hashes, corpus), identity, corpus.allow_network)
        if not corpus.installed:
            return key
        seen = sorted(f"{name}\0{where}" for where, name in installed_modules(Path(repo.root)).items())
        return hashlib.blake2b(key + "\n".join(["installed", *seen]).encode(), digest_size=20).digest()

    def interface(self, facts: RepositoryGoFacts) -> list[tuple[str, str]] | None:
        """go/types' exported declarations with their types (by the name an importer writes), and the packages it
        could not load."""

        def h(text: str) -> str:
            return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()

        out = [("", h(f"problem\0{p.package}\0{p.reason}")) for p in facts.problems]
        for line in facts.exports:
            _path, _tab, rest = line.partition("\t")
            name, _tab, _decl = rest.partition("\t")
            out.append((name, h(line)))
        return out

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryGoFacts:
        return analyze_repository(repo, corpus, timeout=timeout)

    def bind(self, facts: RepositoryGoFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
        return bind(facts, repo, corpus, modules)

    def update(
        self,
        previous: RepositoryGoFacts,
        changed: Collection[str],
        repo: RepositoryFacts,
        corpus: Corpus,
        *,
        timeout: float,
    ) -> RepositoryGoFacts | None:
        if corpus.installed:
            return None  # a bundle build's two runs are whole runs (_installed_run)
        return incremental.update(previous, changed, repo, corpus, timeout=timeout)


ADAPTER = GoTypesAdapter()
