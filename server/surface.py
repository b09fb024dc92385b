"""The resident surface: tool names, descriptions, input schemas, annotations and instructions.

Plain data (no MCP types). Tool descriptions and instructions contain no digit and no graph-derived fact,
so their bytes never change between calls (a client's prompt cache survives). Every input property is
described (what a qualified name looks like per language, what a stable key is, what the default does);
numbers live in the schema's own ``default``, ``minimum`` and ``maximum``, so the descriptions stay
digit-free too. The one part that follows the graph is the language enum: it lists the languages the
served generation holds symbols in (``read_tool_specs``), and the server announces a change of it with
``tools/list_changed``.

The vocabulary is one for every tool: ``name``, ``qualified_name`` or ``stable_key`` names the subject,
``repository`` and ``path`` pin it; ``in_repository``, ``in_language`` and ``in_path`` filter the rows;
``symbol_kinds`` and ``edge_kinds`` are the two kinds of kinds; ``view`` is the one shape switch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from server.queries.hierarchy import RELATIONS
from server.queries.references import DEFAULT_EXCLUDED, REFERENCE_VOCABULARY
from server.queries.symbols import MODES
from server.queries.traverse import DEFAULT_DEPTH, DEFAULT_MAX_NODES, MAX_DEPTH, MAX_NODES
from snapshot_format.languages import IDS as LANGUAGES
from snapshot_format.vocab import Confidence

MAX_DIFF_TEXT = 1 << 20  # characters of get_blast_radius changes.diff

# The whole tools/list result, every tool with every language in its enums, in o200k_base tokens: measured
# 4,749 (README "The MCP tools"); tests/test_server_surface.py holds it to this budget.
SCHEMA_TOKEN_BUDGET = 4800


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = True
    always_load: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def _s(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _b(description: str) -> dict[str, Any]:
    return {"type": "boolean", "default": False, "description": description}


def _enum(description: str, *values: str, default: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "enum": list(values)}
    if default is not None:
        out["default"] = default
    out["description"] = description
    return out


def _int(description: str, default: int, high: int, low: int = 0) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high, "default": default, "description": description}


def _limit(default: int, high: int = 500) -> dict[str, Any]:
    return _int("Rows per page (zero means the default).", default, high)


# --- the shared vocabulary ---------------------------------------------------------------------------------

_QUALIFIED_NAME = _s(
    "Python: pkg.module.Class.method. Go: Name or Type.Method, optionally after its package (pflag.NewFlagSet) "
    "or import path. TypeScript, Dart: Class.method. A unique dotted tail (Class.method) also resolves; several "
    "are listed with their packages."
)
_SUBJECT = {
    "name": _s(
        "The bare name (NewFlagSet); if ambiguous, the candidates are listed. Give one of name, "
        "qualified_name or stable_key."
    ),
    "qualified_name": _QUALIFIED_NAME,
    "stable_key": _s("The key of a view full row: exactly one symbol, no repository or path needed."),
    "repository": _s("Pins the symbol to this repository."),
    "path": _s("Pins the symbol to this repository-relative file or directory (needs repository)."),
}
_CURSOR = _s("next_cursor of the previous page of this query.")
_CONFIDENCE = _enum(
    "Only edges of exactly this confidence; absent means every confidence.", *(c.name for c in Confidence)
)
_INCLUDE_DERIVED = _b("Also rows of derived repositories (a standard library).")
_INCLUDE_TESTS = _b("Also list the rows in test files; by default they are only counted.")
_IN_REPOSITORY = _s("Only rows in this repository.")
_SYMBOL_KINDS = {
    "type": "array",
    "items": {"type": "string"},
    "description": 'Only symbols of these kinds (function, method, class, func, type, ...); ["*"] means all.',
}


def _edge_kinds(default: str) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string", "enum": [*REFERENCE_VOCABULARY, "*"]},
        "description": f'Relation kinds to follow; ["*"] means all. Default: {default}.',
    }


def _view(*values: str) -> dict[str, Any]:
    text = "compact: shared columns once, rows by file; full: every field, signatures and keys too"
    if "files" in values:
        text += "; files: paths and counts"
    if "tree" in values:
        text += "; tree: nested by hop, not paged"
    return _enum(text + ".", *values, default="compact")


def _in_language(languages: tuple[str, ...]) -> dict[str, Any]:
    return _enum("Only rows in this language.", *languages)


# --- the tools ---------------------------------------------------------------------------------------------


def _graph_status(_languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="graph_status",
        title="Graph status",
        description=(
            "The published graph: generation, counts, exact or fallback analysis per language, indexed versus "
            "current commits. It cannot see an edit under an unchanged commit."
        ),
        input_schema=_obj({}),
    )


def _list_repositories(_languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="list_repositories",
        title="List repositories",
        description=(
            "Indexed repositories: path, languages, indexed versus live HEAD. It cannot see an edit under an "
            "unchanged commit."
        ),
        input_schema=_obj({"limit": _limit(50), "cursor": _CURSOR}),
    )


def _find_symbol(languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="find_symbol",
        title="Find symbol",
        description=(
            "Where symbols are declared, by exact, qualified, prefix or substring name, with path and line "
            "range. A unique name in one repository is cheaper to grep."
        ),
        input_schema=_obj(
            {
                "name": _s("The text to look for, matched as mode says (case-sensitive)."),
                "mode": _enum(
                    "exact: the whole bare name; qualified_exact: the whole qualified name; prefix or "
                    "substring of the bare name.",
                    *MODES,
                    default="exact",
                ),
                "symbol_kinds": _SYMBOL_KINDS,
                "in_repository": _IN_REPOSITORY,
                "in_path": _s("Only declarations whose repository-relative path starts with this text."),
                "in_language": _in_language(languages),
                "include_tests": _INCLUDE_TESTS,
                "include_derived": _INCLUDE_DERIVED,
                "limit": _limit(50),
                "cursor": _CURSOR,
                "view": _view("compact", "full"),
            },
            ("name",),
        ),
        always_load=True,
    )


def _get_symbol(_languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="get_symbol",
        title="Get symbol",
        description=(
            "Every stored fact about one symbol, stable key included. Usually redundant after a row from another tool."
        ),
        input_schema=_obj(dict(_SUBJECT)),
    )


def _get_file_outline(_languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="get_file_outline",
        title="File outline",
        description=(
            "What a file or directory declares, with qualified names and line ranges. One small file is "
            "cheaper to read directly."
        ),
        input_schema=_obj(
            {
                "repository": _s("The registered repository holding the file or directory."),
                "path": _s("A repository-relative file or directory; . is the repository root."),
                "symbol_kinds": _SYMBOL_KINDS,
                "include_members": _b("Also fields, properties and enum members, left out by default."),
                "limit": _limit(200),
                "cursor": _CURSOR,
                "view": _view("compact", "full", "files"),
            },
            ("repository", "path"),
        ),
    )


def _get_source(_languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="get_source",
        title="Get source",
        description=(
            "Source of up to twenty symbols in one call, as plain text, re-anchored when a file changed since "
            "indexing. Reading one small file directly is cheaper."
        ),
        input_schema=_obj(
            {
                "symbols": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 20,
                    "items": _obj(dict(_SUBJECT)),
                    "description": "The symbols, each named like a symbol of any other tool; one that cannot "
                    "be named is an error line, the others are still served.",
                },
                "context_lines": _int("Lines shown before and after each body.", 0, 100),
            },
            ("symbols",),
        ),
        always_load=True,
    )


def _find_references(languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="find_references",
        title="Find references",
        description=(
            "Who references a symbol (incoming) or what it references (outgoing), one hop: analyzer edges, "
            "unbound uses listed apart, so an empty answer is a checked absence. It cannot see unsaved edits."
        ),
        input_schema=_obj(
            {
                **_SUBJECT,
                "direction": _enum(
                    "incoming: who references the symbol; outgoing: what it references.",
                    "incoming",
                    "outgoing",
                    default="incoming",
                ),
                "in_repository": _IN_REPOSITORY,
                "in_language": _in_language(languages),
                "edge_kinds": _edge_kinds(
                    "every kind but " + ", ".join(DEFAULT_EXCLUDED) + ", which forward a name or tie a part file to "
                    "its library without using it"
                ),
                "confidence": _CONFIDENCE,
                "include_tests": _INCLUDE_TESTS,
                "include_derived": _INCLUDE_DERIVED,
                "limit": _limit(50),
                "cursor": _CURSOR,
                "view": _view("compact", "full", "files"),
                "relation": _enum(
                    "Instead of edges, transitively: implementing types or methods, supertypes, subtypes, or "
                    "overridden methods.",
                    *RELATIONS,
                ),
            }
        ),
        always_load=True,
    )


def _walk(languages: tuple[str, ...]) -> dict[str, Any]:
    return {
        **_SUBJECT,
        "depth": _int("Hops to walk.", DEFAULT_DEPTH, MAX_DEPTH),
        "max_nodes": _int(
            "Symbols the walk may visit before it stops (the answer then says so).", DEFAULT_MAX_NODES, MAX_NODES
        ),
        "edge_kinds": _edge_kinds("every kind"),
        "confidence": _CONFIDENCE,
        "in_repository": _IN_REPOSITORY,
        "in_language": _in_language(languages),
        "include_derived": _INCLUDE_DERIVED,
        "limit": _limit(50),
        "cursor": _CURSOR,
        "view": _view("compact", "full", "tree"),
    }


_LARGE_RESULT = {"anthropic/maxResultSizeChars": 120000}


def _get_blast_radius(languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="get_blast_radius",
        title="Blast radius",
        description=(
            "What a change to a symbol reaches (tests apart), with a completeness verdict and a grep fallback. "
            "It only reports symbols within a few hops, not behaviour."
        ),
        input_schema=_obj(
            {
                **_walk(languages),
                "changes": {
                    "type": "object",
                    "properties": {
                        "base": _s("A git revision."),
                        "diff": {"type": "string", "maxLength": MAX_DIFF_TEXT, "description": "Unified diff text."},
                        "repository": _s("Only this repository."),
                    },
                    "additionalProperties": False,
                    "description": "Instead of a symbol: the working tree against base, or a diff; the roots are "
                    "the declarations it touches.",
                },
                "symbol_kinds": {
                    **_SYMBOL_KINDS,
                    "description": 'Only affected symbols of these kinds; ["*"] '
                    "means all. Default: every kind but data variables and fields (the walk still passes "
                    "through them).",
                },
            }
        ),
        always_load=True,
        meta=_LARGE_RESULT,
    )


def _trace_dependencies(languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="trace_dependencies",
        title="Trace dependencies",
        description="What a symbol reaches, a few hops out. It only follows a few hops; wide fan-out is noisy.",
        input_schema=_obj(
            {
                **_walk(languages),
                "to": {
                    "type": "object",
                    "description": "A target named like the subject (name, qualified_name or stable_key; repository, "
                    "path): the shortest confirmed paths to it instead.",
                },
            }
        ),
        meta=_LARGE_RESULT,
    )


def _find_cross_repo_consumers(languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="find_cross_repo_consumers",
        title="Cross-repository consumers",
        description=(
            "Files and symbols in other repositories that use a symbol, by category and confidence. It only "
            "sees registered repositories and ignores uses in the symbol's own."
        ),
        input_schema=_obj(
            {
                **_SUBJECT,
                "in_repository": _s("Only consumers in this repository."),
                "in_language": _in_language(languages),
                "include_tests": _INCLUDE_TESTS,
                "limit": _limit(50),
                "cursor": _CURSOR,
                "view": _view("compact", "full"),
            }
        ),
    )


def _find_by_intent(languages: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name="find_by_intent",
        title="Find by intent",
        description=(
            "Files to open for a task described in words, with the symbols and terms that matched. Lexical only: "
            "a known name is cheaper to grep."
        ),
        input_schema=_obj(
            {
                "query": _s("The task in a few words or a short sentence; identifiers are split into words."),
                "in_repository": _s("Only files in this repository."),
                "in_language": _in_language(languages),
                "symbol_kinds": {
                    **_SYMBOL_KINDS,
                    "description": "Only files declaring a matching symbol of these kinds.",
                },
                "include_tests": _b("Also list test files; by default they are only counted."),
                "limit": _limit(5),
                "cursor": _CURSOR,
            },
            ("query",),
        ),
    )


_PROJECT = {
    "name": _s("The repository's name in the graph (no slash, not . or ..)."),
    "path": _s("The repository's directory; a relative path resolves against the server's directory."),
    "languages": {
        "type": "array",
        "items": {"type": "string", "enum": list(LANGUAGES)},
        "description": "The languages to index in it.",
    },
}
INDEX_PROJECT = ToolSpec(
    name="index_project",
    title="Index project",
    description=(
        "Register repositories and build the graph the query tools answer from, after the user consents; "
        "the query tools then appear without a restart. Indexing a large repository takes minutes."
    ),
    input_schema=_obj(
        {
            "projects": {
                "type": "array",
                "minItems": 1,
                "items": _obj(_PROJECT, ("name", "path", "languages")),
                "description": "Several repositories in one run; or give name, path and languages once.",
            },
            **_PROJECT,
            "confirmed": _b("True only after the user agreed, when the client cannot ask them itself."),
        }
    ),
    read_only=False,
)

# Registration order: the tools an agent should reach for first come first.
_READ_BUILDERS = (
    _find_references,
    _find_symbol,
    _get_source,
    _get_blast_radius,
    _trace_dependencies,
    _find_cross_repo_consumers,
    _find_by_intent,
    _get_file_outline,
    _get_symbol,
    _list_repositories,
    _graph_status,
)


@functools.cache
def read_tool_specs(languages: tuple[str, ...] = LANGUAGES) -> tuple[ToolSpec, ...]:
    """The read tools, their language enums listing ``languages`` (those the served generation holds)."""
    specs = tuple(build(languages) for build in _READ_BUILDERS)
    return tuple(replace(s, input_schema=_drop_empty_enums(s.input_schema)) for s in specs)


def _drop_empty_enums(schema: dict[str, Any]) -> dict[str, Any]:
    """A generation with no symbols yet serves no language: the filter then takes any string (and finds none)."""
    props = schema.get("properties", {})
    fixed = {
        k: ({kk: vv for kk, vv in v.items() if kk != "enum"} if v.get("enum") == [] else v) for k, v in props.items()
    }
    return {**schema, "properties": fixed}


READ_TOOL_SPECS: tuple[ToolSpec, ...] = read_tool_specs()
ALL_TOOL_SPECS: tuple[ToolSpec, ...] = (*READ_TOOL_SPECS, INDEX_PROJECT)

_USE = (
    "Edges come from language analyzers or are marked CANDIDATE; they are never made by name matching. "
    "Read confidence and coverage before treating an empty or partial answer as proof of absence: "
    "graph_status says which languages were analysed exactly and which by the fallback, and "
    "list_repositories says whether HEAD moved since indexing.\n\n"
    "Rows are addressable: repository, repository-relative path, qualified name and line range. Every symbol "
    "tool names its subject by name, qualified_name (with or without its module prefix: Class.method) or stable_key, pinned by repository and path; in_repository "
    "and in_language filter the rows. Rows in test files are counted apart (include_tests lists them). Compact "
    "answers state shared columns once in a header; an absent field means false, null or zero.\n\n"
    "Where it loses: a rare name in one small repository is cheaper to grep, and one small file is cheaper "
    "to read than to outline. It wins on common names, references across repositories and proving an absence."
)

INSTRUCTIONS_READY = (
    "kivgraph answers who calls or references a symbol, where it is declared, what a file declares and what "
    "its code is, from a published graph of the registered repositories. Before grepping or reading files "
    "for callers, references or declarations, call find_references or find_symbol; to read the code they "
    "name, call get_source with several symbols at once. For what a change breaks, call get_blast_radius; for "
    "users in other repositories, find_cross_repo_consumers; when you do not know a name, find_by_intent. To "
    "add or re-index a repository, call index_project.\n\n" + _USE
)

INSTRUCTIONS_EMPTY = (
    "kivgraph has no published graph yet, so only index_project is listed. To build one, call index_project "
    "with the repositories to index (name, path, languages); it asks the user for consent, or takes "
    "confirmed true once you have asked. A terminal can run kivgraph init PATH then kivgraph index instead. "
    "The query tools (find_references, find_symbol, get_source, get_blast_radius, trace_dependencies, "
    "find_cross_repo_consumers, find_by_intent, get_file_outline, get_symbol, list_repositories, graph_status) "
    "then appear in this session without a restart; until then use your "
    "own search and file tools.\n\n" + _USE
)
