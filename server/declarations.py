"""One declaration per tool: a msgspec struct whose fields are the tool's arguments (docs/surface.md §13).

Each field states its description, its default and its bounds once (``Meta``: ``ge``/``le`` for integers,
``min_length``/``max_length`` for arrays and strings, ``extra={"enum": …}`` for a closed vocabulary in its
documented order, ``extra={"languages": True}`` for the enum the served generation fills). From the struct
come both the ``tools/list`` input schema (``input_schema``) and the reading of a call (``server/args.py``:
the accepted names, each field's default, range and choices), so a default or a bound is never written twice.
Descriptions hold no digit (numbers live in the schema's own ``default``, ``minimum`` and ``maximum``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from server.queries.hierarchy import RELATIONS
from server.queries.references import DEFAULT_EXCLUDED, REFERENCE_VOCABULARY
from server.queries.symbols import MODES
from server.queries.traverse import DEFAULT_DEPTH, DEFAULT_MAX_NODES, MAX_DEPTH, MAX_NODES
from snapshot_format.languages import IDS as LANGUAGES
from snapshot_format.vocab import Confidence

MAX_DIFF_TEXT = 1 << 20  # characters of get_blast_radius changes.diff
MAX_SOURCE_SYMBOLS = 20
MAX_LIMIT = 500
CONFIDENCES = tuple(c.name for c in Confidence)
DIRECTIONS = ("incoming", "outgoing")


class Declaration(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A tool's arguments; a subclass per tool (and per nested object)."""


def _enum(description: str, values: tuple[str, ...]) -> Meta:
    return Meta(description=description, extra={"enum": values})


# --- the shared vocabulary ---------------------------------------------------------------------------------

QualifiedName = Annotated[
    str | None,
    Meta(
        description="Python: pkg.module.Class.method; Go: Type.Method, optionally after its package "
        "(pflag.NewFlagSet) or import path; TypeScript, Dart: Class.method. A unique dotted tail also resolves."
    ),
]
Name = Annotated[
    str | None,
    Meta(
        description="A bare name (NewFlagSet); an ambiguous one lists the candidates. Give one of name, "
        "qualified_name or stable_key."
    ),
]
StableKey = Annotated[
    str | None, Meta(description="The key of a view full row: exactly one symbol, no repository or path needed.")
]
PinRepository = Annotated[str | None, Meta(description="Pins the symbol to this repository.")]
PinPath = Annotated[
    str | None, Meta(description="Pins the symbol to this repository-relative file or directory (needs repository).")
]
Cursor = Annotated[str | None, Meta(description="next_cursor of the previous page of this query.")]
ConfidenceFilter = Annotated[
    str | None, _enum("Only edges of exactly this confidence; absent means every confidence.", CONFIDENCES)
]
IncludeDerived = Annotated[bool, Meta(description="Also rows of derived repositories (a standard library).")]
IncludeTests = Annotated[bool, Meta(description="Also list the rows in test files; by default they are only counted.")]
InRepository = Annotated[str | None, Meta(description="Only rows in this repository.")]
InLanguage = Annotated[str | None, Meta(description="Only rows in this language.", extra={"languages": True})]
SymbolKinds = Annotated[
    list[str] | None,
    Meta(description='Only symbols of these kinds (function, method, class, func, type, ...); ["*"] means all.'),
]
_EDGE_KIND_ITEMS = (*REFERENCE_VOCABULARY, "*")


Limit = Annotated[int, Meta(ge=0, le=MAX_LIMIT, description="Rows per page (zero means the default).")]


def _view_text(*values: str) -> str:
    text = "compact: shared values and the row columns named once, rows by file; full: every field, keys too"
    if "files" in values:
        text += "; files: paths and counts"
    if "tree" in values:
        text += "; tree: nested by hop, not paged"
    return text + "."


ViewCompactFull = Annotated[str, _enum(_view_text("compact", "full"), ("compact", "full"))]
ViewWithFiles = Annotated[str, _enum(_view_text("compact", "full", "files"), ("compact", "full", "files"))]
ViewWithTree = Annotated[str, _enum(_view_text("compact", "full", "tree"), ("compact", "full", "tree"))]


def _edge_kinds_meta(default: str) -> Meta:
    return Meta(
        description=f'Relation kinds to follow; ["*"] means all. Default: {default}.',
        extra={"item_enum": _EDGE_KIND_ITEMS},
    )


EdgeKindsAll = Annotated[list[str] | None, _edge_kinds_meta("every kind")]
EdgeKindsReferences = Annotated[
    list[str] | None,
    _edge_kinds_meta(
        "every kind but " + ", ".join(DEFAULT_EXCLUDED) + ", which forward a name or tie a part file to its "
        "library without using it"
    ),
]


class Selector(Declaration):
    """A symbol named as every symbol tool names one (docs/surface.md §4)."""

    name: Name = None
    qualified_name: QualifiedName = None
    stable_key: StableKey = None
    repository: PinRepository = None
    path: PinPath = None


# --- the tools ---------------------------------------------------------------------------------------------


class GraphStatus(Declaration):
    pass


class ListRepositories(Declaration):
    limit: Limit = 50
    cursor: Cursor = None


class FindSymbol(Declaration):
    name: Annotated[str, Meta(description="The text to look for, matched as mode says (case-sensitive).")]
    mode: Annotated[
        str,
        _enum(
            "exact: the whole bare name; qualified_exact: the whole qualified name; prefix or substring of the bare "
            "name.",
            MODES,
        ),
    ] = "exact"
    symbol_kinds: SymbolKinds = None
    in_repository: InRepository = None
    in_path: Annotated[
        str | None, Meta(description="Only declarations whose repository-relative path starts with this text.")
    ] = None
    in_language: InLanguage = None
    include_tests: IncludeTests = False
    include_derived: IncludeDerived = False
    limit: Limit = 50
    cursor: Cursor = None
    view: ViewCompactFull = "compact"


class GetSymbol(Selector):
    pass


class GetFileOutline(Declaration):
    repository: Annotated[str, Meta(description="The registered repository holding the file or directory.")]
    path: Annotated[str, Meta(description="A repository-relative file or directory; . is the repository root.")]
    symbol_kinds: SymbolKinds = None
    include_members: Annotated[
        bool, Meta(description="Also fields, properties and enum members, left out by default.")
    ] = False
    limit: Limit = 200
    cursor: Cursor = None
    view: ViewWithFiles = "compact"


class GetSource(Declaration):
    symbols: Annotated[
        list[Selector],
        Meta(
            min_length=1,
            max_length=MAX_SOURCE_SYMBOLS,
            description="The symbols, each named like a symbol of any other tool; one that cannot be named is an "
            "error line, the others are still served.",
        ),
    ]
    context_lines: Annotated[int, Meta(ge=0, le=100, description="Lines shown before and after each body.")] = 0


class FindReferences(Selector):
    direction: Annotated[
        str, _enum("incoming: who references the symbol; outgoing: what it references.", DIRECTIONS)
    ] = "incoming"
    in_repository: InRepository = None
    in_language: InLanguage = None
    edge_kinds: EdgeKindsReferences = None
    confidence: ConfidenceFilter = None
    include_tests: IncludeTests = False
    include_derived: IncludeDerived = False
    limit: Limit = 50
    cursor: Cursor = None
    view: ViewWithFiles = "compact"
    relation: Annotated[
        str | None,
        _enum(
            "Instead of edges, transitively: implementing types or methods, supertypes, subtypes, or overridden "
            "methods.",
            RELATIONS,
        ),
    ] = None


class Walk(Selector):
    depth: Annotated[int, Meta(ge=0, le=MAX_DEPTH, description="Hops to walk.")] = DEFAULT_DEPTH
    max_nodes: Annotated[
        int,
        Meta(ge=0, le=MAX_NODES, description="Symbols the walk may visit before it stops (the answer then says so)."),
    ] = DEFAULT_MAX_NODES
    edge_kinds: EdgeKindsAll = None
    confidence: ConfidenceFilter = None
    in_repository: InRepository = None
    in_language: InLanguage = None
    include_derived: IncludeDerived = False
    limit: Limit = 50
    cursor: Cursor = None
    view: ViewWithTree = "compact"


class Changes(Declaration):
    base: Annotated[str | None, Meta(description="A git revision.")] = None
    diff: Annotated[str, Meta(max_length=MAX_DIFF_TEXT, description="Unified diff text.")] | None = None
    repository: Annotated[str | None, Meta(description="Only this repository.")] = None


class GetBlastRadius(Walk):
    changes: Annotated[
        Changes | None,
        Meta(
            description="Instead of a symbol: the working tree against base, or a diff; the roots are the "
            "declarations it touches."
        ),
    ] = None
    symbol_kinds: Annotated[
        list[str] | None,
        Meta(
            description='Only affected symbols of these kinds; ["*"] means all. Default: every kind but data '
            "variables and fields (the walk still passes through them)."
        ),
    ] = None


class TraceDependencies(Walk):
    to: Annotated[
        dict[str, Any] | None,
        Meta(
            description="A target named like the subject (name, qualified_name or stable_key; repository, path): "
            "the shortest confirmed paths to it instead."
        ),
    ] = None


class FindCrossRepoConsumers(Selector):
    in_repository: Annotated[str | None, Meta(description="Only consumers in this repository.")] = None
    in_language: InLanguage = None
    include_tests: IncludeTests = False
    limit: Limit = 50
    cursor: Cursor = None
    view: ViewCompactFull = "compact"


class FindByIntent(Declaration):
    query: Annotated[
        str, Meta(description="The task in a few words or a short sentence; identifiers are split into words.")
    ]
    in_repository: Annotated[str | None, Meta(description="Only files in this repository.")] = None
    in_language: InLanguage = None
    symbol_kinds: Annotated[
        list[str] | None, Meta(description="Only files declaring a matching symbol of these kinds.")
    ] = None
    include_tests: Annotated[bool, Meta(description="Also list test files; by default they are only counted.")] = False
    limit: Limit = 5
    cursor: Cursor = None


_PROJECT_NAME = "The repository's name in the graph (no slash, not . or ..)."
_PROJECT_PATH = "The repository's directory; a relative path resolves against the server's directory."
_PROJECT_LANGUAGES = Meta(description="The languages to index in it.", extra={"item_enum": LANGUAGES})


class Project(Declaration):
    name: Annotated[str, Meta(description=_PROJECT_NAME)]
    path: Annotated[str, Meta(description=_PROJECT_PATH)]
    languages: Annotated[list[str], _PROJECT_LANGUAGES]


class IndexProject(Declaration):
    projects: (
        Annotated[
            list[Project],
            Meta(min_length=1, description="Several repositories in one run; or give name, path and languages once."),
        ]
        | None
    ) = None
    name: Annotated[str | None, Meta(description=_PROJECT_NAME)] = None
    path: Annotated[str | None, Meta(description=_PROJECT_PATH)] = None
    languages: Annotated[list[str] | None, _PROJECT_LANGUAGES] = None
    confirmed: Annotated[
        bool, Meta(description="True only after the user agreed, when the client cannot ask them itself.")
    ] = False


DECLARATIONS: dict[str, type[Declaration]] = {
    "find_references": FindReferences,
    "find_symbol": FindSymbol,
    "get_source": GetSource,
    "get_blast_radius": GetBlastRadius,
    "trace_dependencies": TraceDependencies,
    "find_cross_repo_consumers": FindCrossRepoConsumers,
    "find_by_intent": FindByIntent,
    "get_file_outline": GetFileOutline,
    "get_symbol": GetSymbol,
    "list_repositories": ListRepositories,
    "graph_status": GraphStatus,
    "index_project": IndexProject,
}


# --- what a declaration says about each field ----------------------------------------------------------------


@dataclass(frozen=True)
class FieldSpec:
    """One argument as the declaration states it."""

    name: str
    kind: str  # string, integer, boolean, array, object
    required: bool
    default: Any
    description: str
    enum: tuple[str, ...] | None = None
    item_enum: tuple[str, ...] | None = None
    languages: bool = False  # the enum is the served generation's languages
    low: int | None = None
    high: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    max_length: int | None = None
    nested: type[msgspec.Struct] | None = None  # an object (or an array's items) with its own declaration


def _unwrap(t: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(the type without metadata and None, its JSON schema extras, its extra)."""
    schema: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    while isinstance(t, msgspec.inspect.Metadata | msgspec.inspect.UnionType):
        if isinstance(t, msgspec.inspect.Metadata):
            schema.update(t.extra_json_schema or {})
            extra.update(t.extra or {})
            t = t.type
        else:
            kept = [m for m in t.types if not isinstance(m, msgspec.inspect.NoneType)]
            assert len(kept) == 1, t
            t = kept[0]
    return t, schema, extra


@functools.cache
def fields_of(decl: type[msgspec.Struct]) -> dict[str, FieldSpec]:
    """The declaration's fields, in declaration order."""
    info = msgspec.inspect.type_info(decl)
    assert isinstance(info, msgspec.inspect.StructType)
    out: dict[str, FieldSpec] = {}
    for f in info.fields:
        t, schema, extra = _unwrap(f.type)
        base: dict[str, Any] = {
            "name": f.name,
            "required": f.required,
            "default": None if f.default is msgspec.NODEFAULT else f.default,
            "description": schema.get("description", ""),
        }
        if isinstance(t, msgspec.inspect.StrType):
            spec = FieldSpec(
                kind="string",
                enum=extra.get("enum"),
                languages=bool(extra.get("languages")),
                max_length=t.max_length,
                **base,
            )
        elif isinstance(t, msgspec.inspect.IntType):
            spec = FieldSpec(kind="integer", low=t.ge, high=t.le, **base)
        elif isinstance(t, msgspec.inspect.BoolType):
            spec = FieldSpec(kind="boolean", **base)
        elif isinstance(t, msgspec.inspect.ListType):
            item = t.item_type
            nested = item.cls if isinstance(item, msgspec.inspect.StructType) else None
            spec = FieldSpec(
                kind="array",
                item_enum=extra.get("item_enum"),
                min_items=t.min_length,
                max_items=t.max_length,
                nested=nested,
                **base,
            )
        elif isinstance(t, msgspec.inspect.StructType):
            spec = FieldSpec(kind="object", nested=t.cls, **base)
        elif isinstance(t, msgspec.inspect.DictType):
            spec = FieldSpec(kind="object", **base)
        else:  # pragma: no cover - a declaration of a type this module cannot state
            raise TypeError(f"{decl.__name__}.{f.name}: unsupported argument type {t!r}")
        out[f.name] = spec
    return out


def accepted(decl: type[Declaration]) -> tuple[str, ...]:
    return tuple(fields_of(decl))


# --- the input schema ----------------------------------------------------------------------------------------


def _property(spec: FieldSpec, languages: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": spec.kind}
    if spec.kind == "string":
        if spec.languages:
            out["enum"] = list(languages)
        elif spec.enum is not None:
            out["enum"] = list(spec.enum)
            if spec.default is not None:
                out["default"] = spec.default
        if spec.max_length is not None:
            out["maxLength"] = spec.max_length
    elif spec.kind == "integer":
        out.update({"minimum": spec.low, "maximum": spec.high, "default": spec.default})
    elif spec.kind == "boolean":
        out["default"] = spec.default
    elif spec.kind == "array":
        if spec.min_items is not None:
            out["minItems"] = spec.min_items
        if spec.max_items is not None:
            out["maxItems"] = spec.max_items
        if spec.nested is not None:
            out["items"] = input_schema(spec.nested, languages)
        else:
            out["items"] = {"type": "string", **({"enum": list(spec.item_enum)} if spec.item_enum else {})}
    elif spec.kind == "object" and spec.nested is not None:
        nested = input_schema(spec.nested, languages)
        out.update({k: v for k, v in nested.items() if k != "type"})
    out["description"] = spec.description
    return out


def input_schema(decl: type[msgspec.Struct], languages: tuple[str, ...] = LANGUAGES) -> dict[str, Any]:
    """The JSON schema of the declaration's arguments, as tools/list states it."""
    specs = fields_of(decl)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _property(spec, languages) for name, spec in specs.items()},
        "additionalProperties": False,
    }
    required = [name for name, spec in specs.items() if spec.required]
    if required:
        schema["required"] = required
    return schema
