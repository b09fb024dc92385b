"""The resident surface: tool names, descriptions, annotations and instructions; the input schemas are derived
from each tool's declaration (``server/declarations.py``).

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

from server.declarations import DECLARATIONS, input_schema
from snapshot_format.languages import IDS as LANGUAGES

# The whole tools/list result, every tool with every language in its enums, in o200k_base tokens: measured
# 4,715 (README "The MCP tools"); tests/test_server_surface.py holds it to this budget.
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


_LARGE_RESULT = {"anthropic/maxResultSizeChars": 120000}


@dataclass(frozen=True)
class _Tool:
    """What tools/list says of a tool beside its arguments (those are its declaration's)."""

    title: str
    description: str
    always_load: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


# Registration order: the tools an agent should reach for first come first.
_READ_TOOLS: dict[str, _Tool] = {
    "find_references": _Tool(
        "Find references",
        "Who uses a symbol (or what it uses), only one hop of analyzer edges: empty is a checked absence. Use it "
        "before grepping callers; get_blast_radius for what a change breaks.",
        always_load=True,
    ),
    "find_symbol": _Tool(
        "Find symbol",
        "Where a name is declared (exact, qualified, prefix, substring), with path and lines. Use it to "
        "find a declaration; a rare name is cheaper to grep.",
        always_load=True,
    ),
    "get_source": _Tool(
        "Get source",
        "Code of up to twenty symbols in one call, re-anchored after edits. Use it once a row names them; a "
        "small file is cheaper to read.",
        always_load=True,
    ),
    "get_blast_radius": _Tool(
        "Blast radius",
        "What changing a symbol or a diff breaks, tests apart, with a completeness verdict. Use it before "
        "an edit or a review; for one hop, find_references is cheaper.",
        always_load=True,
        meta=_LARGE_RESULT,
    ),
    "trace_dependencies": _Tool(
        "Trace dependencies",
        "What a symbol reaches a few hops out, or its path to another (to). Use it to follow a call chain; "
        "one hop is cheaper with find_references.",
        meta=_LARGE_RESULT,
    ),
    "find_cross_repo_consumers": _Tool(
        "Cross-repository consumers",
        "Uses of a symbol in other repositories, by category and confidence. Use it before changing a "
        "shared API; it only sees registered ones, find_references its own.",
    ),
    "find_by_intent": _Tool(
        "Find by intent",
        "Files to open for a task in words, with the symbols matched. Use it when you know no name; a "
        "known name is cheaper with find_symbol.",
    ),
    "get_file_outline": _Tool(
        "File outline",
        "What a file or directory declares, with qualified names and lines. Use it to survey a directory; a "
        "small file is cheaper to read.",
    ),
    "get_symbol": _Tool(
        "Get symbol",
        "Every stored fact about one symbol, stable key included. Use it for a fact a row left out; usually redundant.",
    ),
    "list_repositories": _Tool(
        "List repositories",
        "Indexed repositories: path, languages, indexed versus live HEAD. Use it for freshness "
        "(graph_status: analysis modes); it cannot see uncommitted edits.",
    ),
    "graph_status": _Tool(
        "Graph status",
        "Counts, exact or fallback analysis per language, indexed versus current commits. Use it to judge an "
        "empty answer; list_repositories is cheaper for HEAD alone.",
    ),
}

INDEX_PROJECT = ToolSpec(
    name="index_project",
    title="Index project",
    description=(
        "Index repositories once the user consents; the query tools then appear without a restart. Use it "
        "only to add or re-index code: it takes minutes."
    ),
    input_schema=input_schema(DECLARATIONS["index_project"]),
    read_only=False,
)


@functools.cache
def read_tool_specs(languages: tuple[str, ...] = LANGUAGES) -> tuple[ToolSpec, ...]:
    """The read tools, their language enums listing ``languages`` (those the served generation holds)."""
    specs = tuple(
        ToolSpec(
            name=name,
            title=tool.title,
            description=tool.description,
            input_schema=input_schema(DECLARATIONS[name], languages),
            always_load=tool.always_load,
            meta=tool.meta,
        )
        for name, tool in _READ_TOOLS.items()
    )
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
    "answers state shared values once in a header and name the row columns once (columns): a row's empty "
    "value is the header's, and an absent field means false, null or zero. Every answer states its size "
    "(size_tokens); one over its tool's budget is cut at a row, with a cursor.\n\n"
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
