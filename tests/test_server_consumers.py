"""find_cross_repo_consumers through the in-memory MCP client, and end to end on the real fixture repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from server.app import KivgraphApp
from snapshot_format.layout import StateLayout
from tests.helpers import copy_fixture, group_entries, run_kivgraph
from tests.server_fixtures import GraphBuilder, StandardGraph, cross_repo_graph
from tests.test_server_mcp import connect, fails, make_app, ok

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


async def _call(app: KivgraphApp, **arguments: Any) -> Any:
    async with connect(app) as (client, _inbox):
        return await ok(client, "find_cross_repo_consumers", **arguments)


async def test_consumers_of_a_provider_function_list_the_consumers_files_in_rank_order(app: KivgraphApp) -> None:
    answer = await _call(app, qualified_name="lib.core.compute", view="full")
    rows = answer["results"]["consumers"]
    assert [
        (r["category"], r.get("qualified_name") or r.get("package_name") or r.get("requested_symbol")) for r in rows
    ] == [
        ("exact_symbol", "app.main"),
        ("exact_symbol", "app.main.run"),
        ("package", "app"),
        ("package", "app.extra"),
        ("candidate", "app.extra.also"),
        ("unresolved", "compute"),
    ]
    assert all(r["repository"] == "consumer" for r in rows)  # the provider's own uses never appear
    run = rows[1]
    assert (
        run["file_path"],
        run["start_line"],
        run["end_line"],
        run["edge_kind"],
        run["confidence"],
        run["provenance"],
        run["evidence_line"],
    ) == ("app/main.py", 4, 5, "CALLS_DIRECT", "EXACT_TYPECHECKED", "PYTHON_INDEXER_USE", 5)
    package = rows[2]
    assert (package["edge_kind"], package["requested_package"], package["evidence_kind"]) == (
        "PACKAGE_DEPENDS_ON",
        "lib",
        "import",
    )
    assert "file_path" not in package and package["detail"] == "first import at app/main.py:1, 2 imports"
    unresolved = rows[5]
    assert (
        unresolved["file_path"],
        unresolved["start_line"],
        unresolved["reason"],
        unresolved["requested_package"],
    ) == ("app/extra.py", 1, "IMPORT_NOT_RESOLVED", "lib.core")
    # package facts are counted apart and never as exact uses
    assert answer["coverage"] == {"exact": 2, "candidate": 1, "unresolved_related": 1, "package_level": 2}
    subject = answer["results"]["subject"]
    assert (subject["repository"], subject["package_name"], subject["file_path"]) == (
        "provider",
        "lib.core",
        "lib/core.py",
    )


async def test_the_compact_view_merges_a_repositorys_package_rows_and_hoists_shared_columns(app: KivgraphApp) -> None:
    answer = await _call(app, qualified_name="lib.core.compute")
    results = answer["results"]
    # the subject as find_references states it; the qualified name asked for is not echoed, and the package is
    # left off: the qualified name spells it
    assert results["subject"] == "provider:lib/core.py:1" and "qn" not in results and "subject_pkg" not in results
    # a consuming declaration is a label in its file's group (module-relative); the evidence is its line
    entries = [entry for _repo, _path, entry in group_entries(results)]
    labels = {(entry if isinstance(entry, str) else entry[0]): entry for entry in entries}
    assert {"run@4-5", "also@4-5"} <= set(labels)
    # an edge kind is on the row, or it is the kind its group (or the header) states for the rows that say none
    run = labels["run@4-5"]
    stated = [g.get("edge_kind") for g in results.get("groups", [])] + [results.get("edge_kind")]
    assert "CALLS_DIRECT" in run or "CALLS_DIRECT" in stated  # the evidence line is the full view's
    assert "provenance" not in json.dumps(results) and "evidence_kind" not in json.dumps(results)
    groups = results.get("groups", [results])
    entries = [c for g in groups for c in g.get("consumers", [])]
    packages = [e for e in entries if e.get("pkg") == ["app", "app.extra"]]
    assert len(packages) == 1 and "at" not in packages[0]
    assert answer["total"] == 6 and answer["returned"] == 6
    by_short_name = (await _call(app, name="compute", repository="provider"))["results"]
    assert by_short_name["qn"] == "lib.core.compute"  # a name that is not the qualified one is answered with it
    only_packages = (await _call(app, qualified_name="lib.core.left"))["results"]
    # the category says the edge kind and the confidence of a package row (PACKAGE_DEPENDS_ON, EXACT_PACKAGE_MAPPED)
    assert only_packages["category"] == "package"
    assert "edge_kind" not in only_packages and "confidence" not in only_packages
    full = (await _call(app, qualified_name="lib.core.left", view="full"))["results"]
    assert {(c["edge_kind"], c["confidence"]) for c in full["consumers"]} == {
        ("PACKAGE_DEPENDS_ON", "EXACT_PACKAGE_MAPPED")
    }
    assert only_packages["repository"] == "consumer"  # every row's repository, stated once
    assert only_packages["consumers"] == [{"pkg": ["app", "app.extra"]}]


async def test_filters_guidance_and_a_symbol_nobody_else_uses(app: KivgraphApp) -> None:
    candidates = await _call(app, qualified_name="lib.core.compute", in_repository="consumer", in_language="python")
    assert candidates["total"] == 6
    nobody = await _call(app, qualified_name="app.main.cli")
    assert nobody["total"] == 0 and "no other repository consumes" in nobody["guidance"]
    assert "find_references" in nobody["guidance"]
    full_empty = await _call(app, qualified_name="app.main.cli", view="full")
    assert full_empty["results"]["consumers"] is None


async def test_every_error_code_of_find_cross_repo_consumers(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        tool = "find_cross_repo_consumers"
        await fails(client, tool, "INVALID_ARGUMENT")
        await fails(client, tool, "INVALID_ARGUMENT", qualified_name="lib.core.compute", view="files")
        await fails(client, tool, "INVALID_ARGUMENT", qualified_name="lib.core.compute", include_derived=True)
        await fails(client, tool, "INVALID_ARGUMENT", qualified_name="lib.core.compute", limit=501)
        await fails(client, tool, "INVALID_ARGUMENT", qualified_name="lib.core.compute", in_language="cobol")
        await fails(client, tool, "INVALID_ARGUMENT", qualified_name="lib.core.compute", in_language="go")
        await fails(client, tool, "INVALID_ARGUMENT", qualified_name="lib.core.compute", repo="consumer")
        await fails(client, tool, "SYMBOL_NOT_FOUND", qualified_name="lib.core.nothing")
        await fails(client, tool, "AMBIGUOUS_SYMBOL", qualified_name="lib")
        await fails(client, tool, "REPOSITORY_NOT_FOUND", qualified_name="lib.core.compute", in_repository="nope")
        page = await ok(client, tool, qualified_name="lib.core.compute", limit=2)
        await fails(
            client,
            tool,
            "CURSOR_INVALID",
            qualified_name="lib.core.compute",
            in_repository="consumer",
            cursor=page["next_cursor"],
        )


async def test_pagination_walks_to_the_end_with_no_duplicate_and_a_steady_total(app: KivgraphApp) -> None:
    seen: list[tuple[str, ...]] = []
    cursor: str | None = None
    async with connect(app) as (client, _inbox):
        while True:
            page = await ok(
                client,
                "find_cross_repo_consumers",
                qualified_name="lib.core.compute",
                limit=4,
                view="full",
                **({"cursor": cursor} if cursor else {}),
            )
            assert page["total"] == 6
            seen.extend(tuple(str(v) for v in row.values()) for row in page["results"]["consumers"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
    assert len(seen) == len(set(seen)) == 6


async def test_consumers_of_a_symbol_in_a_repository_nobody_imports_are_none(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("solo")
    b.add_file("solo", "m.py", "def f():\n    return 1\n\n\ndef g():\n    return f()\n")
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    b.publish(layout)
    answer = await _call(make_app(layout), qualified_name="m.f")
    assert answer["total"] == 0 and "coverage" not in answer


# --- end to end: the real indexer on tests/fixtures/pyrepo_a and pyrepo_b (drawing imports shapes) --------------


@pytest.fixture(scope="module")
def indexed_pair(tmp_path_factory: pytest.TempPathFactory) -> StateLayout:
    base = tmp_path_factory.mktemp("pair")
    home = base / "home"
    repo_a = copy_fixture("pyrepo_a", base)
    repo_b = copy_fixture("pyrepo_b", base)
    for name, path in (("shapes", repo_a), ("drawing", repo_b)):
        done = run_kivgraph(home, "init", "--repository", f"{name}={path}", "--languages", "python")
        assert done.returncode == 0, done.stderr
    done = run_kivgraph(home, "index")
    assert done.returncode == 0, done.stderr
    return StateLayout(config_path=home / "kivgraph.toml", state_dir=home / "state")


@pytest.mark.analyzers
async def test_real_index_consumers_of_a_provider_function_list_the_consumers_files(indexed_pair: StateLayout) -> None:
    app = make_app(indexed_pair)
    try:
        await _check_real_pair(app)
    finally:
        app.holder.close()


async def _check_real_pair(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        square = await ok(client, "find_cross_repo_consumers", qualified_name="shapes.square.Square", view="full")
        rows = square["results"]["consumers"]
        exact = [r for r in rows if r["category"] == "exact_symbol"]
        assert {(r["repository"], r["file_path"], r["qualified_name"]) for r in exact} == {
            ("drawing", "drawing/canvas.py", "drawing.canvas.default_canvas")
        }
        (package,) = [r for r in rows if r["category"] == "package"]
        assert (package["repository"], package["package_name"], package["requested_package"]) == (
            "drawing",
            "drawing",
            "shapes",
        )
        assert square["coverage"]["package_level"] == 1 and square["coverage"]["exact"] == 1
        function = await ok(
            client, "find_cross_repo_consumers", qualified_name="shapes.circle.circle_area", view="full"
        )
        files = {r.get("file_path") for r in function["results"]["consumers"] if r["category"] != "package"}
        assert files == {"drawing/canvas.py"}
        categories = {r["category"] for r in function["results"]["consumers"]}
        assert "package" in categories and categories & {"exact_symbol", "candidate"}
        blast = await ok(client, "get_blast_radius", qualified_name="shapes.square.Square", view="full")
        reached = {n["qualified_name"]: n for n in blast["results"]["symbols"]}
        assert reached["drawing.canvas.default_canvas"]["repository"] == "drawing"
        assert reached["drawing.canvas.default_canvas"]["via_kind"] == "CALLS_DIRECT"


@pytest.mark.parametrize(
    ("packages", "stated"),
    [
        ({"cmd/a.py": "example.com/app", "cmd/b.py": "example.com/app"}, "example.com/app"),
        (
            {"cmd/a.py": "example.com/app/cmd", "web/c.py": "example.com/web"},
            {"cmd/a.py": "example.com/app/cmd", "web/c.py": "example.com/web"},
        ),
    ],
    ids=["one-package", "two-packages"],
)
def test_a_package_the_qualified_names_do_not_spell_is_stated_once_when_every_file_shares_it(
    tmp_path: Path, packages: dict[str, str], stated: Any
) -> None:
    """Go names a function without its package: the consumers' package is stated, once when every file shares it."""
    import msgspec

    from server.tools import READ_TOOLS
    from snapshot_format.reader import Generation
    from snapshot_format.vocab import EdgeKind

    b = GraphBuilder(tmp_path / "src")
    b.repo("provider")
    b.repo("consumer")
    b.add_file("provider", "lib.py", "def compute():\n    pass\n")
    for path in packages:
        b.add_file("consumer", path, "def run():\n    compute()\n")
        module = path.removesuffix(".py").replace("/", ".")
        b.edge(b.sym("consumer", f"{module}.run"), EdgeKind.CALLS_DIRECT, b.sym("provider", "lib.compute"), line=2)

    def go_like(s: Any) -> Any:  # a bare name and a package path, as go/types names them
        if s.repository != "consumer" or s.kind == "module":
            return s
        return msgspec.structs.replace(s, qualified_name=s.name, package=packages[s.path])

    b.symbols = [go_like(s) for s in b.symbols]
    with Generation(b.publish(StateLayout(tmp_path / "kivgraph.toml", tmp_path / "state")).path) as gen:
        results = READ_TOOLS["find_cross_repo_consumers"](gen, {"qualified_name": "lib.compute"})["results"]
        assert results["pkg"] == stated
        assert list(results["files"]) == list(packages)  # keyed like the pkg map
