"""An index built elsewhere: a SCIP index a repository names (``scip = "path/to/index.scip"``) made EXACT edges.

Any SCIP indexer's output (scip-clang, scip-dotnet, scip-ruby, scip-java for Scala, …) is read once per run.
Each document is one of two kinds:

- a file kivgraph extracted itself (its language has a grammar): the occurrences are joined with the
  tree-sitter declarations as every SCIP adapter joins them (a use's source is its enclosing declaration,
  a definition binds to the declaration whose span holds it and that has its name);
- a file of a language kivgraph has no grammar for: its declarations are the index's own definitions,
  named by their descriptors (``geo/Shapes.total().`` is ``geo.Shapes.total``; a later overload keeps its
  disambiguator, ``geo.Shapes.total(+1)``), of the kind the index gives (``SymbolInformation.kind``, else the
  descriptor's suffix), spanning their ``enclosing_range`` when the index has one, else from their name to
  where the next declaration of the same or an outer scope begins (the index's nesting, not a parse).

A use is a call when its name is followed by ``(`` and its target is callable, a type use when its target is
a type, an import when the index says so (``SymbolRole.Import``), else a reference. A method whose symbol
has an ``is_implementation`` relationship to another method IMPLEMENTS it (the other is an interface's or
a trait's) or OVERRIDES it; a pair the index lists in both directions (scip-java's inverse relationships)
has no direction and is left out. A symbol another repository's index defines (the same SCIP symbol
string) binds across repositories. Everything is EXACT_TYPECHECKED with provenance SCIP_INDEX_USE or
SCIP_INDEX_DEF: the indexer that wrote the file type-checked it, not kivgraph.

The edges replace, at the sites the index covers, the CANDIDATE answers and the language's own analyzer's.
``status`` names the index, the tool and version that wrote it, the commit that last changed it (when the
repository tracks it in git) and how many of its documents' files are newer than it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from indexer.facts import EdgeFact, FileFacts, SymbolFact
from indexer.scip.decode import Document, Index, ScipDecodeError, decode_index
from indexer.scip.join import (
    METHOD,
    NAMESPACE,
    TERM,
    TYPE,
    ColumnMap,
    Descriptor,
    FileDeclarations,
    ScipSymbol,
    parse_symbol,
)
from snapshot_format import languages as table
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

# SCIP's SymbolInformation.Kind values kivgraph names (scip.proto), as declaration kinds.
_KINDS = {
    7: "class",
    8: "constant",
    9: "constructor",
    11: "enum",
    12: "enum_member",
    15: "field",
    17: "function",
    18: "getter",
    21: "interface",
    25: "macro",
    26: "method",
    33: "class",  # a Scala object
    41: "property",
    42: "interface",  # a protocol
    45: "setter",
    49: "struct",
    53: "trait",
    54: "type",
    55: "type_alias",
    59: "union",
    60: "variable",
    61: "variable",
    66: "method",  # abstract
    67: "method",
    68: "method",
    69: "method",
    70: "method",
    75: "class",
    76: "method",
    77: "field",
    79: "field",
    80: "method",  # static
    81: "property",
    82: "variable",
}
_TYPES = frozenset({"class", "interface", "enum", "struct", "trait", "type", "type_alias", "union"})
_CALLABLE = frozenset({"method", "function", "constructor", "macro", "getter", "setter"})
SOURCE_KINDS = frozenset(
    {"module", "class", "interface", "enum", "struct", "trait", "union", "function", "method", "constructor", "func"}
)
# Languages by file extension, for documents whose index names none: the language table's own, then these.
_BY_EXTENSION = {
    ".scala": "scala",
    ".sc": "scala",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".swift": "swift",
    ".php": "php",
}


class ExternalIndexError(Exception):
    """The named index cannot be read; the message names the repository's ``scip`` setting."""


@dataclass
class ExternalIndex:
    repository: str
    root: Path
    path: Path  # the index file
    index: Index
    offset: str  # the index's project root relative to the repository root ("" when they are one)
    commit: str  # the commit that last changed the index file, or why there is none
    tool: str

    def document_path(self, doc: Document) -> str:
        rel = doc.relative_path.lstrip("/")
        return f"{self.offset}/{rel}" if self.offset else rel


def load(repository: str, root: Path, setting: Path) -> ExternalIndex:
    """Decode a repository's named index; ExternalIndexError naming the setting when it cannot be read."""
    try:
        data = setting.read_bytes()
    except OSError as exc:
        raise ExternalIndexError(f"repository {repository!r}: scip = {str(setting)!r} cannot be read: {exc}") from None
    try:
        index = decode_index(data)
    except ScipDecodeError as exc:
        raise ExternalIndexError(
            f"repository {repository!r}: scip = {str(setting)!r} is not a SCIP index: {exc}"
        ) from None
    offset = ""
    project = index.metadata.project_root
    if project.startswith("file:"):
        where = Path(unquote(urlparse(project).path))
        try:
            offset = where.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            offset = ""  # written on another machine: its paths are taken as the repository's
        offset = "" if offset == "." else offset
    tool = f"{index.metadata.tool_name} {index.metadata.tool_version}".strip() or "an unnamed SCIP indexer"
    return ExternalIndex(repository, root, setting, index, offset, _commit_of(root, setting), tool)


def _commit_of(root: Path, index_file: Path) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%H", "--", str(index_file)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "no commit (git did not answer)"
    commit = proc.stdout.strip()
    return commit[:12] if proc.returncode == 0 and commit else "no commit (the index is not tracked by git)"


def language_of(doc: Document, path: str) -> str:
    lang = doc.language.strip().lower()
    if lang:
        return {"c++": "cpp", "c#": "csharp", "cpp": "cpp"}.get(lang, lang)
    suffix = Path(path).suffix.lower()
    return table.BY_EXTENSION.get(suffix) or _BY_EXTENSION.get(suffix, suffix.lstrip(".") or "unknown")


def _unit(doc: Document) -> str:
    return {1: "utf-8", 2: "utf-16", 3: "utf-32"}.get(doc.position_encoding, "utf-8")


# -- declarations of a language kivgraph cannot parse ------------------------------------------------------


def _is_declaration(sym: ScipSymbol | None) -> bool:
    """A type, term or method (a constructor is its class's: uses of ``<init>`` bind to the class)."""
    return (
        sym is not None
        and bool(sym.descriptors)
        and sym.descriptors[-1].suffix in (TYPE, TERM, METHOD)
        and sym.descriptors[-1].name != "<init>"
    )


def _member(d: Descriptor) -> str:
    return f"{d.name}({d.disambiguator})" if d.suffix == METHOD and d.disambiguator else d.name


def qualified_name(sym: ScipSymbol) -> tuple[str, str]:
    """(qualified name, container's qualified name) of a declaration symbol, from its descriptors."""
    parts = [d.name if d.suffix == NAMESPACE else _member(d) for d in sym.descriptors]
    return ".".join(parts), ".".join(parts[:-1]) if len(sym.descriptors) > 1 and sym.descriptors[
        -2
    ].suffix != NAMESPACE else ""


def index_only_facts(ext: ExternalIndex, doc: Document, path: str, source: bytes) -> FileFacts:
    """A file's declarations as the index defines them (a language without a grammar in kivgraph)."""
    info = {s.symbol: s for s in doc.symbols}
    cmap = ColumnMap(source, _unit(doc))
    lines = source.split(b"\n")
    defs: list[tuple[tuple[int, int], ScipSymbol, str, object]] = []
    seen: set[str] = set()
    for occ in doc.occurrences:
        if not occ.is_definition or occ.symbol in seen or occ.symbol.startswith("local "):
            continue
        sym = parse_symbol(occ.symbol)
        if not _is_declaration(sym) or occ.range[:2] == occ.range[2:]:
            continue
        seen.add(occ.symbol)
        defs.append(((occ.range[0], cmap.byte_col(occ.range[0], occ.range[1])), sym, occ.symbol, occ))  # type: ignore[arg-type]
    defs.sort(key=lambda d: d[0])
    package = ""
    symbols: list[SymbolFact] = [
        SymbolFact(
            name=path.rsplit("/", 1)[-1],
            qualified_name=path,
            kind="module",
            start_line=1,
            start_col=0,
            end_line=len(lines),
            end_col=len(lines[-1]) if lines else 0,
        )
    ]
    for i, (start, sym, symbol, occ) in enumerate(defs):
        assert sym is not None
        qn, container = qualified_name(sym)
        namespace = ".".join(d.name for d in sym.descriptors if d.suffix == NAMESPACE)
        package = package or namespace
        si = info.get(symbol)
        kind = _KINDS.get(si.kind if si is not None else 0) or _suffix_kind(sym)
        span = occ.enclosing_range  # type: ignore[attr-defined]
        if span is not None:
            end = (span[2] + 1, cmap.byte_col(span[2], span[3]))
            begin = (span[0] + 1, cmap.byte_col(span[0], span[1]))
        else:
            begin = (start[0] + 1, start[1])
            end = _implied_end(defs, i, container, lines)
        line_text = lines[start[0]].decode("utf-8", "replace") if start[0] < len(lines) else ""
        symbols.append(
            SymbolFact(
                name=sym.descriptors[-1].name,
                qualified_name=qn,
                kind=kind,
                start_line=begin[0],
                start_col=begin[1],
                end_line=end[0],
                end_col=end[1],
                signature=" ".join(line_text.split())[:200],
                doc=" ".join(" ".join(si.documentation).split())[:200] if si is not None else "",
                exported=True,
                container=container,
            )
        )
    return FileFacts(path=path, language=language_of(doc, path), package=package, symbols=tuple(symbols))


def _suffix_kind(sym: ScipSymbol) -> str:
    last = sym.descriptors[-1].suffix
    inner = len(sym.descriptors) > 1 and sym.descriptors[-2].suffix != NAMESPACE
    if last == TYPE:
        return "class"
    if last == METHOD:
        return "method" if inner else "function"
    return "field" if inner else "variable"


def _implied_end(defs: list, i: int, container: str, lines: list[bytes]) -> tuple[int, int]:
    """Where a declaration without an enclosing range ends: before the next one of its scope or an outer one."""
    for start, sym, _symbol, _occ in defs[i + 1 :]:
        _qn, other_container = qualified_name(sym)
        if (
            other_container == container
            or (container.startswith(other_container) and len(other_container) < len(container))
            or not other_container
        ):
            line = start[0]  # 0-based line of the next declaration's name: this one ends on the line before
            while line > defs[i][0][0] + 1 and not lines[line - 1].strip():
                line -= 1
            return line, len(lines[line - 1]) if line - 1 < len(lines) else 0
    return len(lines), len(lines[-1]) if lines else 0


# -- edges -----------------------------------------------------------------------------------------------------


@dataclass
class ExternalOutcome:
    repository: str
    edges: list[EdgeFact] = field(default_factory=list)
    covered: set[tuple[str, int, int]] = field(default_factory=set)
    positions: set[tuple[str, str, int, int]] = field(default_factory=set)  # (repository, path, line, col)
    documents: int = 0
    joined: int = 0  # documents joined with kivgraph's own declarations
    stale: int = 0  # documents whose file is newer than the index
    cross_repository: int = 0
    missing: int = 0  # documents whose file is not in the repository


def _definition_name(sym: ScipSymbol) -> str:
    last = sym.descriptors[-1]
    if last.name == "<init>" and len(sym.descriptors) > 1:
        return sym.descriptors[-2].name
    return last.name


def definitions(
    ext: ExternalIndex, files: dict[str, FileFacts], sources: dict[str, bytes]
) -> dict[str, tuple[str, str, SymbolFact]]:
    """Each global symbol the index defines -> (repository, path, declaration) it binds to."""
    out: dict[str, tuple[str, str, SymbolFact]] = {}
    for doc in sorted(ext.index.documents, key=lambda d: d.relative_path):
        path = ext.document_path(doc)
        ff = files.get(path)
        if ff is None:
            continue
        fd = FileDeclarations(ff.symbols, SOURCE_KINDS)
        cmap = ColumnMap(sources.get(path, b""), _unit(doc))
        by_qn = {s.qualified_name: s for s in ff.symbols}
        for occ in doc.occurrences:
            if not occ.is_definition or occ.symbol.startswith("local ") or occ.symbol in out:
                continue
            sym = parse_symbol(occ.symbol)
            if sym is None or not sym.descriptors or sym.descriptors[-1].suffix not in (TYPE, TERM, METHOD):
                continue
            decl = fd.declared_at(occ.range[0] + 1, cmap.byte_col(occ.range[0], occ.range[1]), _definition_name(sym))
            if decl is None:
                decl = by_qn.get(qualified_name(sym)[0])  # an index-only file's own declaration
            if decl is not None and decl.kind != "module":
                out[occ.symbol] = (ext.repository, path, decl)
    return out


def _followed_by_paren(source: bytes, line0: int, end_col: int) -> bool:
    lines = source.split(b"\n", line0 + 1)
    rest = lines[line0][end_col:] if line0 < len(lines) else b""
    return rest.lstrip()[:1] == b"("


def edges_of(
    ext: ExternalIndex,
    files: dict[str, FileFacts],
    sources: dict[str, bytes],
    defined: dict[str, tuple[str, str, SymbolFact]],
    key_of: Callable[[str, str, str, str], str | None],
    every_file: Mapping[tuple[str, str], FileFacts],
) -> ExternalOutcome:
    """The index's uses and relationships as EXACT edges between stable keys."""
    out = ExternalOutcome(ext.repository)
    kinds_by_qn: dict[tuple[str, str], dict[str, str]] = {}
    for doc in sorted(ext.index.documents, key=lambda d: d.relative_path):
        path = ext.document_path(doc)
        ff = files.get(path)
        if ff is None:
            out.missing += 1
            continue
        out.documents += 1
        src = sources.get(path, b"")
        cmap = ColumnMap(src, _unit(doc))
        fd = FileDeclarations(ff.symbols, SOURCE_KINDS)
        for occ in doc.occurrences:
            if occ.is_definition or occ.symbol.startswith("local ") or not occ.symbol:
                continue
            target = defined.get(occ.symbol)
            if target is None:
                continue
            line0 = occ.range[0]
            col = cmap.byte_col(line0, occ.range[1])
            source = fd.enclosing(line0 + 1, col)
            if source is None:
                continue
            source_key = key_of(ext.repository, path, source.qualified_name, source.kind)
            target_key = key_of(target[0], target[1], target[2].qualified_name, target[2].kind)
            if source_key is None or target_key is None or source_key == target_key:
                continue
            kind = target[2].kind
            if occ.is_import:
                edge = EdgeKind.IMPORTS_SYMBOL
            elif kind in _CALLABLE or kind == "class":
                end = cmap.byte_col(occ.range[2], occ.range[3])
                called = _followed_by_paren(src, occ.range[2], end) or occ.range[:2] == occ.range[2:]
                edge = (
                    EdgeKind.CALLS_DIRECT if called else EdgeKind.TYPE_USES if kind == "class" else EdgeKind.REFERENCES
                )
            elif kind in _TYPES:
                edge = EdgeKind.TYPE_USES
            else:
                edge = EdgeKind.REFERENCES
            if target[0] != ext.repository:
                out.cross_repository += 1
            out.covered.add((source_key, line0 + 1, col))
            out.positions.add((ext.repository, path, line0 + 1, col))
            out.edges.append(
                EdgeFact(
                    int(edge),
                    source_key,
                    target_key,
                    int(Confidence.EXACT_TYPECHECKED),
                    int(Provenance.SCIP_INDEX_USE),
                    line0 + 1,
                    col,
                )
            )
        pairs = {(s.symbol, r.symbol) for s in doc.symbols for r in s.relationships if r.is_implementation}
        for info in doc.symbols:
            child = defined.get(info.symbol)
            if child is None or child[0] != ext.repository or child[2].kind not in _CALLABLE:
                continue
            for rel in info.relationships:
                parent = defined.get(rel.symbol) if rel.is_implementation else None
                if parent is None or parent[2].kind not in _CALLABLE or (rel.symbol, info.symbol) in pairs:
                    continue
                owner_kinds = kinds_by_qn.setdefault(
                    (parent[0], parent[1]), {s.qualified_name: s.kind for s in _symbols_of(every_file, parent)}
                )
                interface = owner_kinds.get(parent[2].container, "") in ("interface", "trait")
                source_key = key_of(child[0], child[1], child[2].qualified_name, child[2].kind)
                target_key = key_of(parent[0], parent[1], parent[2].qualified_name, parent[2].kind)
                if source_key is None or target_key is None:
                    continue
                out.edges.append(
                    EdgeFact(
                        int(EdgeKind.IMPLEMENTS if interface else EdgeKind.OVERRIDES),
                        source_key,
                        target_key,
                        int(Confidence.EXACT_TYPECHECKED),
                        int(Provenance.SCIP_INDEX_DEF),
                        child[2].start_line,
                        child[2].start_col,
                    )
                )
    return out


def _symbols_of(
    files: Mapping[tuple[str, str], FileFacts], target: tuple[str, str, SymbolFact]
) -> Iterable[SymbolFact]:
    ff = files.get((target[0], target[1]))
    return ff.symbols if ff is not None else ()
