"""Record types stored in a generation (msgspec Structs, encoded with msgpack).

Rules for evolving them (see FORMAT.md): fields are only ever appended, always
with a default; a field's annotation never changes; a removed field is
renamed ``_unused_N`` and kept. Every change updates the fingerprint in
tests/test_format_fingerprint.py together with FEATURE_VERSION or
FORMAT_VERSION in versions.py.
"""

from __future__ import annotations

import msgspec


class _Record(msgspec.Struct, array_like=True, frozen=True, omit_defaults=True):
    """Base of every stored record: positional arrays, trailing defaults omitted."""


class LanguageAnalysis(_Record, frozen=True):
    """How one language of one repository was analysed in this generation."""

    language: str
    # "exact" (an analyzer resolved edges), "fallback" (tree-sitter candidates only), "failed", or (feature 6)
    # "pending": a CANDIDATE generation published before the exact pass; ``reason`` names the pending files.
    mode: str
    analyzer: str = ""
    analyzer_version: str = ""
    reason: str = ""
    files: int = 0
    seconds: float = 0.0


class Repository(_Record, frozen=True):
    """A registered repository as it was indexed."""

    name: str
    root: str
    languages: tuple[str, ...] = ()
    commit: str = ""
    branch: str = ""
    dirty: bool = False
    files: int = 0
    symbols: int = 0
    analyses: tuple[LanguageAnalysis, ...] = ()


class File(_Record, frozen=True):
    """A discovered file: indexed, failed to parse, or skipped with a reason."""

    repository: str
    path: str
    language: str
    content_hash: str = ""  # SHA-256 hex of the bytes analysed
    size: int = 0
    # "indexed" | "partial" (a syntax error: declarations and uses outside the lines that do not parse are
    # kept; the reason names the lines) | "parse_failed" | "skipped"
    status: str = "indexed"
    reason: str = ""
    symbols: int = 0
    package: str = ""  # Python module name, Go package, ...
    # "exact" | "fallback" | "" (not analysed) | "pending" (feature 6: the file changed, or depends on a change,
    # and its edges are CANDIDATE until the exact pass publishes the next generation)
    analysis: str = ""
    # feature 5: the file matches its language's test patterns (a test, a fixture, testdata); older generations
    # read False here, and readers fall back to the path patterns of their time (versions.MIN_FEATURE_FOR)
    test: bool = False


class Symbol(_Record, frozen=True):
    """A declaration. Lines are 1-based, columns 0-based (bytes)."""

    key: str
    name: str
    qualified_name: str
    kind: str
    language: str
    repository: str
    path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    signature: str = ""
    doc: str = ""
    exported: bool = False
    container: str = ""  # stable key of the enclosing declaration, "" at top level
    package: str = ""
    # feature 8: a variable or constant whose value is a function, a class or another callable its extractor (or
    # the TypeScript checker) can see; get_blast_radius lists it by default. On a TypeScript type alias or
    # interface: its values are callable.
    callable: bool = False


class Edge(_Record, frozen=True):
    """A symbol-to-symbol fact. The evidence position is in the source symbol's file."""

    kind: int  # vocab.EdgeKind
    source: str
    target: str
    confidence: int  # vocab.Confidence
    provenance: int  # vocab.Provenance
    line: int = 0
    col: int = 0
    count: int = 1  # occurrences folded into this fact (same source, target, kind, provenance)


class EdgeValue(_Record, frozen=True):
    """The value stored under an edge key; the key carries kind, ends and provenance."""

    confidence: int
    line: int = 0
    col: int = 0
    count: int = 1


class Unresolved(_Record, frozen=True):
    """A reference the indexer saw but could not bind, kept with its reason."""

    name: str  # requested symbol (unqualified, or dotted as written); "" for a scope failure
    reason: str
    repository: str
    path: str = ""  # "" when the failure names no file (a package or module scope)
    line: int = 0
    col: int = 0
    language: str = ""
    source: str = ""  # stable key of the enclosing declaration, when known
    package: str = ""  # requested package or module
    detail: str = ""


class PackageDependency(_Record, frozen=True):
    """A consumer repository's package imports a package another registered repository provides."""

    consumer_repository: str
    consumer_package: str
    provider_repository: str
    provider_package: str
    path: str = ""  # first consumer file that imports it
    line: int = 0
    count: int = 1


class Counts(_Record, frozen=True):
    """What the generation holds."""

    repositories: int = 0
    files: int = 0
    symbols: int = 0
    edges: int = 0
    unresolved: int = 0
    package_dependencies: int = 0
    failed_files: int = 0
    skipped_files: int = 0
    partial_files: int = 0  # feature 4: counted in ``files`` too


# File statuses whose declarations are in the graph.
PARSED_STATUSES: tuple[str, ...] = ("indexed", "partial")


class CountEntry(_Record, frozen=True):
    key: str
    count: int


class Breakdown(_Record, frozen=True):
    """Histograms computed once at index time so status is a key read."""

    edges_by_kind: tuple[CountEntry, ...] = ()
    edges_by_confidence: tuple[CountEntry, ...] = ()
    unresolved_by_reason: tuple[CountEntry, ...] = ()
    symbols_by_language: tuple[CountEntry, ...] = ()
    files_by_language: tuple[CountEntry, ...] = ()


ALL_RECORD_TYPES: tuple[type[msgspec.Struct], ...] = (
    LanguageAnalysis,
    Repository,
    File,
    Symbol,
    Edge,
    EdgeValue,
    Unresolved,
    PackageDependency,
    Counts,
    CountEntry,
    Breakdown,
)
