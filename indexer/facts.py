"""What a language extractor produces for one file (cached) and what resolution produces.

Extraction is per file and depends only on the file's bytes, its path and the
extractor version, so its output is cached in the fact cache. Resolution
needs the whole corpus (every repository's symbols) and runs on each index.
"""

from __future__ import annotations

import msgspec


class SymbolFact(msgspec.Struct, array_like=True, frozen=True):
    """A declaration found by an extractor. Lines 1-based, columns 0-based (bytes)."""

    name: str
    qualified_name: str
    kind: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    signature: str = ""
    doc: str = ""
    exported: bool = False
    container: str = ""  # qualified name of the enclosing declaration, "" at top level
    # A variable (or constant) whose value is a function, a class or a callable the extractor can see
    # (records.Symbol.callable; docs/surface.md §11.9 lists what counts per language).
    callable: bool = False


class Site(msgspec.Struct, array_like=True, frozen=True):
    """A syntactic occurrence that resolution will try to bind.

    ``kind`` and ``extra`` are the language module's own vocabulary; the
    pipeline only stores and hands them back to the same language's resolver.
    """

    kind: str
    name: str
    line: int
    col: int
    enclosing: str  # qualified name of the innermost enclosing declaration ("" = the module symbol)
    extra: tuple[str, ...] = ()


class FileFacts(msgspec.Struct, frozen=True):
    """Everything extracted from one file."""

    path: str
    language: str
    package: str  # module or package name the file belongs to
    status: str = "indexed"  # "indexed" | "partial" (a syntax error; the rest extracted) | "parse_failed"
    reason: str = ""
    symbols: tuple[SymbolFact, ...] = ()
    sites: tuple[Site, ...] = ()
    # A partial file's identifiers on the lines that did not parse: (name, line, col). Uses there are unknown.
    unparsed: tuple[tuple[str, int, int], ...] = ()

    @property
    def parsed(self) -> bool:
        """Its declarations and sites are usable: indexed, or partial (everything outside the error lines)."""
        return self.status in ("indexed", "partial")


class EdgeFact(msgspec.Struct, frozen=True):
    """A resolved symbol-to-symbol fact (keys are text stable keys)."""

    kind: int
    source: str
    target: str
    confidence: int
    provenance: int
    line: int
    col: int


class UnresolvedFact(msgspec.Struct, frozen=True):
    """A reference resolution could not bind."""

    name: str
    reason: str
    repository: str
    path: str = ""
    line: int = 0
    col: int = 0
    language: str = ""
    source: str = ""
    package: str = ""
    detail: str = ""


class PackageDependencyFact(msgspec.Struct, frozen=True):
    consumer_repository: str
    consumer_package: str
    provider_repository: str
    provider_package: str
    path: str = ""
    line: int = 0
