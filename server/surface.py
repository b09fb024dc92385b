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
        "Who references a symbol (incoming) or what it references (outgoing), one hop: analyzer edges, "
        "unbound uses listed apart, so an empty answer is a checked absence. It cannot see unsaved edits.",
        always_load=True,
    ),
    "find_symbol": _Tool(
        "Find symbol",
        "Where symbols are declared, by exact, qualified, prefix or substring name, with path and line "
        "range. A unique name in one repository is cheaper to grep.",
        always_load=True,
    ),
    "get_source": _Tool(
        "Get source",
        "Source of up to twenty symbols in one call, as plain text, re-anchored when a file changed since "
        "indexing. Reading one small file directly is cheaper.",
        always_load=True,
    ),
    "get_blast_radius": _Tool(
        "Blast radius",
        "What a change to a symbol reaches (tests apart), with a completeness verdict and a grep fallback. "
        "It only reports symbols within a few hops, not behaviour.",
        always_load=True,
        meta=_LARGE_RESULT,
    ),
    "trace_dependencies": _Tool(
        "Trace dependencies",
        "What a symbol reaches, a few hops out. It only follows a few hops; wide fan-out is noisy.",
        meta=_LARGE_RESULT,
    ),
    "find_cross_repo_consumers": _Tool(
        "Cross-repository consumers",
        "Files and symbols in other repositories that use a symbol, by category and confidence. It only "
        "sees registered repositories and ignores uses in the symbol's own.",
    ),
    "find_by_intent": _Tool(
        "Find by intent",
        "Files to open for a task described in words, with the symbols and terms that matched. Lexical only: "
        "a known name is cheaper to grep.",
    ),
    "get_file_outline": _Tool(
        "File outline",
        "What a file or directory declares, with qualified names and line ranges. One small file is "
        "cheaper to read directly.",
    ),
    "get_symbol": _Tool(
        "Get symbol",
        "Every stored fact about one symbol, stable key included. Usually redundant after a row from another tool.",
    ),
    "list_repositories": _Tool(
        "List repositories",
        "Indexed repositories: path, languages, indexed versus live HEAD. It cannot see an edit under an "
        "unchanged commit.",
    ),
    "graph_status": _Tool(
        "Graph status",
        "The published graph: generation, counts, exact or fallback analysis per language, indexed versus "
        "current commits. It cannot see an edit under an unchanged commit.",
    ),
}

INDEX_PROJECT = ToolSpec(
    name="index_project",
    title="Index project",
    description=(
        "Register repositories and build the graph the query tools answer from, after the user consents; "
        "the query tools then appear without a restart. Indexing a large repository takes minutes."
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
