"""The corpus handed to language resolvers: every repository's extracted files and symbol keys."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, SymbolFact, UnresolvedFact


@dataclass
class RepositoryFacts:
    """One registered repository's files of one language, as extracted (parse failures included)."""

    name: str
    root: str
    files: list[FileFacts] = field(default_factory=list)


@dataclass
class Corpus:
    """All repositories of one language in registry order, plus the stable-key lookup.

    ``key_of(repository, path, qualified_name, kind)`` returns the text stable key the
    pipeline assigned to that declaration, or None when no such declaration was extracted.
    """

    language: str
    repositories: list[RepositoryFacts]
    key_of: Callable[[str, str, str, str], str | None]
    # Adds a declaration only an analyzer saw (a line tree-sitter could not parse) to the graph, so that
    # ``key_of`` finds it: (repository, path, declaration). The pipeline provides it; tests may leave it.
    declare: Callable[[str, str, SymbolFact], None] = field(default=lambda _repo, _path, _fact: None)
    # Whether the config lets this language's analyzer reach a package registry (``[rust] allow_network``).
    allow_network: bool = False
    # ``kivgraph index --bundle``: a dependency no registered repository provides is seen as the job's environment
    # installs it (the active virtualenv's site-packages, node_modules, the module cache), so the uses of another
    # repository's packages are recorded by package identity and bound when bundles are linked.
    installed: bool = False
    # repository -> the hashes its analyzer's cache key was computed from in this pass (its providers' interface
    # digests in place of their bytes: indexer/interface.py), filled by the exact pass.
    key_hashes: dict[str, Mapping[str, Mapping[str, str]]] = field(default_factory=dict)


@dataclass
class Resolution:
    """What a resolver found: edges, unresolved references and package-level dependencies."""

    edges: list[EdgeFact] = field(default_factory=list)
    unresolved: list[UnresolvedFact] = field(default_factory=list)
    package_dependencies: list[PackageDependencyFact] = field(default_factory=list)
    # Keys of variables an analyzer's types show to hold a callable (records.Symbol.callable), besides what
    # their extractor saw.
    callable: set[str] = field(default_factory=set)

    def guarded(self, repository: str, facts: FileFacts, language: str, work: Callable[[], object]) -> None:
        """Run one file's resolution; a resolver bug costs that file (a RESOLVER_FAILED row), never the index.

        Edges the file produced before the failure stay: each was bound on its own.
        """
        try:
            work()
        except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as exc:
            self.unresolved.append(
                UnresolvedFact(
                    name="",
                    reason="RESOLVER_FAILED",
                    repository=repository,
                    path=facts.path,
                    language=language,
                    package=facts.package,
                    detail=f"kivgraph's {language} resolver failed on this file: "
                    f"{type(exc).__name__}: {str(exc)[:200]}; its remaining references are not resolved",
                )
            )


class LanguageModule(Protocol):
    """What the pipeline needs from a language module."""

    LANGUAGE: str
    EXTENSIONS: tuple[str, ...]
    EXTRACTOR_VERSION: str  # part of the fact-cache key: bump on any change to extraction output

    def package_for(self, path: str, all_paths: frozenset[str]) -> str:
        """The module or package name of a repository-relative file path."""
        ...

    # Optional: ``package_for_root(root: Path, path: str, all_paths) -> str``, preferred by the pipeline
    # when a language needs the repository root to name packages (Go reads go.mod for import paths).

    def extract(self, path: str, source: bytes, package: str) -> FileFacts:
        """Declarations and reference sites of one file; parse failures as status, never raised."""
        ...

    def resolve(self, corpus: Corpus) -> Resolution:
        """Bind every reference site of the corpus to declarations (CANDIDATE at best for syntax)."""
        ...
