"""The resident surface: tool names, descriptions, input schemas, annotations and instructions.

Plain data (no MCP types). Descriptions and instructions contain no digit and
no graph-derived fact, so their bytes never change between calls (a client's
prompt cache survives); input schemas carry no per-property descriptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.queries.references import REFERENCE_VOCABULARY
from server.queries.symbols import MODES
from server.queries.traverse import MAX_DEPTH, MAX_NODES
from snapshot_format.vocab import LANGUAGES, Confidence


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


_S: dict[str, Any] = {"type": "string"}
_B: dict[str, Any] = {"type": "boolean"}


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _limit(high: int = 500) -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "maximum": high}


_SELECTOR = {"stable_key": _S, "qualified_name": _S, "repository": _S, "path": _S}
_FORMAT = _enum("concise", "detailed")
_EDGE_KINDS = {"type": "array", "items": _enum(*REFERENCE_VOCABULARY, "*")}
_CONFIDENCE = _enum(*(c.name for c in Confidence))

GRAPH_STATUS = ToolSpec(
    name="graph_status",
    title="Graph status",
    description=(
        "The published graph: generation, counts, exact or fallback analysis per language, indexed versus "
        "current commits. It cannot see an edit under an unchanged commit."
    ),
    input_schema=_obj({}),
)
LIST_REPOSITORIES = ToolSpec(
    name="list_repositories",
    title="List repositories",
    description=(
        "Indexed repositories: path, languages, indexed versus live HEAD. It cannot see an edit under an "
        "unchanged commit."
    ),
    input_schema=_obj({"limit": _limit(), "cursor": _S}),
)
FIND_SYMBOL = ToolSpec(
    name="find_symbol",
    title="Find symbol",
    description=(
        "Where symbols are declared, by exact, qualified, prefix or substring name, with path and line "
        "range. A unique name in one repository is cheaper to grep."
    ),
    input_schema=_obj(
        {
            "name": _S, "mode": _enum(*MODES), "kind": _S, "repo": _S, "path_prefix": _S, "include_derived": _B,
            "limit": _limit(), "cursor": _S, "response_format": _FORMAT, "view": _enum("compact", "full"),
        },
        ("name",),
    ),
    always_load=True,
)
GET_SYMBOL = ToolSpec(
    name="get_symbol",
    title="Get symbol",
    description=(
        "Full detail of one symbol by stable_key or qualified_name. Usually redundant after a row from "
        "another tool."
    ),
    input_schema=_obj({**_SELECTOR, "response_format": _FORMAT}),
)
GET_FILE_OUTLINE = ToolSpec(
    name="get_file_outline",
    title="File outline",
    description=(
        "What a file or directory declares, with qualified names and line ranges. One small file is "
        "cheaper to read directly."
    ),
    input_schema=_obj(
        {
            "repository": _S, "path": _S, "kind": _S, "include_members": _B, "limit": _limit(), "cursor": _S,
            "response_format": _FORMAT, "view": _enum("compact", "full", "files"),
        },
        ("repository", "path"),
    ),
)
GET_SOURCE = ToolSpec(
    name="get_source",
    title="Get source",
    description=(
        "Source of up to twenty symbols in one call, as plain text, re-anchored when a file changed since "
        "indexing. Reading one small file directly is cheaper."
    ),
    input_schema=_obj(
        {
            "symbols": {"type": "array", "minItems": 1, "maxItems": 20, "items": _obj(_SELECTOR)},
            "context_lines": {"type": "integer", "minimum": 0, "maximum": 100},
            "response_format": _FORMAT,
        },
        ("symbols",),
    ),
    always_load=True,
)
FIND_REFERENCES = ToolSpec(
    name="find_references",
    title="Find references",
    description=(
        "One hop of who references a symbol (incoming) or what it references (outgoing), from analyzer "
        "edges, so an empty answer is a checked absence. One hop only; it sees the indexed tree, not "
        "unsaved edits."
    ),
    input_schema=_obj(
        {
            **_SELECTOR, "name": _S, "direction": _enum("incoming", "outgoing"), "repo": _S,
            "language": _enum(*LANGUAGES),
            "edge_kinds": _EDGE_KINDS, "confidence": _CONFIDENCE, "include_derived": _B, "limit": _limit(),
            "cursor": _S, "response_format": _FORMAT, "view": _enum("compact", "full", "files"),
        }
    ),
    always_load=True,
)
_WALK = {
    **_SELECTOR, "depth": {"type": "integer", "minimum": 0, "maximum": MAX_DEPTH},
    "max_nodes": {"type": "integer", "minimum": 0, "maximum": MAX_NODES}, "edge_kinds": _EDGE_KINDS,
    "confidence": _CONFIDENCE, "include_derived": _B, "limit": _limit(), "cursor": _S, "response_format": _FORMAT,
    "view": _enum("compact", "full"),
}
_LARGE_RESULT = {"anthropic/maxResultSizeChars": 120000}
GET_BLAST_RADIUS = ToolSpec(
    name="get_blast_radius",
    title="Blast radius",
    description=(
        "What a change to a symbol reaches, with a completeness verdict and a grep fallback. It only reports "
        "symbols within a few hops, not behaviour."
    ),
    input_schema=_obj({**_WALK, "kinds": {"type": "array", "items": _S}}),
    always_load=True,
    meta=_LARGE_RESULT,
)
TRACE_DEPENDENCIES = ToolSpec(
    name="trace_dependencies",
    title="Trace dependencies",
    description="What a symbol reaches, a few hops out. It only follows a few hops; wide fan-out is noisy.",
    input_schema=_obj({**_WALK, "repo": _S, "language": _enum(*LANGUAGES)}),
    meta=_LARGE_RESULT,
)
FIND_CROSS_REPO_CONSUMERS = ToolSpec(
    name="find_cross_repo_consumers",
    title="Cross-repository consumers",
    description=(
        "Files and symbols in other repositories that use a symbol, by category and confidence. It only sees "
        "registered repositories and ignores uses in the symbol's own."
    ),
    input_schema=_obj({**_SELECTOR, "repo": _S, "language": _enum(*LANGUAGES), "limit": _limit(), "cursor": _S,
                       "response_format": _FORMAT, "view": _enum("compact", "full")}),
)
FIND_BY_INTENT = ToolSpec(
    name="find_by_intent",
    title="Find by intent",
    description=(
        "Files to open for a task described in words, with the symbols and terms that matched. Lexical only: "
        "a known name is cheaper to grep."
    ),
    input_schema=_obj({"query": _S, "repository": _S, "language": _enum(*LANGUAGES), "kind": _S,
                       "limit": _limit(), "cursor": _S}, ("query",)),
)
_PROJECT = {"name": _S, "path": _S, "languages": {"type": "array", "items": _S}}
INDEX_PROJECT = ToolSpec(
    name="index_project",
    title="Index project",
    description=(
        "Register repositories and build the graph the query tools answer from, after the user consents; "
        "the query tools then appear without a restart. Indexing a large repository takes minutes."
    ),
    input_schema=_obj(
        {
            "projects": {"type": "array", "minItems": 1, "items": _obj(_PROJECT, ("name", "path", "languages"))},
            **_PROJECT,
            "confirmed": _B,
        }
    ),
    read_only=False,
)

# Registration order: the tools an agent should reach for first come first.
READ_TOOL_SPECS: tuple[ToolSpec, ...] = (
    FIND_REFERENCES, FIND_SYMBOL, GET_SOURCE, GET_BLAST_RADIUS, TRACE_DEPENDENCIES, FIND_CROSS_REPO_CONSUMERS,
    FIND_BY_INTENT, GET_FILE_OUTLINE,
    GET_SYMBOL, LIST_REPOSITORIES, GRAPH_STATUS,
)
ALL_TOOL_SPECS: tuple[ToolSpec, ...] = (*READ_TOOL_SPECS, INDEX_PROJECT)

_USE = (
    "Edges come from language analyzers or are marked CANDIDATE; they are never made by name matching. "
    "Read confidence and coverage before treating an empty or partial answer as proof of absence: "
    "graph_status says which languages were analysed exactly and which by the fallback, and "
    "list_repositories says whether HEAD moved since indexing.\n\n"
    "Rows are addressable: repository, repository-relative path, qualified name and line range. Every tool "
    "accepts qualified_name (with or without its module prefix: Class.method) with repository and path "
    "instead of a stable key. Compact answers state shared "
    "columns once in a header; an absent field means false, null or zero.\n\n"
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
