"""The language seam: what a language is to the pipeline, setup and doctor, and what its exact analyzer must do.

Each language lives in one folder, ``indexer/languages/<name>/``, with the same files:

``__init__.py``   the language module (``LanguageModule``): LANGUAGE, EXTENSIONS, EXTRACTOR_VERSION,
                  ``package_for``, ``extract``, ``resolve`` (and optionally ``package_for_root``)
``modules.py``    how a file path names its module or package
``extract.py``    tree-sitter extraction of one file (declarations and reference sites)
``resolve.py``    the CANDIDATE resolver over the whole corpus
``sites.py``      the vocabulary of reference sites passed from extraction to resolution
``analyzer.py``   the exact analyzer behind ``ExactAdapter`` (``ADAPTER``), when the language has one
``incremental.py`` optional: the analyzer's incremental route, built on ``analyzer.py``; ``adapter.py`` above both
                  then defines ``ADAPTER`` (``language.toml``: ``adapter = "adapter"``)
``outputs.py``    optional: which files the repository's own build generated (skipped as generated)
``language.toml`` what the registry makes the folder's ``LanguageSpec`` from (test patterns, probe, analyzer)

and one row in the language table (``snapshot_format/languages.py``: id, aliases, extensions, naming, export
rule, body syntax), which the server reads too. The pipeline, ``make setup`` and ``kivgraph doctor`` iterate
the registry; nothing outside a language's folder names a language (``tests/test_language_table.py``).
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import importlib
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import msgspec

from indexer.facts import EdgeFact, SymbolFact, UnresolvedFact
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

if TYPE_CHECKING:
    from indexer.corpus import Corpus, LanguageModule, RepositoryFacts
    from indexer.discover import Discovery


class AnalyzerFailed(Exception):
    """An analyzer is missing, failed or timed out; the message is the reason shown to users."""


class AnalyzerCrashed(AnalyzerFailed):
    """The analyzer started and then failed or timed out on the files it was given (a smaller set may pass)."""


@dataclass
class ExactOutcome:
    """What an exact analyzer found for one repository, ready for the pipeline's merge (every language)."""

    repository: str = ""
    edges: list[EdgeFact] = field(default_factory=list)
    unresolved: list[UnresolvedFact] = field(default_factory=list)
    # (source key, line, col) of sites the analyzer resolved: candidate edges there are replaced
    covered: set[tuple[str, int, int]] = field(default_factory=set)
    # (path, line, col) of the same sites, for the candidate resolver's unresolved rows
    covered_positions: set[tuple[str, int, int]] = field(default_factory=set)
    cross_repository: int = 0
    # Files the analyzer crashed on and that were left out of its run: path -> the analyzer's message.
    excluded: dict[str, str] = field(default_factory=dict)
    # What users must know about this run (a part it could not load), appended to the analysis reason in status.
    notes: list[str] = field(default_factory=list)
    # Keys of variables the checker's types show to hold a function or a constructor (records.Symbol.callable).
    callable: set[str] = field(default_factory=set)

    def settle(self, source: str, path: str, line: int, col: int) -> None:
        """The analyzer decided the site (an edge there, or a target outside every corpus): candidate edges and
        unresolved rows there give way."""
        self.covered.add((source, line, col))
        self.covered_positions.add((path, line, col))

    def edge(
        self,
        kind: EdgeKind,
        source: str,
        target: str,
        provenance: Provenance,
        line: int,
        col: int,
        *,
        cross: bool,
        confidence: Confidence = Confidence.EXACT_TYPECHECKED,
    ) -> None:
        """An exact edge; one to another repository's declaration (``cross``) is counted."""
        self.cross_repository += cross
        self.edges.append(EdgeFact(int(kind), source, target, int(confidence), int(provenance), line, col))


FactsT = TypeVar("FactsT", bound=msgspec.Struct)


class ExactAdapter(ABC, Generic[FactsT]):
    """One language's exact analyzer: installed by setup, probed by doctor, run once per repository.

    The pipeline calls, per repository: ``cache_key`` (the fact cache holds ``encode(facts)`` under it),
    ``analyze`` on a miss, then ``bind`` with the table ``modules`` built once per corpus. Every failure
    is an ``AnalyzerFailed`` whose message users see; the repository then stays on the fallback.
    """

    analyzer: ClassVar[str]  # display name: "scip-python", "go/types"
    # The joined output of one run: a msgspec Struct with ``analyzer_version`` ("<analyzer> <version>") and,
    # where the analyzer can produce them, ``failure`` (the run failed and nothing could be salvaged: cached
    # too, so unchanged inputs do not pay it again) and ``declarations`` ((path, declaration) pairs the
    # analyzer defines on lines tree-sitter could not parse).
    facts_type: ClassVar[type[msgspec.Struct]]

    @abstractmethod
    def install(self) -> str:
        """Install or build the pinned analyzer into the cache unless present; one status line."""

    @abstractmethod
    def executable(self) -> Path:
        """Where the analyzer runs from."""

    @abstractmethod
    def version(self) -> str:
        """The analyzer's own version string (runs it); AnalyzerFailed when it does not run."""

    @abstractmethod
    def identity(self) -> str:
        """What the fact cache knows of the analyzer (cheap: no process); AnalyzerFailed when missing."""

    @abstractmethod
    def probe(self) -> str:
        """Resolve a tiny two-file project; a detail line, or AnalyzerFailed (doctor)."""

    @abstractmethod
    def modules(self, corpus: Corpus) -> Any:
        """The per-corpus lookup table ``bind`` uses (built once per index)."""

    @abstractmethod
    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        """Everything the run over ``repo`` depends on: its files, its providers' files, the analyzer, what the
        corpus says of the run (the other repositories' roots, whether the network is allowed)."""

    def tree_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        """The part of ``cache_key`` the repositories and their configuration decide, without the state of caches
        an analyzer run fills itself (a dependency it fetched): what the stale-read check compares
        (``indexer/staleness.py``). The whole key unless the adapter's key reads such a cache."""
        return self.cache_key(repo, hashes, identity, corpus)

    @abstractmethod
    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> FactsT:
        """Run the analyzer over one repository and join its output (repository-local, cacheable)."""

    @abstractmethod
    def bind(self, facts: FactsT, repo: str, corpus: Corpus, modules: Any) -> ExactOutcome:
        """Turn joined facts into EXACT edges between stable keys."""

    def update(
        self, previous: FactsT, changed: Collection[str], repo: RepositoryFacts, corpus: Corpus, *, timeout: float
    ) -> FactsT | None:
        """The facts of ``repo`` now, from ``previous`` (a whole run's facts, or an update's) and the repository
        files whose content changed since (added and removed ones included), re-analysing only what those
        can affect; None when the analyzer has no such route (the whole repository is analysed again).

        The result must equal a whole run over the same inputs: ``fact_cache = "verify"`` checks it.
        """
        return None

    def encode(self, facts: FactsT) -> bytes:
        """The facts as the fact cache and bundles keep them, behind a tag of their type's layout."""
        return layout_tag(self.facts_type) + msgspec.msgpack.encode(facts)

    def decode(self, data: bytes) -> FactsT:
        """Facts ``encode`` wrote; ``msgspec.DecodeError`` for facts of another layout (a kivgraph whose facts
        type differs wrote them: decoding them as this one's could give a wrong value, never an error)."""
        tag = layout_tag(self.facts_type)
        if not data.startswith(tag):
            raise msgspec.DecodeError(f"{self.analyzer} facts of another layout than this kivgraph's")
        return cast(FactsT, msgspec.msgpack.decode(memoryview(data)[len(tag) :], type=self.facts_type))

    def interface(self, facts: FactsT) -> list[tuple[str, str]] | None:
        """What a consumer's run can see of this repository, from its run's facts: each symbol it exports with what the
        analyzer states of it (its signature with the types it inferred, its relationships), no position or body:
        (the simple name a consumer writes to use it, "" for every consumer; a digest) each.
        A consumer's facts are cached on it instead of on the repository's bytes (indexer/interface.py); None: the
        adapter cannot tell, a consumer's run is cached on the repository's bytes."""
        return None

    @staticmethod
    def failure_of(facts: object) -> str:
        return str(getattr(facts, "failure", ""))

    @staticmethod
    def declarations_of(facts: object) -> tuple[tuple[str, SymbolFact], ...]:
        return tuple(getattr(facts, "declarations", ()))


@dataclass(frozen=True)
class Probe:
    """A tiny file doctor extracts with the language's grammar, and the declaration it must yield."""

    path: str
    source: bytes
    qualified_name: str


@dataclass(frozen=True)
class LanguageSpec:
    """Everything the pipeline, setup and doctor know of one language folder."""

    name: str  # the folder: indexer/languages/<name>
    # language id (as in kivgraph.toml and records) -> its file extensions; one folder may serve several
    extensions: Mapping[str, tuple[str, ...]]
    test_patterns: tuple[str, ...]  # fnmatch patterns on a repository-relative path: test files
    probe: Probe | None  # None: no extractor yet (files are discovered and reported as skipped)
    exact: bool = False  # the folder's ``adapter_module`` defines ADAPTER
    adapter_module: str = "analyzer"  # adapter.py when the analyzer has an incremental route below it
    build_outputs: bool = False  # outputs.py defines mark_build_outputs(root, discovery) -> discovery
    fallback_note: str = "tree-sitter, CANDIDATE"  # what answers are without the exact analyzer
    # its section of kivgraph.toml (``[<ids[0]>]``): key -> default (language.toml's ``[settings]``)
    settings: Mapping[str, bool | int | float | str] = field(default_factory=dict)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.extensions)

    @property
    def package(self) -> str:
        return f"indexer.languages.{self.name}"

    def module(self) -> LanguageModule | None:
        """The language module (imported on first use), or None when there is no extractor yet."""
        if self.probe is None:
            return None
        return cast("LanguageModule", importlib.import_module(self.package))

    def adapter(self) -> ExactAdapter[Any] | None:
        """The exact analyzer's adapter (imported on first use), or None when the language has none."""
        if not self.exact:
            return None
        return cast(ExactAdapter[Any], importlib.import_module(f"{self.package}.{self.adapter_module}").ADAPTER)

    def mark_build_outputs(self, root: Path, found: Discovery) -> Discovery:
        """``found`` with files the repository's own build generated from its sources skipped, with the reason."""
        if not self.build_outputs:
            return found
        outputs = importlib.import_module(f"{self.package}.outputs")
        return cast("Discovery", outputs.mark_build_outputs(root, found))

    def is_test(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.test_patterns)


@functools.cache
def layout_tag(facts_type: Any) -> bytes:
    """Twelve bytes naming a facts type's layout: a magic and the digest of its JSON schema (field names, types,
    order), so a cache entry or a bundle written for one layout is never decoded as another."""
    schema = msgspec.json.encode(msgspec.json.schema(facts_type))
    return b"kgf1" + hashlib.blake2b(schema, digest_size=8).digest()
