"""Every registered tool through the MCP SDK's in-memory client, against real generations."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import lmdb
import mcp
import mcp_types as types
import pytest

from server.app import KivgraphApp, ServeOptions
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from tests.server_fixtures import CALLER_COUNT, GraphBuilder, StandardGraph, build_standard, standard_graph

pytestmark = pytest.mark.anyio

READ_TOOLS = [
    "find_references",
    "find_symbol",
    "get_source",
    "get_blast_radius",
    "trace_dependencies",
    "find_cross_repo_consumers",
    "find_by_intent",
    "get_file_outline",
    "get_symbol",
    "list_repositories",
    "graph_status",
]
WAIT = 15.0  # seconds: the bound on every wait for something asynchronous


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Inbox:
    """Server notifications the client received, with a bounded wait for one of them."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._changed = anyio.Event()

    async def handle(self, message: object) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.methods.append(method)
            self._changed.set()

    async def wait_for(self, method: str) -> None:
        with anyio.fail_after(WAIT):
            while method not in self.methods:
                self._changed = anyio.Event()
                await self._changed.wait()


@asynccontextmanager
async def connect(app: KivgraphApp, **kwargs: Any) -> AsyncIterator[tuple[mcp.Client, Inbox]]:
    inbox = Inbox()
    async with mcp.Client(app.server, mode="legacy", message_handler=inbox.handle, **kwargs) as client:
        yield client, inbox


def make_app(layout: StateLayout, **options: Any) -> KivgraphApp:
    return KivgraphApp(layout, ServeOptions(poll_interval=0.02, **options))


@pytest.fixture
def graph(tmp_path: Path) -> StandardGraph:
    return standard_graph(tmp_path)


@pytest.fixture
def app(graph: StandardGraph) -> KivgraphApp:
    return make_app(graph.layout)


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert result.structured_content is None
    return block.text


async def ok(client: mcp.Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    text = text_of(result)
    assert not result.is_error, text
    return text if tool == "get_source" else json.loads(text)


async def fails(client: mcp.Client, tool: str, code: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    text = text_of(result)
    assert result.is_error, text
    assert text.startswith(f"{code}: "), text
    return text[len(code) + 2 :]


# --- the surface as a client sees it -----------------------------------------------------------------------------


async def test_with_a_generation_the_read_tools_and_index_project_are_listed(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == [*READ_TOOLS, "index_project"]
        for tool in tools:
            assert tool.output_schema is None
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is (tool.name != "index_project")
        index = tools[-1].annotations
        assert index is not None and index.destructive_hint is True and index.title == "Index project"
        assert (client.instructions or "").startswith("kivgraph answers who calls")


async def test_every_read_tool_answers_with_one_text_block(app: KivgraphApp) -> None:
    calls = {
        "find_references": {"name": "make_square"},
        "find_symbol": {"name": "area"},
        "get_source": {"symbols": [{"qualified_name": "pkg.use.main"}]},
        "get_file_outline": {"repository": "alpha", "path": "pkg/use.py"},
        "get_symbol": {"qualified_name": "pkg.use.main"},
        "list_repositories": {},
        "graph_status": {},
    }
    async with connect(app) as (client, _inbox):
        for tool, arguments in calls.items():
            answer = await ok(client, tool, **arguments)
            if tool == "get_source":
                # the first line ends with the estimate of the answer's own size
                assert re.match(r"snapshot 1  1 bodies  context 0  ~\d+ tokens\n@ alpha pkg/use.py:8-10 ", answer)
            else:
                assert answer["snapshot_id"] == 1 and answer["total"] >= 1
                assert isinstance(answer["size_tokens"], int) and answer["size_tokens"] > 0


# --- error codes ------------------------------------------------------------------------------------------------------


async def test_each_error_code_of_the_read_tools_reaches_the_client(app: KivgraphApp, graph: StandardGraph) -> None:
    async with connect(app) as (client, _inbox):
        await fails(client, "find_symbol", "INVALID_ARGUMENT", name="area", limit=501)
        await fails(client, "get_symbol", "SYMBOL_NOT_FOUND", qualified_name="pkg.nowhere")
        await fails(client, "get_symbol", "AMBIGUOUS_SYMBOL", qualified_name="util.helper")
        await fails(client, "get_symbol", "REPOSITORY_NOT_FOUND", qualified_name="x", repository="delta")
        await fails(client, "find_symbol", "CURSOR_INVALID", name="area", cursor="bm9wZQ")
        page = await ok(client, "find_symbol", name="caller_", mode="prefix", limit=5)
        await fails(client, "find_symbol", "CURSOR_INVALID", name="hub", cursor=page["next_cursor"])
        await fails(client, "no_such_tool", "INVALID_ARGUMENT")


async def test_an_unreadable_generation_is_snapshot_unavailable_not_a_traceback(
    app: KivgraphApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_self: Generation) -> object:
        raise lmdb.CorruptedError("mdb_get: MDB_CORRUPTED")

    monkeypatch.setattr(Generation, "counts", broken)
    async with connect(app) as (client, _inbox):
        message = await fails(client, "graph_status", "SNAPSHOT_UNAVAILABLE")
        assert "could not be read" in message
        assert (await ok(client, "find_symbol", name="area"))["total"] == 3  # the server keeps serving


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        ({}, "INVALID_ARGUMENT", "one of stable_key, qualified_name or name is required"),
        (
            {"stable_key": "A" * 26, "qualified_name": "q"},
            "INVALID_ARGUMENT",
            "pass only one of stable_key, qualified_name or name, not stable_key and qualified_name",
        ),
        (
            {"stable_key": "A" * 26, "path": "pkg"},
            "INVALID_ARGUMENT",
            "repository and path narrow a qualified_name; a stable_key already names one symbol",
        ),
        (
            {"qualified_name": "q", "path": "pkg"},
            "INVALID_ARGUMENT",
            "path is repository-relative, so it requires repository",
        ),
        ({"stable_key": "A" * 26}, "SYMBOL_NOT_FOUND", 'stable key "AAAAAAAAAAAAAAAAAAAAAAAAAA" was not found'),
        (
            {"qualified_name": "pkg.use.main", "repository": "zeta"},
            "REPOSITORY_NOT_FOUND",
            'repository "zeta" is not in the published graph',
        ),
        ({"qualified_name": "pkg.gone"}, "SYMBOL_NOT_FOUND", 'qualified name "pkg.gone" was not found'),
        ({"qualified_name": "util.helper"}, "AMBIGUOUS_SYMBOL", 'qualified name "util.helper" names 3 symbols'),
    ],
)
async def test_each_selector_rule_through_get_symbol(
    app: KivgraphApp, arguments: dict[str, Any], code: str, message: str
) -> None:
    async with connect(app) as (client, _inbox):
        assert (await fails(client, "get_symbol", code, **arguments)).startswith(message)


async def test_the_same_selector_rules_apply_to_find_references_and_get_source(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        await fails(client, "find_references", "AMBIGUOUS_SYMBOL", qualified_name="util.helper")
        text = await ok(client, "get_source", symbols=[{"qualified_name": "q", "path": "x"}])
        assert text.splitlines()[1] == (
            "! symbols[0] q — INVALID_ARGUMENT: symbols[0]: path is repository-relative, so it requires repository"
        )
        resolved = await ok(client, "find_references", qualified_name="util.helper", repository="beta")
        assert resolved["results"]["subject"] == "beta:util.py:1"


# --- views and paging --------------------------------------------------------------------------------------------------


async def test_each_view_of_find_references_and_the_outline(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        compact = await ok(client, "find_references", qualified_name="hub.hub", limit=3)
        full = await ok(client, "find_references", qualified_name="hub.hub", limit=3, view="full")
        files = await ok(client, "find_references", qualified_name="hub.hub", limit=3, view="files")
        assert compact["results"]["files"]["callers/c0.py"][0] == "caller_000@4-5"  # the file implies callers.c0
        assert full["results"]["references"][0]["qualified_name"] == "callers.c0.caller_000"
        assert full["truncated"] is True and full["snapshot_age_ms"] >= 0
        assert files["results"]["files"] == {"gamma": {"callers/c0.py": 3}}  # repository -> path tree -> count
        for answer in (compact, full, files):
            assert answer["total"] == CALLER_COUNT and answer["returned"] == 3
        outline_files = await ok(client, "get_file_outline", repository="gamma", path="hub.py", view="files")
        assert outline_files["results"]["files"] == [{"file": "hub.py", "declarations": 3}]
        outline_full = await ok(client, "get_file_outline", repository="gamma", path="hub.py", view="full")
        assert [s["name"] for s in outline_full["results"]["files"][0]["symbols"]] == ["hub", "hub", "hub2"]


async def test_pagination_walks_to_the_end_with_no_duplicate_and_a_steady_total(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await ok(
                client,
                "find_references",
                qualified_name="hub.hub",
                view="full",
                limit=40,
                **({"cursor": cursor} if cursor else {}),
            )
            assert page["total"] == CALLER_COUNT
            seen.extend(r["qualified_name"] for r in page["results"]["references"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == CALLER_COUNT


async def test_default_filters_are_declared_in_the_full_answer_and_the_schema(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        full = await ok(client, "find_references", name="make_square", view="full")
        assert full["results"]["edge_kinds_default_excluded"] == ["EXPORTS", "REEXPORTS", "PART_OF"]
        for view in ("compact", "files"):  # the schema states the default; the short views do not repeat it
            answer = await ok(client, "find_references", name="make_square", view=view)
            assert "edge_kinds_default_excluded" not in answer["results"]
        explicit = await ok(client, "find_references", name="make_square", edge_kinds=["CALLS_DIRECT"], view="full")
        assert "edge_kinds_default_excluded" not in explicit["results"]
        tools = {t.name: t for t in (await client.list_tools()).tools}
        edge_kinds = tools["find_references"].input_schema["properties"]["edge_kinds"]["description"]
        assert "EXPORTS, REEXPORTS, PART_OF" in edge_kinds


async def test_get_source_refuses_paths_and_symlinks_that_leave_the_repository(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    root = b.repo("delta")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    b.add_file("delta", "link/mod.py", "def secret():\n    return 42\n")
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    b.publish(layout)
    async with connect(make_app(layout)) as (client, _inbox):
        dotdot = await ok(
            client, "get_source", symbols=[{"qualified_name": "link.mod.secret", "repository": "delta", "path": "../x"}]
        )
        assert "symbols[0].path must stay inside the repository" in dotdot
        absolute = await ok(
            client,
            "get_source",
            symbols=[{"qualified_name": "link.mod.secret", "repository": "delta", "path": "/etc/passwd"}],
        )
        assert "symbols[0].path must be repository-relative" in absolute
        refused = await ok(client, "get_source", symbols=[{"qualified_name": "link.mod.secret"}])
        assert refused.splitlines()[1] == (
            "! delta link/mod.py link.mod.secret — the path has a symlink component, which is never followed"
        )
        assert "42" not in refused


# --- following generations ---------------------------------------------------------------------------------------------


async def test_a_cursor_is_refused_after_a_re_index_and_snapshot_id_grows(
    app: KivgraphApp, graph: StandardGraph, tmp_path: Path
) -> None:
    async with connect(app) as (client, _inbox):
        page = await ok(client, "find_references", qualified_name="hub.hub", limit=10)
        assert page["snapshot_id"] == 1
        build_standard(GraphBuilder(tmp_path / "src")).publish(graph.layout)
        with anyio.fail_after(WAIT):
            await app.serving(2)
        message = await fails(
            client, "find_references", "CURSOR_SNAPSHOT_EXPIRED", qualified_name="hub.hub", cursor=page["next_cursor"]
        )
        assert "snapshot 1" in message and "snapshot 2" in message
        fresh = await ok(client, "find_references", qualified_name="hub.hub", limit=10)
        assert fresh["snapshot_id"] == 2


async def test_without_a_generation_only_index_project_is_listed_until_one_is_published(tmp_path: Path) -> None:
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    app = make_app(layout)
    async with connect(app) as (client, inbox):
        assert [t.name for t in (await client.list_tools()).tools] == ["index_project"]
        instructions = client.instructions or ""
        assert "only index_project" in instructions and "kivgraph index" in instructions
        message = await fails(client, "find_symbol", "INDEX_NOT_READY", name="area")
        assert "index_project" in message and 'kivgraph index"' in message
        empty = await ok(client, "graph_status")
        assert empty["snapshot_id"] is None and empty["results"]["status"] == "empty"
        build_standard(GraphBuilder(tmp_path / "src")).publish(layout)  # an outside `kivgraph index`
        await inbox.wait_for("notifications/tools/list_changed")
        assert [t.name for t in (await client.list_tools()).tools] == [*READ_TOOLS, "index_project"]
        assert (await ok(client, "find_symbol", name="area"))["total"] == 3


async def test_a_broken_newer_generation_is_skipped_and_the_last_good_one_serves(
    graph: StandardGraph, tmp_path: Path
) -> None:
    app = KivgraphApp(graph.layout, ServeOptions(poll_interval=3600))  # this test drives refresh itself
    async with connect(app) as (client, _inbox):
        second = build_standard(GraphBuilder(tmp_path / "src")).publish(graph.layout)
        (second.path / "manifest").write_text("{ not json")
        events = await app.refresh()
        assert events.swapped_to is None and "malformed manifest" in events.refused[0]
        answer = await ok(client, "find_symbol", name="area")
        assert answer["snapshot_id"] == 1 and answer["total"] == 3
        third = build_standard(GraphBuilder(tmp_path / "src")).publish(graph.layout)
        with (third.path / "data.mdb").open("r+b") as data:
            data.truncate(4096)
        events = await app.refresh()
        assert events.swapped_to is None and "differs from the" in events.refused[0]
        fourth = build_standard(GraphBuilder(tmp_path / "src")).publish(graph.layout)
        assert (await app.refresh()).swapped_to == fourth.name
        assert (await ok(client, "find_symbol", name="area"))["snapshot_id"] == fourth.generation_id


async def test_the_server_also_speaks_the_modern_protocol(app: KivgraphApp) -> None:
    async with mcp.Client(app.server) as client:
        assert client.protocol_version >= "2026"
        assert [t.name for t in (await client.list_tools()).tools] == [*READ_TOOLS, "index_project"]
        result = await client.call_tool("find_symbol", {"name": "area"})
        assert json.loads(text_of(result))["total"] == 3


async def test_a_modern_client_listening_hears_the_tools_change_when_a_generation_appears(tmp_path: Path) -> None:
    from mcp.shared.subscriptions import ToolsListChanged

    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    app = make_app(layout)
    async with mcp.Client(app.server) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["index_project"]
        async with client.listen(tools_list_changed=True) as subscription:
            build_standard(GraphBuilder(tmp_path / "src")).publish(layout)
            with anyio.fail_after(WAIT):
                event = await subscription.__anext__()
        assert isinstance(event, ToolsListChanged)
        assert [t.name for t in (await client.list_tools()).tools] == [*READ_TOOLS, "index_project"]


async def test_a_served_generation_failing_its_digest_check_gives_way_to_an_older_good_one(
    graph: StandardGraph, tmp_path: Path
) -> None:
    second = build_standard(GraphBuilder(tmp_path / "src")).publish(graph.layout)
    data = second.path / "data.mdb"  # the link layer: each generation's own (equal repository layers are shared)
    raw = bytearray(data.read_bytes())
    at = raw.find(b"gamma")
    assert at > 0
    raw[at : at + 3] = b"GAM"  # same size: only the digest can tell
    data.write_bytes(bytes(raw))
    app = KivgraphApp(graph.layout, ServeOptions(poll_interval=0.02, verify_delay=0))
    assert app.holder.current_id == 2
    async with connect(app) as (client, _inbox):
        with anyio.fail_after(WAIT):
            await app.serving(1)
        answer = await ok(client, "find_symbol", name="make_square")
        assert answer["snapshot_id"] == 1 and answer["total"] == 1


async def test_the_language_enum_follows_the_generation_and_a_change_is_announced(
    graph: StandardGraph, tmp_path: Path
) -> None:
    from tests.test_server_name_forms import _add_go

    app = KivgraphApp(graph.layout, ServeOptions(poll_interval=3600))  # this test drives refresh itself
    async with connect(app) as (client, inbox):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["find_references"].input_schema["properties"]["in_language"]["enum"] == ["python"]
        assert "go" in await fails(client, "find_symbol", "INVALID_ARGUMENT", name="area", in_language="go")
        builder = build_standard(GraphBuilder(tmp_path / "src"))
        _add_go(builder, "pflag")  # a first Go repository
        builder.publish(graph.layout)
        assert (await app.refresh()).swapped_to is not None
        await inbox.wait_for("notifications/tools/list_changed")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["find_symbol"].input_schema["properties"]["in_language"]["enum"] == ["python", "go"]
        found = await ok(client, "find_symbol", name="NewFlagSet", in_language="go")
        assert found["total"] == 1
