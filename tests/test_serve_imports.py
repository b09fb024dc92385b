"""`kivgraph serve` loads no module of indexer/, tree-sitter or watchfiles, even while it answers calls."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from snapshot_format.layout import StateLayout
from tests.helpers import REPO_ROOT, kivgraph_env
from tests.server_fixtures import GraphBuilder, build_standard, stdio_serve

FORBIDDEN = re.compile(r"^(indexer|tree_sitter|tree_sitter_\w+|watchfiles)(\.|$)")
_IMPORT_LINE = re.compile(r"^import time:\s+\d+\s+\|\s+\d+\s+\|\s+(?P<module>\S.*)$")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def imported_modules(stderr: str) -> set[str]:
    """Module names from the interpreter's -X importtime report."""
    out = set()
    for line in stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            out.add(match.group("module").strip())
    return out


@pytest.mark.anyio
async def test_serve_never_imports_the_indexer_tree_sitter_or_watchfiles(tmp_path: Path) -> None:
    home = tmp_path / "home"
    layout = StateLayout(config_path=home / "kivgraph.toml", state_dir=home / "state")
    build_standard(GraphBuilder(tmp_path / "src")).publish(layout)
    argv = [sys.executable, "-X", "importtime", "-m", "kivgraph_cli", "serve", "--poll-interval", "0.1"]
    async with stdio_serve(argv, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        assert "find_references" in await peer.tool_names()
        calls = {
            "find_references": {"name": "make_square"},
            "find_symbol": {"name": "area", "mode": "substring"},
            "get_source": {"symbols": [{"qualified_name": "pkg.use.main"}]},
            "get_file_outline": {"repository": "alpha", "path": "pkg"},
            "get_symbol": {"qualified_name": "pkg.use.main"},
            "list_repositories": {},
            "graph_status": {},
        }
        for tool, arguments in calls.items():
            is_error, text = await peer.call(tool, arguments)
            assert not is_error, text
        is_error, text = await peer.call("index_project", {"name": "x", "path": "/nonexistent", "languages": ["go"]})
        assert is_error and text.startswith("INVALID_ARGUMENT")
        assert json.loads((await peer.call("graph_status"))[1])["snapshot_id"] == 1
    modules = imported_modules(peer.stderr.decode("utf-8", "replace"))
    assert {
        "mcp.server.lowlevel.server",
        "server.app",
        "server.tools.source",
        "snapshot_format.reader",
    } <= modules  # read
    assert sorted(m for m in modules if FORBIDDEN.match(m)) == []
    # the SDK's client and HTTP transports stay out of a stdio server (server/lean_sdk.py)
    assert sorted(m for m in modules if HTTP_SIDE.match(m)) == []
    # and so do kivgraph's own HTTP side: the gate, the token store, the audit log
    assert sorted({"server.http", "server.audit", "snapshot_format.tokens"} & modules) == []


HTTP_SIDE = re.compile(
    r"^(mcp\.client|mcp\.server\.mcpserver|mcp\.server\.streamable_http\w*|starlette|sse_starlette|"
    r"httpx\w*|uvicorn)(\.|$)"
)


def test_the_lean_import_stands_aside_when_the_sdk_is_already_imported() -> None:
    import mcp.server.stdio  # noqa: F401  (a test process has the whole SDK)

    from server import lean_sdk

    assert lean_sdk.install() is False
    placeholder = lean_sdk._StandIn("starlette.routing").Route
    with pytest.raises(RuntimeError, match="HTTP transports, which kivgraph serve does not load"):
        placeholder("/")
