"""get_blast_radius and trace_dependencies through the in-memory MCP client, on hand-made generations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from server.app import KivgraphApp
from server.tools import walk
from snapshot_format.layout import StateLayout
from tests.helpers import group_entries, labels_of
from tests.server_fixtures import CALLER_COUNT, GraphBuilder, StandardGraph, build_cross_repo, cross_repo_graph
from tests.server_fixtures import standard_graph as make_standard
from tests.test_server_mcp import WAIT, connect, fails, make_app, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cross(tmp_path: Path) -> StandardGraph:
    return cross_repo_graph(tmp_path)


@pytest.fixture
def app(cross: StandardGraph) -> KivgraphApp:
    return make_app(cross.layout)


def _by_name(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    named = {n["qualified_name"]: n for n in nodes}
    assert len(named) == len(nodes), "a node was reported twice"
    return named


# --- blast radius -----------------------------------------------------------------------------------------------


async def test_blast_radius_reaches_the_consumers_caller_at_depth_two_with_the_via_edge(
    app: KivgraphApp, cross: StandardGraph
) -> None:
    async with connect(app) as (client, _inbox):
        answer = await ok(client, "get_blast_radius", qualified_name="lib.core.compute", view="full")
    results = answer["results"]
    nodes = _by_name(results["symbols"])
    cli = nodes["app.main.cli"]
    assert (cli["depth"], cli["repository"], cli["file_path"], cli["start_line"], cli["end_line"]) == (
        2,
        "consumer",
        "app/main.py",
        8,
        9,
    )
    assert (cli["reached_from"], cli["via_kind"], cli["via_confidence"], cli["via_provenance"]) == (
        "app.main.run",
        "CALLS_DIRECT",
        "EXACT_TYPECHECKED",
        "PYTHON_INDEXER_USE",
    )
    run = nodes["app.main.run"]
    assert (run["depth"], run["reached_from"]) == (1, "lib.core.compute")
    assert nodes["app.main"]["via_confidence"] == "EXACT_PACKAGE_MAPPED"
    assert nodes["app.extra.also"]["via_confidence"] == "CANDIDATE"
    assert "lib.core.compute" not in nodes  # the root is excluded everywhere
    assert results["root_key"] == cross.key("provider", "lib.core.compute")
    assert results["root_repository"] == "provider" and results["traversal_truncated"] is False
    # the full view is complete: keys included
    assert cli["stable_key"] == cross.key("consumer", "app.main.cli")
    assert cli["reached_from_key"] == cross.key("consumer", "app.main.run")


async def _call_once(app: KivgraphApp, tool: str, **arguments: Any) -> Any:
    async with connect(app) as (client, _inbox):
        return await ok(client, tool, **arguments)


async def test_a_diamond_and_a_cycle_terminate_and_count_each_node_once_at_the_right_depth(app: KivgraphApp) -> None:
    answer = await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute", depth=5, view="full")
    results = answer["results"]
    depths = {qn: n["depth"] for qn, n in _by_name(results["symbols"]).items()}
    assert depths == {
        "lib": 1,
        "lib.core.loop": 1,
        "lib.core.left": 1,
        "lib.core.right": 1,
        "app.main": 1,
        "app.main.run": 1,
        "app.extra.also": 1,
        "lib.core.top": 2,
        "app.main.cli": 2,
    }
    assert results["affected"] == answer["total"] == 9 and results["deepest_depth"] == 2
    assert results["by_depth"] == [{"depth": 1, "count": 7}, {"depth": 2, "count": 2}]
    assert results["by_repository"] == [{"key": "consumer", "count": 4}, {"key": "provider", "count": 5}]
    # top touches the visited set through two CALLS_DIRECT edges (left and right) but counts once per kind
    assert results["by_kind"] == [
        {"key": "CALLS_DIRECT", "count": 7},
        {"key": "IMPORTS_SYMBOL", "count": 1},
        {"key": "REEXPORTS", "count": 1},
    ]
    assert {
        "package_key": "package:python:consumer:app.main",
        "package_name": "app.main",
        "repository": "consumer",
        "count": 3,
    } in results["by_package"]
    assert sum(p["count"] for p in results["by_package"]) == 9
    # the default excludes variables (VALUE calls compute): declared, and not applied to the walk
    assert results["symbol_kinds_default_excluded"] == ["field", "variable"] and "symbol_kinds" not in results
    # compact: ``affected`` is the envelope's ``total`` (stated once), the declared default the schema's
    every_answer = await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute", symbol_kinds=["*"])
    every = every_answer["results"]
    assert every["symbol_kinds"] == ["*"] and every_answer["total"] == 10
    assert "symbol_kinds_default_excluded" not in every and "affected" not in every
    default = (await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute"))["results"]
    assert "symbol_kinds_default_excluded" not in default
    chosen = await _call_once(
        app, "get_blast_radius", qualified_name="lib.core.compute", symbol_kinds=["variable", "function", "function"]
    )
    assert chosen["results"]["symbol_kinds"] == ["function", "variable"] and chosen["total"] == 8


async def test_a_subject_with_unresolved_references_nearby_is_a_lower_bound_naming_the_blind_spot(
    app: KivgraphApp, cross: StandardGraph
) -> None:
    answer = await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute")
    c = answer["completeness"]
    assert c["verdict"] == "LOWER_BOUND"
    # compact: ``at`` is repo:path:line, and requested_symbol is left out where detail ends with it
    assert [(s["at"], s["reason"]) for s in c["blind_spots"]] == [
        ("consumer:app/extra.py:1", "IMPORT_NOT_RESOLVED"),
        ("consumer:app/main.py:13", "RECEIVER_NOT_RESOLVED"),
    ]
    assert c["blind_spots"][1]["detail"] == "obj.compute" and "requested_symbol" not in c["blind_spots"][1]
    full = (await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute", view="full"))["completeness"]
    assert [(s["repository"], s["file_path"], s["start_line"]) for s in full["blind_spots"]] == [
        ("consumer", "app/extra.py", 1),
        ("consumer", "app/main.py", 13),
    ]
    assert full["blind_spots"][1]["requested_symbol"] == "compute"
    (scope,) = c["invisible_scopes"]
    assert scope["requested_package"] == "lib.vendored" and "file_path" not in scope
    assert c["candidate_edges"] == 1
    consumer_root = cross.builder.root("consumer")
    provider_root = cross.builder.root("provider")
    assert c["fallback"] == {
        "pattern": r"\bcompute\b",
        "paths": [f"{consumer_root}/app/extra.py", f"{consumer_root}/app/main.py", f"{provider_root}/lib/vendored"],
    }
    assert answer["coverage"]["unresolved_related"] == 3
    clean = await _call_once(app, "get_blast_radius", qualified_name="app.main.cli")
    assert clean["completeness"] == {"verdict": "COMPLETE"}
    assert clean["total"] == 0 and "raise depth" in clean["guidance"]


async def test_completeness_lists_are_capped_with_an_exact_remainder(tmp_path: Path) -> None:
    b = build_cross_repo(GraphBuilder(tmp_path / "src"))
    for i in range(25):
        b.unresolved_ref("compute", "NAME_NOT_RESOLVED", "consumer", f"gen/m{i:02d}.py", line=i + 1)
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    b.publish(layout)
    answer = await _call_once(make_app(layout), "get_blast_radius", qualified_name="lib.core.compute")
    c = answer["completeness"]
    assert len(c["blind_spots"]) == 20 and c["more_blind_spots"] == 27 - 20
    assert answer["coverage"]["unresolved_related"] == 27 + 1


async def test_max_nodes_reached_answers_traversal_truncated_with_exact_aggregates_so_far(app: KivgraphApp) -> None:
    answer = await _call_once(
        app, "get_blast_radius", qualified_name="lib.core.compute", depth=5, max_nodes=4, symbol_kinds=["*"]
    )
    results = answer["results"]
    assert results["traversal_truncated"] is True
    assert answer["total"] == answer["returned"] == 3  # max_nodes counts the root
    # the page holds every affected symbol, so by_depth and by_repository are its rows counted (left off)
    assert results["hop"] == 1 and "by_depth" not in results and "by_repository" not in results
    assert "by_package" not in results
    assert "max_nodes" in answer["guidance"] and "truncated" not in answer
    full = await _call_once(
        app,
        "get_blast_radius",
        qualified_name="lib.core.compute",
        depth=5,
        max_nodes=4,
        symbol_kinds=["*"],
        view="full",
    )
    assert sum(p["count"] for p in full["results"]["by_package"]) == 3
    assert full["results"]["traversal_truncated"] is True and full["truncated"] is False
    untruncated = await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute", depth=5)
    assert "traversal_truncated" not in untruncated["results"]


async def test_the_compact_blast_radius_states_the_root_and_hoists_shared_columns(app: KivgraphApp) -> None:
    answer = await _call_once(
        app,
        "get_blast_radius",
        qualified_name="lib.core.compute",
        depth=1,
        edge_kinds=["CALLS_DIRECT"],
        confidence="EXACT_TYPECHECKED",
    )
    results = answer["results"]
    assert results["root"] == "provider:lib/core.py:1"
    assert (results["edge_kind"], results["confidence"], results["hop"]) == ("CALLS_DIRECT", "EXACT_TYPECHECKED", 1)
    # hop 1 is always reached from the root, so from is implied and left off
    assert "from" not in results and results["kind"] == "function"
    assert results["columns"] == ["at"]  # every other column is the header's
    # a whole page: by_depth, by_kind and by_repository are the rows counted; affected is the envelope's total
    assert not {"by_depth", "by_kind", "by_repository", "affected"} & set(results)
    # the default bound and a whole page's deepest hop are the schema's and the rows' to say, and the depth
    # asked for is the caller's
    assert "max_nodes" not in results and "deepest_depth" not in results and "depth" not in results
    assert answer["total"] == 4
    assert "by_package" not in results  # each row's file names its package
    # the repository most rows share is the root's (provider:lib/core.py:1): the root spells it
    assert "repository" not in results
    assert results["files"] == {
        "lib/core.py": ["loop@5-6", "left@9-10", "right@13-14"],
        "consumer:app/main.py": ["run@4-5"],
    }
    defaulted = (await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute"))["results"]
    assert defaulted["depth"] == 3  # a depth the caller did not give is stated
    paged = (await _call_once(app, "get_blast_radius", qualified_name="lib.core.compute", limit=2))["results"]
    assert paged["by_kind"] and paged["by_depth"]  # a part of the walk: the counts say what the rows cannot
    assert "snapshot_age_ms" not in answer and "symbols" not in results


async def test_compact_rows_state_the_most_common_columns_once_and_the_others_on_the_row(tmp_path: Path) -> None:
    graph = make_standard(tmp_path)
    answer = await _call_once(make_app(graph.layout), "get_blast_radius", qualified_name="hub.hub2", limit=60)
    results = answer["results"]
    assert answer["total"] == CALLER_COUNT and answer["returned"] == 60
    # two thirds of the callers are exact: the header says so, and each candidate row says its own
    assert results["confidence"] == "EXACT_TYPECHECKED"
    assert "via_provenance" not in json.dumps(results)  # the full view's
    assert results["columns"] == ["at", "confidence"]
    entries = [entry for _repo, _path, entry in group_entries(results)]
    assert len(entries) == 60 and entries[0] == ["caller_000@4-5", "CANDIDATE"]
    assert sum(isinstance(e, list) for e in entries) == 20


# --- trace_dependencies -------------------------------------------------------------------------------------------


async def test_trace_walks_outgoing_and_filters_rows_after_reachability(app: KivgraphApp, cross: StandardGraph) -> None:
    async with connect(app) as (client, _inbox):
        full = await ok(client, "trace_dependencies", qualified_name="app.main.cli", view="full")
        depths = {qn: n["depth"] for qn, n in _by_name(full["results"]["nodes"]).items()}
        assert depths == {"app.main.run": 1, "lib.core.compute": 2, "lib.core.loop": 3}
        assert full["results"]["reached"] == 3 and full["results"]["deepest_depth"] == 3
        compute = _by_name(full["results"]["nodes"])["lib.core.compute"]
        assert (compute["reached_from"], compute["via_kind"]) == ("app.main.run", "CALLS_DIRECT")
        # the provider's rows stay reachable through the consumer's run, which the filter hides
        only_provider = await ok(client, "trace_dependencies", qualified_name="app.main.cli", in_repository="provider")
        results = only_provider["results"]
        assert only_provider["total"] == 2 and results["reached"] == 3 and results["repository"] == "provider"
        assert results["root_key"] == cross.key("consumer", "app.main.cli") and "root" not in results
        # a node reached from one in the same file names it as that file's label does (the group names the
        # module); one reached from another file names it whole
        assert results["columns"] == ["at", "hop", "from"]
        assert results["files"] == {"lib/core.py": [["compute@1-2", "2", "app.main.run"], ["loop@5-6", "3", "compute"]]}
        shallow = await ok(client, "trace_dependencies", qualified_name="app.main.cli", depth=1)
        assert shallow["total"] == 1 and shallow["results"]["deepest_depth"] == 1
        await fails(
            client, "trace_dependencies", "REPOSITORY_NOT_FOUND", qualified_name="app.main.cli", in_repository="nope"
        )
        await fails(
            client, "trace_dependencies", "INVALID_ARGUMENT", qualified_name="app.main.cli", in_language="go"
        )  # this graph holds no Go


async def test_trace_seeds_the_members_of_a_class_and_never_reports_seeds(tmp_path: Path) -> None:
    graph = make_standard(tmp_path)
    answer = await _call_once(
        make_app(graph.layout), "trace_dependencies", qualified_name="pkg.shapes.Square", view="full"
    )
    nodes = _by_name(answer["results"]["nodes"])
    assert set(nodes) == {"pkg.shapes.Shape", "pkg.shapes.Shape.area"}
    assert nodes["pkg.shapes.Shape.area"]["reached_from"] == "pkg.shapes.Square.area"
    assert nodes["pkg.shapes.Shape.area"]["via_kind"] == "OVERRIDES"


async def test_a_cycle_in_an_outgoing_walk_terminates(app: KivgraphApp) -> None:
    answer = await _call_once(app, "trace_dependencies", qualified_name="lib.core.compute", depth=5, view="full")
    assert [(n["qualified_name"], n["depth"]) for n in answer["results"]["nodes"]] == [("lib.core.loop", 1)]


# --- errors, deadline, pagination ---------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["get_blast_radius", "trace_dependencies"])
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"depth": 6}, "depth must be between 1 and 5"),
        ({"depth": -1}, "depth must be between 1 and 5"),
        ({"max_nodes": 25001}, "max_nodes must be between 1 and 25000"),
        ({"limit": 501}, "limit must be between 1 and 500"),
        ({"edge_kinds": ["*", "CALLS_DIRECT"]}, 'edge_kinds ["*"] means every kind and must stand alone'),
        ({"edge_kinds": ["CONTAINS_FILE"]}, "edge_kinds: 'CONTAINS_FILE' is not a reference kind"),
        ({"confidence": "SURE"}, "confidence must be one of"),
        ({"view": "files"}, "view files is only accepted by"),
        ({"qualified_name": " lib.core.compute"}, "qualified_name must not have surrounding whitespace"),
    ],
)
async def test_limits_and_vocabularies_are_rejected_not_clamped(
    app: KivgraphApp, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with connect(app) as (client, _inbox):
        text = await fails(client, tool, "INVALID_ARGUMENT", **{"qualified_name": "lib.core.compute", **arguments})
        assert text.startswith(message), text


async def test_every_error_code_of_the_traversals(
    app: KivgraphApp, cross: StandardGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(app) as (client, _inbox):
        await fails(client, "get_blast_radius", "INVALID_ARGUMENT", qualified_name="lib.core.compute", repo="x")
        await fails(client, "get_blast_radius", "INVALID_ARGUMENT", qualified_name="lib.core.compute", kinds=["bogus"])
        await fails(
            client, "get_blast_radius", "INVALID_ARGUMENT", qualified_name="lib.core.compute", kinds=["*", "function"]
        )
        await fails(client, "get_blast_radius", "INVALID_ARGUMENT")
        await fails(client, "get_blast_radius", "SYMBOL_NOT_FOUND", qualified_name="lib.core.nothing")
        await fails(client, "trace_dependencies", "SYMBOL_NOT_FOUND", stable_key="A" * 26)
        await fails(
            client, "get_blast_radius", "REPOSITORY_NOT_FOUND", qualified_name="lib.core.compute", repository="nope"
        )
        await fails(client, "trace_dependencies", "AMBIGUOUS_SYMBOL", qualified_name="lib")  # module homonyms
        page = await ok(client, "get_blast_radius", qualified_name="lib.core.compute", limit=2)
        await fails(
            client,
            "trace_dependencies",
            "CURSOR_INVALID",
            qualified_name="lib.core.compute",
            cursor=page["next_cursor"],
        )
        await fails(
            client,
            "get_blast_radius",
            "CURSOR_INVALID",
            qualified_name="lib.core.compute",
            limit=2,
            depth=2,
            cursor=page["next_cursor"],
        )
        await fails(client, "get_blast_radius", "CURSOR_INVALID", qualified_name="lib.core.compute", cursor="bm9wZQ")
        monkeypatch.setattr(walk, "DEADLINE_SECONDS", -1.0)
        for tool in ("get_blast_radius", "trace_dependencies"):
            message = await fails(client, tool, "TRAVERSAL_LIMIT_REACHED", qualified_name="lib.core.compute")
            assert "lower depth or max_nodes" in message
        monkeypatch.setattr(walk, "DEADLINE_SECONDS", 5.0)
        build_cross_repo(GraphBuilder(tmp_path / "src")).publish(cross.layout)
        with anyio.fail_after(WAIT):
            await app.serving(2)
        await fails(
            client,
            "get_blast_radius",
            "CURSOR_SNAPSHOT_EXPIRED",
            qualified_name="lib.core.compute",
            limit=2,
            cursor=page["next_cursor"],
        )


async def test_view_and_limit_are_not_part_of_the_cursor_identity(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        first = await ok(client, "get_blast_radius", qualified_name="lib.core.compute", limit=4)
        second = await ok(
            client,
            "get_blast_radius",
            qualified_name="lib.core.compute",
            limit=10,
            view="full",
            cursor=first["next_cursor"],
        )
        assert second["returned"] == first["total"] - 4 and second["next_cursor"] is None


@pytest.mark.parametrize("view", ["compact", "full"])
async def test_pagination_walks_to_the_end_with_no_duplicate_and_a_steady_total(tmp_path: Path, view: str) -> None:
    graph = make_standard(tmp_path)
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    async with connect(make_app(graph.layout)) as (client, _inbox):
        while True:
            page = await ok(
                client,
                "get_blast_radius",
                qualified_name="hub.hub",
                limit=40,
                view=view,
                **({"cursor": cursor} if cursor else {}),
            )
            pages += 1
            assert page["total"] == CALLER_COUNT
            if view == "full":
                assert page["results"]["affected"] == CALLER_COUNT
            else:  # a partial page keeps the aggregates, over the whole walk (they never page)
                assert page["results"]["by_depth"] == {"1": CALLER_COUNT}
            if view == "full":
                seen.extend(n["qualified_name"] for n in page["results"]["symbols"])
            else:
                seen.extend(labels_of(page["results"]))
            cursor = page.get("next_cursor")
            if cursor is None:
                break
            assert "showing 40 of 130" in page["guidance"]
    assert pages == 4 and len(seen) == len(set(seen)) == CALLER_COUNT


async def test_a_cursor_is_refused_when_include_derived_changes_the_rows(app: KivgraphApp) -> None:
    """include_derived decides which rows exist: a page cursor of one setting does not continue the other."""
    async with connect(app) as (client, _inbox):
        for tool in ("get_blast_radius", "trace_dependencies", "find_references"):
            first = await ok(client, tool, qualified_name="lib.core.compute", limit=1)
            if not first.get("next_cursor"):
                continue
            await fails(
                client,
                tool,
                "CURSOR_INVALID",
                qualified_name="lib.core.compute",
                include_derived=True,
                cursor=first["next_cursor"],
            )


# --- find_references names where it is blind ------------------------------------------------------------------


async def test_find_references_lists_the_uses_it_could_not_bind_by_what_was_written_and_where(app: KivgraphApp) -> None:
    # compute has bound callers and two uses no analyzer bound: `obj.compute` in app.main.guess (an untyped
    # receiver) and an import that failed in app.extra. The answer names both holders, ready for the next call.
    async with connect(app) as (client, _inbox):
        answer = await ok(client, "find_references", qualified_name="lib.core.compute")
        assert answer["coverage"]["unresolved_related"] == 2
        unbound = answer["results"]["unbound"]
        # by reason, then by what was written; a small group is the file groups of the declarations holding it
        assert {reason: list(by_written) for reason, by_written in unbound.items()} == {
            "IMPORT_NOT_RESOLVED": ["lib.core.compute"],
            "RECEIVER_NOT_RESOLVED": ["obj.compute"],
        }
        ((key, holders),) = unbound["RECEIVER_NOT_RESOLVED"]["obj.compute"].items()
        assert key == "consumer:app/main.py" and holders[0].startswith("guess@")  # another repository: repo:path
        full = await ok(client, "find_references", qualified_name="lib.core.compute", view="full")
        assert sorted(full["results"]["unbound"]) == ["IMPORT_NOT_RESOLVED", "RECEIVER_NOT_RESOLVED"]
        assert full["results"]["unbound"]["RECEIVER_NOT_RESOLVED"]["obj.compute"] == {"uses": 1, "in": {key: holders}}
        # a symbol nothing failed to bind says nothing more
        clean = await ok(client, "find_references", qualified_name="lib.core.loop")
        assert "unbound" not in clean["results"] and "unresolved_related" not in clean["coverage"]


def test_a_large_group_of_unbound_uses_is_counted_and_a_small_one_named(tmp_path: Path) -> None:
    from server.tools.unbound import LISTED, unbound_groups
    from snapshot_format import records

    gen_graph = cross_repo_graph(tmp_path)
    from snapshot_format.reader import open_current

    gen = open_current(gen_graph.layout)
    try:
        many = [
            records.Unresolved(
                name="run",
                reason="RECEIVER_NOT_RESOLVED",
                repository="consumer",
                path=f"app/f{i % 3}.py",
                line=i,
                detail="runner.run",
            )
            for i in range(LISTED + 1)
        ]
        few = [
            records.Unresolved(
                name="run",
                reason="RECEIVER_NOT_RESOLVED",
                repository="consumer",
                path="app/x.py",
                line=7,
                detail="ctx.run",
            )
        ]
        out = unbound_groups(gen, many + few, include_tests=True, repository="consumer")
        assert out.groups == {
            "RECEIVER_NOT_RESOLVED": {
                "runner.run": {"uses": LISTED + 1, "files": 3},
                "ctx.run": {"uses": 1, "in": {"app/x.py": ["@7"]}},
            }
        }
        assert out.fields(compact=True)["unbound"] == {
            "RECEIVER_NOT_RESOLVED": {"runner.run": {"uses": LISTED + 1, "files": 3}, "ctx.run": {"app/x.py": ["@7"]}}
        }
    finally:
        gen.close()


async def test_trace_dependencies_names_the_uses_it_could_not_follow(app: KivgraphApp) -> None:
    # app.main.guess calls obj.compute on an untyped receiver: what guess reaches is not known in full
    async with connect(app) as (client, _inbox):
        answer = await ok(client, "trace_dependencies", qualified_name="app.main.guess")
        assert answer["coverage"]["unresolved_related"] == 1
        ((written, holders),) = next(iter(answer["results"]["unbound"].values())).items()
        ((_key, labels),) = holders.items()
        assert written == "obj.compute" and labels[0].startswith("guess@")
        # cli reaches run, and run reaches compute: nothing inside either failed to bind
        clean = await ok(client, "trace_dependencies", qualified_name="app.main.cli", depth=1)
        assert "unbound" not in clean["results"] and "unresolved_related" not in clean["coverage"]


def test_unbound_groups_past_the_cap_are_counted_not_listed(tmp_path: Path) -> None:
    from server.tools.unbound import MAX_GROUPS, unbound_groups
    from snapshot_format import records
    from snapshot_format.reader import open_current

    gen = open_current(cross_repo_graph(tmp_path).layout)
    try:
        spread = [
            records.Unresolved(
                name="run",
                reason="RECEIVER_NOT_RESOLVED",
                repository="consumer",
                path="app/x.py",
                line=i,
                detail=f"r{i}.run",
            )
            for i in range(MAX_GROUPS + 3)
        ]
        out = unbound_groups(gen, spread, include_tests=True, repository="consumer")
        assert len(out.groups["RECEIVER_NOT_RESOLVED"]) == MAX_GROUPS
        assert out.more == {"groups": 3, "uses": 3}
    finally:
        gen.close()


def test_by_kind_stays_on_a_whole_page_when_a_symbol_is_linked_two_ways(tmp_path: Path) -> None:
    """by_kind counts a symbol once per kind of edge linking it to the walk: a row's one via kind cannot say it."""
    from server.tools import READ_TOOLS
    from snapshot_format.layout import StateLayout
    from snapshot_format.reader import Generation
    from snapshot_format.vocab import EdgeKind

    b = GraphBuilder(tmp_path / "src")
    b.repo("two")
    b.add_file("two", "lib.py", "def target():\n    pass\n")
    b.add_file("two", "use.py", "def caller():\n    target()\n    keep = target\n\n\ndef plain():\n    target()\n")
    target = b.sym("two", "lib.target")
    b.edge(b.sym("two", "use.caller"), EdgeKind.CALLS_DIRECT, target, line=2)
    b.edge(b.sym("two", "use.caller"), EdgeKind.REFERENCES, target, line=3)
    b.edge(b.sym("two", "use.plain"), EdgeKind.CALLS_DIRECT, target, line=7)
    with Generation(b.publish(StateLayout(tmp_path / "kivgraph.toml", tmp_path / "state")).path) as gen:
        blast = READ_TOOLS["get_blast_radius"](gen, {"qualified_name": "lib.target", "depth": 1})["results"]
        assert blast["by_kind"] == {"CALLS_DIRECT": 2, "REFERENCES": 1}
        calls_only = {"qualified_name": "lib.target", "depth": 1, "edge_kinds": ["CALLS_DIRECT"]}
        assert "by_kind" not in READ_TOOLS["get_blast_radius"](gen, calls_only)["results"]  # the rows say it
