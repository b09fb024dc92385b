"""find_by_intent through the in-memory MCP client, on the real fixture repositories indexed by the real CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from indexer.lexicon import LexiconBuilder, file_terms
from indexer.publish import GenerationContent, publish
from server.app import KivgraphApp
from snapshot_format import keys
from snapshot_format.layout import StateLayout
from snapshot_format.lexical import LEXICAL_VERSION
from tests.helpers import copy_fixture, ranked_files, run_kivgraph
from tests.server_fixtures import GraphBuilder, build_standard, standard_graph
from tests.test_server_mcp import connect, fails, make_app, ok

pytestmark = pytest.mark.anyio
TOOL = "find_by_intent"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def indexed_layout(tmp_path_factory: pytest.TempPathFactory) -> StateLayout:
    base = tmp_path_factory.mktemp("intent-pair")
    home = base / "home"
    for name, fixture in (("shapes", "pyrepo_a"), ("drawing", "pyrepo_b")):
        path = copy_fixture(fixture, base)
        done = run_kivgraph(home, "init", "--repository", f"{name}={path}", "--languages", "python")
        assert done.returncode == 0, done.stderr
    # The lexical index does not depend on the analyzer: the fallback keeps this fixture fast.
    done = run_kivgraph(home, "index", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    assert done.returncode == 0, done.stderr
    return StateLayout(config_path=home / "kivgraph.toml", state_dir=home / "state")


@pytest.fixture
def app(indexed_layout: StateLayout) -> Iterator[KivgraphApp]:
    """One server per test, closed after it (LMDB opens a generation once per process)."""
    served = make_app(indexed_layout)
    yield served
    served.holder.close()


async def test_the_file_to_open_comes_first_with_its_matched_terms_and_symbols(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        answer = await ok(client, TOOL, query="convert legacy units to inches")
        again = await ok(client, TOOL, query="convert legacy units to inches")
    assert answer == again  # deterministic
    results = answer["results"]
    # each ranked file is a row of the columns named once; a symbol is a row of symbol_columns
    assert results["columns"] == ["file", "terms", "symbols"] and results["symbol_columns"] == ["at", "kind"]
    first = ranked_files(results)[0]
    assert first["repo"] == "shapes"
    assert first["file"] == "src/shapes/units.py"
    assert set(first["terms"]) <= set(results["terms"]) and "legacy" in first["terms"]
    # the declaration that matched best, named (the file implies shapes.units), its kind the header's
    assert first["symbols"][0] == "legacy_to_inches@11-13" and first["kinds"][0] == "function"
    assert results["files"][0][2][0] == "legacy_to_inches@11-13"  # the header's kind: the label alone
    assert all(len(f["symbols"]) <= 2 for f in ranked_files(results))  # one or two per file
    assert all(len(row) <= 3 for row in results["files"])  # no score: the order is the ranking
    assert answer["total"] == len(results["files"]) and "guidance" not in answer


async def test_filters_by_repository_language_and_kind(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        drawing = await ok(client, TOOL, query="canvas of shapes", in_repository="drawing")
        assert drawing["results"]["repository"] == "drawing"
        assert ranked_files(drawing["results"])[0]["file"] == "drawing/canvas.py"
        assert all(":" not in row[0] for row in drawing["results"]["files"])  # the header's repository
        classes = await ok(client, TOOL, query="canvas of shapes", symbol_kinds=["class"])
        # one kind for the page's symbols is stated once in the header, the labels then bare
        kinds = {k for f in ranked_files(classes["results"]) for k in f["kinds"]}
        assert kinds == {"class"} and classes["results"]["kind"] == "class"
        assert all(
            isinstance(label, str) for row in classes["results"]["files"] for label in (row[2] if len(row) > 2 else [])
        )
        python = await ok(client, TOOL, query="canvas of shapes", in_language="python")
        assert (
            python["total"]
            == drawing["total"] + (await ok(client, TOOL, query="canvas of shapes", in_repository="shapes"))["total"]
        )


async def test_errors_and_guidance(app: KivgraphApp) -> None:
    async with connect(app) as (client, _inbox):
        assert (await fails(client, TOOL, "INVALID_ARGUMENT")) == "query is required"
        assert (await fails(client, TOOL, "INVALID_ARGUMENT", query="")) == "query is required"
        await fails(client, TOOL, "INVALID_ARGUMENT", query=" area ")
        assert "no searchable word" in await fails(client, TOOL, "INVALID_ARGUMENT", query="how is the")
        await fails(client, TOOL, "INVALID_ARGUMENT", query="area", symbol_kinds=["gizmo"])
        await fails(client, TOOL, "INVALID_ARGUMENT", query="area", in_language="cobol")
        assert "use in_repository" in await fails(client, TOOL, "INVALID_ARGUMENT", query="area", repository="x")
        await fails(client, TOOL, "INVALID_ARGUMENT", query="area", limit=501)
        await fails(client, TOOL, "INVALID_ARGUMENT", query="area", view="full")
        await fails(client, TOOL, "REPOSITORY_NOT_FOUND", query="area", in_repository="nope")
        page = await ok(client, TOOL, query="area circle shape", limit=1)
        await fails(client, TOOL, "CURSOR_INVALID", query="area", limit=1, cursor=page["next_cursor"])
        nothing = await ok(client, TOOL, query="zzzqqq")
        assert nothing["total"] == 0 and nothing["results"]["files"] == [] and "guidance" in nothing


async def test_pagination_walks_to_the_end_with_no_duplicate_and_a_steady_total(app: KivgraphApp) -> None:
    seen: list[tuple[str, str]] = []
    cursor: str | None = None
    async with connect(app) as (client, _inbox):
        everything = await ok(client, TOOL, query="shape area circle square canvas units", limit=500)
        total = everything["total"]
        assert total >= 4
        while True:
            page = await ok(
                client,
                TOOL,
                query="shape area circle square canvas units",
                limit=3,
                **({"cursor": cursor} if cursor else {}),
            )
            assert page["total"] == total
            seen.extend((f["repo"], f["file"]) for f in ranked_files(page["results"]))
            cursor = page.get("next_cursor")
            if cursor is None:
                break
            assert "guidance" not in page  # total and next_cursor say it: the page is the few files to open first
    expected = [(f["repo"], f["file"]) for f in ranked_files(everything["results"])]
    assert seen == expected and len(set(seen)) == total


async def test_a_generation_without_a_lexical_index_says_so(tmp_path: Path) -> None:
    graph = standard_graph(tmp_path)
    async with connect(make_app(graph.layout)) as (client, _inbox):
        answer = await ok(client, TOOL, query="square area")
    assert answer["total"] == 0 and "no lexical index" in answer["guidance"]


async def test_a_lexicon_written_under_other_term_rules_is_refused_not_ranked(tmp_path: Path) -> None:
    """A generation whose lexicon was stemmed by an older build: ranking it with today's terms would be silently wrong."""

    builder = build_standard(GraphBuilder(tmp_path / "src"))
    lexicon = LexiconBuilder()
    lexicon.add("alpha", "shapes.py", "python", file_terms("shapes.py", "def square_area(): pass", None))
    derived = lexicon.items()
    older = LEXICAL_VERSION - 1
    derived[keys.DB_META] = [(keys.META_LEXICON_STATS, msgspec.msgpack.encode([older, 1, 100]))]
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    publish(
        layout,
        GenerationContent(
            repositories=list(builder.repositories.values()),
            files=builder.files,
            symbols=builder.symbols,
            edges=builder.edges,
            unresolved=builder.unresolved,
            analyzers={},
            derived=derived,
        ),
        indexer_version="test",
    )
    async with connect(make_app(layout)) as (client, _inbox):
        answer = await ok(client, TOOL, query="square area")
    assert answer["total"] == 0
    assert f"lexical terms v{older}" in answer["guidance"] and "re-index" in answer["guidance"]


RETRY = '''"""Retrying failed calls."""


class RetryConfig:
    retry_delay_seconds = 3


def default_retry_delay(attempt):
    """The delay before a retry: doubled at every attempt."""

    def clamp_retry_delay(value):
        return min(value, 60)

    return clamp_retry_delay(2**attempt)


def give_up():
    return None
'''


def test_each_file_names_the_one_or_two_declarations_that_match_best(tmp_path: Path) -> None:
    """A function named for the task before a field sharing its words; a function local to another after it."""
    from server.tools.intent import find_by_intent
    from snapshot_format.reader import open_current
    from tests.helpers import write_repo

    repo = write_repo(tmp_path / "retrying", {"retrying/__init__.py": "", "retrying/policy.py": RETRY})
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", "--repository", f"r={repo}", "--languages", "python").returncode == 0
    assert run_kivgraph(home, "index", KIVGRAPH_SCIP_PYTHON="/nonexistent").returncode == 0
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        answer = find_by_intent(gen, {"query": "the delay between retries"})
    first = ranked_files(answer["results"])[0]
    assert first["file"] == "retrying/policy.py"
    assert first["symbols"] == ["default_retry_delay@8-14"] and first["kinds"] == ["function"]


def test_terms_among_agrees_with_the_index_terms_it_filters() -> None:
    from snapshot_format.lexical import terms, terms_among

    text = "Retries the failed requests; parse_args and ParseARGS, studies generated generation 42 x"
    every = set(terms(text))
    for wanted in (every, {"retri", "pars", "study"}, {"nothing"}, {"generat", "arg", "args"}):
        assert terms_among(text, frozenset(wanted)) == every & set(wanted)
