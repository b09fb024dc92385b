"""Dart on its fallback, as an agent sees it: the two fixture pub packages indexed, asked through MCP.

No Dart SDK exists on these machines, so every edge is CANDIDATE and no answer about a member is COMPLETE.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from indexer.config import load
from indexer.run import run_index
from server.app import KivgraphApp
from snapshot_format.layout import StateLayout
from tests.helpers import copy_fixture
from tests.test_server_mcp import connect, make_app, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> StateLayout:
    if shutil.which("dart"):
        pytest.skip("a Dart SDK is on PATH: these tests are about the fallback")
    base = tmp_path_factory.mktemp("dart")
    geo, app = copy_fixture("dart_geo", base), copy_fixture("dart_app", base)
    config = base / "kivgraph.toml"
    config.write_text(
        f'version = 1\n\n[[repository]]\nname = "geo"\npath = "{geo}"\nlanguages = ["dart"]\n\n'
        f'[[repository]]\nname = "app"\npath = "{app}"\nlanguages = ["dart"]\n'
    )
    layout = StateLayout(config_path=config, state_dir=base / "state")
    report, _published = run_index(load(config), layout)
    assert report.passed and report.index["dart"]["mode"] == "fallback"
    return layout


@pytest.fixture
def served(layout: StateLayout) -> Iterator[KivgraphApp]:
    app = make_app(layout)
    yield app
    app.holder.close()


async def _ask(app: KivgraphApp, tool: str, **arguments: Any) -> Any:
    async with connect(app) as (client, _inbox):
        return await ok(client, tool, **arguments)


async def test_the_outline_lists_every_declaration_kind_of_the_file(served: KivgraphApp) -> None:
    answer = await _ask(served, "get_file_outline", repository="geo", path="lib/src/shapes.dart", view="full")
    (outlined,) = answer["results"]["files"]
    kinds = {(row.get("qualified_name", row["name"]), row["kind"]) for row in outlined["symbols"]}
    assert {
        ("Shape", "class"),
        ("Named", "mixin"),
        ("Circle.new", "constructor"),
        ("Square.name", "getter"),
        ("Shape.area", "method"),
        ("Circle.area", "method"),
        ("Square.compareTo", "method"),
    } <= kinds


async def test_homonym_methods_are_five_declarations_in_two_repositories(served: KivgraphApp) -> None:
    answer = await _ask(served, "find_symbol", name="area", view="full")
    found = sorted((row["repository"], row["qualified_name"]) for row in answer["results"])
    assert found == [
        ("app", "Report.area"),
        ("app", "Summary.area"),
        ("geo", "Circle.area"),
        ("geo", "Shape.area"),
        ("geo", "Square.area"),
    ]


async def test_a_method_keeps_its_own_callers_and_they_are_candidates(served: KivgraphApp) -> None:
    summary = await _ask(served, "find_references", qualified_name="Summary.area", repository="app", view="full")
    rows = summary["results"]["references"]
    assert [(r["qualified_name"], r["confidence"]) for r in rows] == [("Summary.run", "CANDIDATE")]
    report = await _ask(served, "find_references", qualified_name="Report.area", repository="app")
    assert report["total"] == 0
    assert "not proof of absence" in report["guidance"]


async def test_a_cross_package_use_binds_to_the_provider_as_a_candidate(served: KivgraphApp) -> None:
    answer = await _ask(served, "find_references", qualified_name="Circle", repository="geo", view="full")
    references = answer["results"]["references"]
    assert ("app", "lib/app.dart") in {(r["repository"], r["file_path"]) for r in references}
    assert {r["confidence"] for r in references} == {"CANDIDATE"}


async def test_a_base_method_reaches_its_overrides_and_is_never_complete_without_the_sdk(served: KivgraphApp) -> None:
    answer = await _ask(served, "get_blast_radius", qualified_name="Shape.area", repository="geo", view="full")
    completeness = answer["completeness"]
    assert completeness["verdict"] == "LOWER_BOUND"
    assert "without its type checker" in completeness["dispatch_unknown"]
    reached = {r["qualified_name"]: r["via_kind"] for r in answer["results"]["symbols"]}
    assert reached["Circle.area"] == reached["Square.area"] == "OVERRIDES"
    assert reached["Shape.describe"] == reached["total"] == "CALLS_DIRECT"
