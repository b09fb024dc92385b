"""The SCIP route: from an index a SCIP indexer wrote to EXACT edges, the same for every language that has one.

The route owns what every SCIP adapter used to write for itself:

- the facts (``ScipUse``, ``ScipDefinition``, ``ScipFacts``): what the fact cache stores of one run;
- the occurrence loop (``document_uses``): each use occurrence with its edge source (the enclosing declaration),
  its syntactic use and its target, one of this repository's declarations or a symbol defined elsewhere;
- definition binding (``first_definitions``): a SCIP symbol is the declaration of the first file, in path
  order, that defines it, so the facts of a file do not depend on which other files a run checked;
- relationships (``document_relations``): a definition's ``is_implementation`` relationships as OVERRIDES,
  IMPLEMENTS and EXTENDS uses;
- provider binding (``bind``): a local target by its stable key, a foreign one only when exactly one registered
  repository provides it (``bind_foreign``: the repository's own first where the language says so), else
  AMBIGUOUS_PACKAGE_PROVIDER; cross-repository edges counted, every resolved site settled;
- the incremental merge (``merged``): a run over some files with the last run's facts for the others;
- the adapter (``ScipAdapter``): the seam's methods from a language's tool and hooks.

A language supplies ``ScipLanguage`` hooks: how a use site is classified (``sites``), how a symbol maps to a
target (``target``), which relationships it records (``relation``), who provides a foreign target
(``providers``, ``declaration``) and its provenance (``provenance``, ``edge_kind``); and how its indexer runs (its
``analyze``). A language whose indexer gives one symbol to several declarations keeps every definition
(``first_definitions``' ``every``) and tells them apart in its ``target``; one that reads more of an occurrence
than its start (its extent, its symbol) does so in ``occurrence_site``; its passes over syntax the index does not
record build ``ScipUse`` values with ``use_at``. Go shares the
outcome's ``settle`` and ``edge`` (``ExactOutcome``) and ``bind_foreign``, through ``ProviderHooks`` of its own uses.
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

import msgspec

from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import SymbolFact, UnresolvedFact
from indexer.languages.spec import ExactAdapter, ExactOutcome
from indexer.scip.decode import Document, Occurrence, Relationship, SymbolInformation
from indexer.scip.join import ColumnMap, CoveredSite, FileDeclarations
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

# -- facts: what the fact cache stores of one run ---------------------------------------------------------


class ScipUse(msgspec.Struct, array_like=True, frozen=True):
    """One resolved use: where (the site), from which declaration, how, and to what."""

    path: str
    line: int  # the site's position (1-based line, byte column), where the tree-sitter site is
    col: int
    source_qn: str
    source_kind: str
    use: str  # the language's word: call | import | type | callback | override | implements | extends | ...
    # Whether the use settles its site (the last segment of a chain, the one a candidate site resolves): an
    # edge's site is settled, and so is a site resolved outside every corpus. A relationship settles nothing.
    final: bool = True
    how: str = ""  # a refinement of the use (a Dart ``show``: import | export)
    target_path: str = ""  # "" = defined outside this repository: see package/file/member
    target_qn: str = ""
    target_kind: str = ""
    package: str = ""  # the provider's name as the index writes it (a module, an npm or pub package)
    file: str = ""  # the symbol's file inside that package, where the symbol names one
    member: str = ""  # dotted member path in it, "" = the module itself
    symbol: str = ""  # the SCIP symbol, where the language binds a foreign target by it
    source_path: str = ""  # "" = ``path``: where the source is declared when the use is written elsewhere


class ScipDefinition(msgspec.Struct, array_like=True, frozen=True):
    """A definition the analyzer made in one file, tied to our declaration (its qualified name, kind and start).

    ``synthesized``: the declaration is the analyzer's (a line tree-sitter could not parse). ``callable``: a
    variable whose type the checker prints as a function or constructor; else ``type_name``, the named type it
    prints (bind marks the variable callable when the repository declares one type of that name, callable).
    """

    symbol: str
    path: str
    qualified_name: str
    kind: str
    line: int
    col: int
    synthesized: bool = False
    callable: bool = False
    type_name: str = ""
    # What the analyzer states of the symbol where it defines it: a digest of its hover documentation (the
    # signature with the types the checker inferred) and its relationships. Part of the repository's interface
    # (indexer/interface.py): a consumer's run is cached on it, not on the provider's bytes.
    stated: str = ""


def stated_of(info: SymbolInformation | None) -> str:
    """``ScipDefinition.stated``: a short digest of the documentation and relationships SCIP states for a symbol."""
    if info is None:
        return ""
    h = hashlib.blake2b(digest_size=8)
    for text in info.documentation:
        h.update(text.encode("utf-8", "surrogatepass") + b"\0")
    for r in sorted(
        (r.symbol, r.is_reference, r.is_implementation, r.is_type_definition, r.is_definition)
        for r in info.relationships
    ):
        h.update(repr(r).encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def interface_of(facts: ScipFacts[Any]) -> list[tuple[str, str]]:
    """What a consumer's analyzer can see of a repository, from its run: each symbol it defines, with its kind and
    what the analyzer states of it, under the simple name a consumer writes to use it (indexer/interface.py);
    positions and bodies are left out."""

    def h(*parts: object) -> str:
        d = hashlib.blake2b(digest_size=10)
        for part in parts:
            d.update(str(part).encode("utf-8", "surrogatepass") + b"\0")
        return d.hexdigest()

    out = [("", h("failure", facts.failure)), *(("", h("excluded", p, why)) for p, why in facts.excluded)]
    for d in facts.definitions:
        name = d.qualified_name.rsplit(".", 1)[-1]
        out.append((name, h(d.symbol, d.path, d.qualified_name, d.kind, d.callable, d.type_name, d.stated)))
    return out


UnitsT = TypeVar("UnitsT")


class ScipFacts(msgspec.Struct, Generic[UnitsT], frozen=True):
    """The joined analyzer output of one repository, every part in path order (what the fact cache stores)."""

    analyzer_version: str
    uses: tuple[ScipUse, ...] = ()  # each document's uses, then its relationships, documents in path order
    external: tuple[CoveredSite, ...] = ()
    documents: int = 0
    occurrences: int = 0
    # Files left out after the analyzer crashed on them: (path, the analyzer's message). Their uses stay on
    # the CANDIDATE resolver.
    excluded: tuple[tuple[str, str], ...] = ()
    # The analyzer failed on the whole repository: cached too, so an unchanged re-index does not pay it again.
    failure: str = ""
    salvage_runs: int = 0
    # Declarations the analyzer defines on lines tree-sitter could not parse: (path, declaration).
    declarations: tuple[tuple[str, SymbolFact], ...] = ()
    # What an incremental pass needs of the last run: each file's definitions, each file's top-level
    # statements (the language's units), and each document's occurrence count.
    definitions: tuple[ScipDefinition, ...] = ()
    units: tuple[UnitsT, ...] = ()
    document_occurrences: tuple[tuple[str, int], ...] = ()
    # Parts of the repository the analyzer could not load (a Dart package): (where, why).
    not_loaded: tuple[tuple[str, str], ...] = ()
    parts: int = 0  # the parts (packages) it did analyse, where it runs once per part


def merged(
    previous: ScipFacts[Any],
    fresh: ScipFacts[Any],
    replaced: Collection[str],
    present: Collection[str],
    units: tuple[Any, ...],
    *,
    kept_declarations: bool,
) -> ScipFacts[Any]:
    """``fresh`` for the files it checked, ``previous`` for the others still there; every part in path order.

    ``kept_declarations``: the analyzer's declarations of the files outside the run are kept from ``previous``
    (else ``fresh`` holds them already: its join was given them).
    """

    def kept(path: str) -> bool:
        return path not in replaced and path in present

    counts = sorted(
        [c for c in previous.document_occurrences if kept(c[0])] + list(fresh.document_occurrences), key=_first
    )
    declarations = fresh.declarations
    if kept_declarations:
        declarations = tuple(
            sorted([d for d in previous.declarations if kept(d[0])] + list(fresh.declarations), key=_first)
        )
    return msgspec.structs.replace(
        fresh,
        uses=tuple(sorted([u for u in previous.uses if kept(u.path)] + list(fresh.uses), key=_path)),
        external=tuple(sorted([e for e in previous.external if kept(e.path)] + list(fresh.external), key=_path)),
        declarations=declarations,
        document_occurrences=tuple(counts),
        documents=len(counts),
        occurrences=sum(n for _p, n in counts),
        units=units,
    )


def _path(item: ScipUse | CoveredSite) -> str:
    return item.path


def _first(item: tuple[str, object]) -> str:
    return item[0]


# -- join: the hooks a language gives, and the loops over a document -------------------------------------


@dataclass(frozen=True, slots=True)
class UseSite:
    """What the syntax at an occurrence says: how it is used, and where the site is."""

    use: str
    line: int  # the site: the start of the expression (1-based line, byte column)
    col: int
    final: bool = True
    # Where the enclosing declaration is looked up when not at the site (a line that does not parse), or the
    # edge's source itself when the language's sites name it.
    source_col: int | None = None
    source: SymbolFact | None = None
    how: str = ""
    syntax: Any = None  # what the language's site hook read there (its syntax node), for its ``target``


class Local(NamedTuple):
    """A target among this repository's declarations: (path, qualified name, kind); ``use``, when the target
    decides how it is used (a path's qualifier: a type use of a type), else the site's."""

    path: str
    qualified_name: str
    kind: str
    use: str = ""


class Foreign(NamedTuple):
    """A target defined outside this repository, as the index names it: bound per corpus by its providers
    (``symbol``: the SCIP symbol, where the language binds by it; ``use`` as for ``Local``)."""

    package: str
    file: str = ""
    member: str = ""
    symbol: str = ""
    use: str = ""


class External:
    """A target outside every corpus kivgraph indexes (a standard library, lib.d.ts): no edge; the site settles."""


EXTERNAL = External()
Target = Local | Foreign | External

Defined = Mapping[str, tuple[str, SymbolFact]]


def local(found: tuple[str, SymbolFact]) -> Local:
    """The target a definition of this repository is."""
    return Local(found[0], found[1].qualified_name, found[1].kind)


def column_unit(position_encoding: int, default: str) -> str:
    """The unit of a document's columns: what it says, else the indexer's known default."""
    return {1: "utf-8", 2: "utf-16", 3: "utf-32"}.get(position_encoding, default)


UseT = TypeVar("UseT")


class ProviderHooks(Generic[UseT]):
    """How a language's uses of foreign targets bind to registered repositories (``bind_foreign``): the SCIP
    route's languages (``ScipLanguage``), and Go's go/types helper, whose uses are its own."""

    language: ClassVar[str]
    analyzer: ClassVar[str]
    prefer_own: ClassVar[bool] = True  # a foreign target the repository provides itself is its own

    def language_of(self, path: str) -> str:
        """The language id of a file (one folder may serve several)."""
        return self.language

    def package_of(self, path: str) -> str:
        """The package a file is in, for the rows about a file the analyzer left out."""
        return ""

    @abstractmethod
    def providers(self, use: UseT, modules: Any) -> list[tuple[str, str]]:
        """The registered (repository, directory) pairs that provide a foreign use's package."""

    @abstractmethod
    def declaration(self, use: UseT, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        """The provider's declaration a foreign use (from ``source``) names, by key; or None (the hook may have
        recorded why)."""

    @abstractmethod
    def unprovided(self, use: UseT, source: str, bound: Binding) -> None:
        """A foreign use no registered repository provides."""

    @abstractmethod
    def ambiguous(self, use: UseT, source: str, repositories: list[str], bound: Binding) -> None:
        """A foreign use more than one registered repository provides."""


class ScipLanguage(ProviderHooks[ScipUse]):
    """A language's hooks into the SCIP route (one instance per language)."""

    default_unit: ClassVar[str] = "utf-16"  # the column unit of a document that does not say
    locals: ClassVar[bool] = False  # the uses of ``local`` symbols reach the hooks (where they settle a site)
    self_edges: ClassVar[bool] = True  # a use of the declaration it is in is an edge (else neither edge nor settled)
    # The edge of a use that settles no site (a relationship) still replaces the candidate edges from its source
    # at its position (without settling the position's unresolved rows).
    relations_cover: ClassVar[bool] = False

    def unit(self, doc: Document) -> str:
        """The column unit of one document."""
        return column_unit(doc.position_encoding, self.default_unit)

    def canonical(self, symbol: str) -> str:
        """The symbol as the same declaration is named in every run."""
        return symbol

    @abstractmethod
    def sites(self, path: str, source: bytes) -> Callable[[int, int], UseSite | None]:
        """For one file: the use site an occurrence at (0-based line, byte column) is, or None (nothing we record)."""

    def occurrence_site(
        self, site_at: Callable[[int, int], UseSite | None], occ: Occurrence, line0: int, col: int
    ) -> UseSite | None:
        """The use site of one occurrence (at 0-based ``line0``, byte column ``col``): ``site_at`` there, unless the
        language reads more of the occurrence (its extent, its symbol)."""
        return site_at(line0, col)

    @abstractmethod
    def target(self, symbol: str, site: UseSite, found: tuple[str, SymbolFact] | None) -> Target | None:
        """What the symbol used at ``site`` is (``found``: this repository's declaration defining it, if any)."""

    def relation(
        self, child: tuple[str, SymbolFact], rel: Relationship, parent: tuple[str, SymbolFact] | None, symbol: str
    ) -> tuple[str, bool, Target] | None:
        """The relationship ``rel`` of the definition ``child`` to ``symbol`` (``parent``: our declaration of it)
        as (use, settles its site, target), or None when the language records no such relationship."""
        return None

    # -- bind (and ``ProviderHooks``) ----------------------------------------------------------------

    def unprovided(self, use: ScipUse, source: str, bound: Binding) -> None:
        """A foreign use no registered repository provides: the site is settled (a package nobody registered)."""
        if use.final:
            bound.settle(source, use.path, use.line, use.col)

    def ambiguity(self, use: ScipUse, repositories: list[str]) -> str:
        return "provided by " + ", ".join(sorted(repositories))

    def ambiguous(self, use: ScipUse, source: str, repositories: list[str], bound: Binding) -> None:
        """A foreign use more than one registered repository provides: an AMBIGUOUS row where it settles its site."""
        if use.final:
            name = use.member or use.file or use.package
            detail = self.ambiguity(use, repositories)
            bound.unresolved(use, source, name=name, reason=AMBIGUOUS, package=use.package, detail=detail)

    @abstractmethod
    def edge_kind(self, use: ScipUse, target_kind: str) -> EdgeKind:
        """The edge a use makes of a target of that kind."""

    @abstractmethod
    def provenance(self, use: ScipUse) -> Provenance:
        """What backs the edge of a use (the analyzer's definition for a relationship, its use otherwise)."""

    def preamble(self, facts: ScipFacts[Any], bound: Binding, modules: Any) -> None:
        """What the language records of a run before its uses (rows for parts it could not load, marks)."""


def first_definitions(
    per_path: Iterable[tuple[str, Iterable[tuple[str, SymbolFact, bool]]]],
    defined: dict[str, tuple[str, SymbolFact]],
    every: dict[str, list[tuple[str, SymbolFact]]] | None = None,
) -> dict[str, list[SymbolFact]]:
    """Fill ``defined`` (SCIP symbol -> (path, our declaration)) from each file's definitions (symbol, declaration,
    whether the declaration is the analyzer's own), files in the order given (path order): a symbol two files
    define is the first one's. Returns the analyzer's own declarations that won, by path.

    ``every``: for a language whose indexer gives one symbol to several declarations (told apart at each use by
    its ``target``), each declaration of a symbol, once, in order; the analyzer's own declarations returned are
    then all of them. The per-path iterables are read lazily: one may look at ``defined`` as it grows."""
    synthesized: dict[str, list[SymbolFact]] = {}
    for path, definitions in per_path:
        for symbol, decl, made in definitions:
            first = symbol not in defined
            if first:
                defined[symbol] = (path, decl)
            if every is not None:
                hits = every.setdefault(symbol, [])
                if all(h[1] is not decl for h in hits):
                    hits.append((path, decl))
            if made and (first or every is not None):
                synthesized.setdefault(path, []).append(decl)
    return synthesized


def document_uses(
    lang: ScipLanguage,
    path: str,
    doc: Document,
    source: bytes,
    fd: FileDeclarations,
    defined: Defined,
    uses: list[ScipUse],
    external: list[CoveredSite],
) -> int:
    """The uses of one document's occurrences (into ``uses`` and ``external``); how many occurrences it has."""
    cmap = ColumnMap(source, lang.unit(doc))
    site_at = lang.sites(path, source)
    n_occ = 0
    for occ in doc.occurrences:
        n_occ += 1
        if occ.is_definition or not occ.symbol or (occ.symbol.startswith("local ") and not lang.locals):
            continue
        line0 = occ.range[0]
        site = lang.occurrence_site(site_at, occ, line0, cmap.byte_col(line0, occ.range[1]))
        if site is None:
            continue
        src = site.source or fd.enclosing(site.line, site.col if site.source_col is None else site.source_col)
        if src is None:
            continue
        symbol = lang.canonical(occ.symbol)
        target = lang.target(symbol, site, defined.get(symbol))
        if target is None:
            continue
        if isinstance(target, External):
            if site.final:
                external.append(CoveredSite(path, site.line, site.col, src.qualified_name, src.kind))
            continue
        uses.append(use_at(path, site.line, site.col, src, site.use, target, final=site.final, how=site.how))
    return n_occ


def use_at(
    path: str,
    line: int,
    col: int,
    source: SymbolFact,
    use: str,
    target: Local | Foreign,
    *,
    final: bool = True,
    how: str = "",
    source_path: str = "",
) -> ScipUse:
    """The use at (path, line, col) from ``source`` of a target (whose ``use``, when it has one, is the use)."""
    at = (path, line, col, source.qualified_name, source.kind, target.use or use, final, how)
    if isinstance(target, Local):
        return ScipUse(
            *at,
            target_path=target.path,
            target_qn=target.qualified_name,
            target_kind=target.kind,
            source_path=source_path,
        )
    return ScipUse(
        *at,
        package=target.package,
        file=target.file,
        member=target.member,
        symbol=target.symbol,
        source_path=source_path,
    )


def document_relations(lang: ScipLanguage, path: str, doc: Document, defined: Defined) -> list[ScipUse]:
    """The relationships the language records on one document's definitions, as uses at the declaration."""
    out: list[ScipUse] = []
    for info in doc.symbols:
        child = defined.get(lang.canonical(info.symbol))
        if child is None:
            continue
        decl = child[1]
        for rel in info.relationships:
            symbol = lang.canonical(rel.symbol)
            found = lang.relation(child, rel, defined.get(symbol), symbol)
            if found is None:
                continue
            use, final, target = found
            if isinstance(target, External):
                continue
            out.append(use_at(path, decl.start_line, decl.start_col, decl, use, target, final=final))
    return out


def source_reader(root: Path) -> Callable[[str], bytes]:
    """A repository file's bytes by path, each read once (b"" when it cannot be read)."""
    sources: dict[str, bytes] = {}

    def source_of(path: str) -> bytes:
        if path not in sources:
            try:
                sources[path] = (root / path).read_bytes()
            except OSError:
                sources[path] = b""
        return sources[path]

    return source_of


class StaleDefinition(Exception):
    """A definition kept from the last run names a declaration its file no longer has."""


def kept_definitions(
    known: Iterable[ScipDefinition],
    symbols_of: Callable[[str], Iterable[SymbolFact]],
    skip: Callable[[ScipDefinition], bool],
) -> Iterable[tuple[ScipDefinition, SymbolFact]]:
    """The definitions of files a run did not check, each tied to the same declaration as in the run that did
    (``symbols_of``: a file's declarations, the analyzer's own included); ``StaleDefinition`` when one is gone."""
    tables: dict[str, dict[tuple[str, str, int, int], SymbolFact]] = {}
    for t in known:
        if skip(t):
            continue
        table = tables.get(t.path)
        if table is None:
            symbols = list(symbols_of(t.path))
            table = tables[t.path] = {
                (s.qualified_name, s.kind, s.start_line, s.start_col): s for s in reversed(symbols)
            }
        decl = table.get((t.qualified_name, t.kind, t.line, t.col))
        if decl is None:
            raise StaleDefinition(f"{t.path} no longer declares {t.qualified_name} ({t.kind}) at {t.line}:{t.col}")
        yield t, decl


# -- bind: stable keys, providers, the outcome ------------------------------------------------------------


class BoundTarget(NamedTuple):
    """A use's target as a stable key, in the repository that declares it; the edge's confidence and
    provenance when not the language's usual ones (a published build mapped to its source)."""

    repository: str
    key: str | None
    kind: str
    confidence: Confidence | None = None
    provenance: Provenance | None = None


AMBIGUOUS = "AMBIGUOUS_PACKAGE_PROVIDER"  # more than one registered repository provides the target


@dataclass
class Binding:
    """One repository's outcome being bound: what the hooks read and record into."""

    repo: str
    corpus: Corpus
    out: ExactOutcome
    lang: ProviderHooks[Any]
    modules: Any  # the language's per-corpus table (``ExactAdapter.modules``)

    def settle(self, source: str, path: str, line: int, col: int) -> None:
        """The site is decided: candidate edges and unresolved rows there give way."""
        self.out.settle(source, path, line, col)

    def row(
        self,
        *,
        name: str,
        reason: str,
        detail: str,
        path: str = "",
        line: int = 0,
        col: int = 0,
        source: str = "",
        package: str = "",
    ) -> None:
        """An unresolved row of this repository, in the language of its file (settles nothing)."""
        self.out.unresolved.append(
            UnresolvedFact(
                name=name,
                reason=reason,
                repository=self.repo,
                path=path,
                line=line,
                col=col,
                language=self.lang.language_of(path),
                source=source,
                package=package,
                detail=detail,
            )
        )

    def unresolved(self, use: ScipUse, source: str, *, name: str, reason: str, package: str, detail: str) -> None:
        """A row for a use that could not be bound, at its site; the site is settled."""
        self.row(
            name=name,
            reason=reason,
            detail=detail,
            path=use.path,
            line=use.line,
            col=use.col,
            source=source,
            package=package,
        )
        self.settle(source, use.path, use.line, use.col)


def bind(facts: ScipFacts[Any], repo: str, corpus: Corpus, modules: Any, lang: ScipLanguage) -> ExactOutcome:
    """Turn joined uses into EXACT edges between stable keys; a foreign target needs exactly one provider."""
    out = ExactOutcome(repository=repo, excluded=dict(facts.excluded))
    bound = Binding(repo, corpus, out, lang, modules)
    for path, why in facts.excluded:
        bound.row(
            name="",
            reason="ANALYZER_FAILED",
            path=path,
            package=lang.package_of(path),
            detail=f"{lang.analyzer} crashed on this file, so it was analysed without it ({why}); its uses are "
            "CANDIDATE",
        )
    lang.preamble(facts, bound, modules)
    for c in facts.external:
        source = corpus.key_of(repo, c.path, c.source_qn, c.source_kind)
        if source is not None:
            out.settle(source, c.path, c.line, c.col)
    for u in facts.uses:
        source = corpus.key_of(repo, u.source_path or u.path, u.source_qn, u.source_kind)
        if source is None:
            continue
        if u.target_path:
            target = BoundTarget(repo, corpus.key_of(repo, u.target_path, u.target_qn, u.target_kind), u.target_kind)
        else:
            found = bind_foreign(lang, u, source, bound)
            if found is None:
                continue
            target = found
        if target.key is None or (target.key == source and not lang.self_edges):
            continue  # an attribute, a local class member: the analyzer knows it, we declare no such node
        if u.final:
            out.settle(source, u.path, u.line, u.col)
        elif lang.relations_cover:
            out.covered.add((source, u.line, u.col))
        out.edge(
            lang.edge_kind(u, target.kind),
            source,
            target.key,
            target.provenance or lang.provenance(u),
            u.line,
            u.col,
            cross=target.repository != repo,
            confidence=target.confidence or Confidence.EXACT_TYPECHECKED,
        )
    return out


def bind_foreign(lang: ProviderHooks[UseT], use: UseT, source: str, bound: Binding) -> BoundTarget | None:
    """A use's target defined outside the repository: the declaration of its one provider (the repository's own
    first where the language says so), by key; ``unprovided`` when none provides it, ``ambiguous`` when more than
    one does (both record what the language says of it), and None."""
    places = lang.providers(use, bound.modules)
    if lang.prefer_own:
        places = [p for p in places if p[0] == bound.repo][:1] or places
    if not places:
        lang.unprovided(use, source, bound)
        return None
    if len(places) > 1:
        lang.ambiguous(use, source, [r for r, _d in places], bound)
        return None
    return lang.declaration(use, source, places[0], bound)


# -- the adapter ---------------------------------------------------------------------------------------------

FactsT = TypeVar("FactsT", bound=ScipFacts[Any])


class Tool(Protocol):
    """How an analyzer is installed and identified (``indexer.languages.npm_tool.NpmTool``, say)."""

    def install(self) -> str: ...
    def executable(self) -> Path: ...
    def run_version(self) -> str: ...
    def identity(self) -> str: ...


class ScipAdapter(ExactAdapter[FactsT]):
    """A SCIP indexer behind the language seam: its tool, its hooks and its run; ``bind`` is the route's."""

    hooks: ClassVar[ScipLanguage]
    tool: ClassVar[Tool]

    def install(self) -> str:
        return self.tool.install()

    def executable(self) -> Path:
        return self.tool.executable()

    def version(self) -> str:
        return self.tool.run_version()

    def identity(self) -> str:
        return self.tool.identity()

    @abstractmethod
    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> FactsT:
        """Run the indexer over one repository and join its output."""

    def bind(self, facts: FactsT, repo: str, corpus: Corpus, modules: Any) -> ExactOutcome:
        return bind(facts, repo, corpus, modules, self.hooks)
