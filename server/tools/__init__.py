"""Thin tool functions: validate the arguments, call the queries, shape the answer (no MCP types).

Each takes the generation being served and the raw arguments, and returns a
JSON-ready dict (or prose for get_source); a domain failure raises ToolError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.tools.consumers import find_cross_repo_consumers
from server.tools.intent import find_by_intent
from server.tools.outline import get_file_outline
from server.tools.references import find_references
from server.tools.source import get_source
from server.tools.status import graph_status, list_repositories
from server.tools.symbols import find_symbol, get_symbol
from server.tools.traversal import get_blast_radius, trace_dependencies
from snapshot_format.reader import Generation

ReadTool = Callable[[Generation, object], Any]

READ_TOOLS: dict[str, ReadTool] = {
    "find_references": find_references,
    "get_blast_radius": get_blast_radius,
    "trace_dependencies": trace_dependencies,
    "find_cross_repo_consumers": find_cross_repo_consumers,
    "find_by_intent": find_by_intent,
    "find_symbol": find_symbol,
    "get_source": get_source,
    "get_symbol": get_symbol,
    "get_file_outline": get_file_outline,
    "list_repositories": list_repositories,
    "graph_status": graph_status,
}
