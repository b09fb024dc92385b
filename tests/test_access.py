"""Access per repository: a limited token's view answers exactly as a graph without the other repositories.

Each graph is published twice: whole, and with only the repositories a token may read (their files,
symbols, the edges between them, their unresolved rows, package dependencies and lexicon). Every read tool,
asked through the token's view of the whole graph, must answer what the smaller graph answers, for every
symbol of the whole graph by stable key, qualified name and name (so also those of the hidden
repositories: the same error code, text and counts as for a symbol that does not exist), for paths,
repositories and queries, page by page. The only difference allowed is the sentence saying the answer is
"within the repositories this token can read", and the cursors' bytes (bound to the view).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from indexer.lexicon import LexiconBuilder, file_terms
from indexer.publish import GenerationContent, publish
from server.access import ACCESS_NOTE, Access, RepositoryView, view_of
from server.errors import ToolError
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from tests.server_fixtures import GraphBuilder, build_cross_repo, build_standard

SYMBOL_TOOLS = ("get_symbol", "find_references", "get_blast_radius", "trace_dependencies", "find_cross_repo_consumers")
PAGED = {"find_references", "get_blast_radius", "trace_dependencies", "find_cross_repo_consumers"}


def _content(b: GraphBuilder, keep: set[str] | None) -> GenerationContent:
    """The builder's generation, restricted to the repositories in ``keep`` (None: all), with a lexicon."""

    def kept(repository: str) -> bool:
        return keep is None or repository in keep

    owner = {s.key: s.repository for s in b.symbols}
    lexicon = LexiconBuilder()
    for f in b.files:
        if kept(f.repository) and f.status == "indexed":
            text = (Path(b.repositories[f.repository].root) / f.path).read_text()
            lexicon.add(f.repository, f.path, f.language, file_terms(f.path, text, None))
    return GenerationContent(
        repositories=[r for r in b.repositories.values() if kept(r.name)],
        files=[f for f in b.files if kept(f.repository)],
        symbols=[s for s in b.symbols if kept(s.repository)],
        edges=[e for e in b.edges if kept(owner[e.source]) and kept(owner[e.target])],
        unresolved=[u for u in b.unresolved if kept(u.repository)],
        analyzers={"python": "hand-made 1"},
        package_dependencies=[
            d for d in b.package_dependencies if kept(d.consumer_repository) and kept(d.provider_repository)
        ],
        derived=lexicon.items(),
    )


class Pair:
    """The whole graph seen through a token's view, and the graph that only has the token's repositories."""

    def __init__(self, tmp: Path, build: Any, visible: tuple[str, ...]) -> None:
        self.builder = build(GraphBuilder(tmp / "src"))
        layouts = [StateLayout(config_path=tmp / f"{n}.toml", state_dir=tmp / n) for n in ("whole", "part")]
        publish(layouts[0], _content(self.builder, None), indexer_version="test-fixture")
        publish(layouts[1], _content(self.builder, set(visible)), indexer_version="test-fixture")
        self.whole = Generation(layouts[0].generations_dir / "g000001.v1")
        self.part = Generation(layouts[1].generations_dir / "g000001.v1")
        self.access = Access(token="t", token_id="0" * 12, scope="read", repositories=visible)

    def view(self) -> Generation:
        return view_of(self.whole, self.access)

    def close(self) -> None:
        self.whole.close()
        self.part.close()


def answer(gen: Generation, tool: str, arguments: dict[str, Any]) -> Any:
    try:
        out = READ_TOOLS[tool](gen, arguments)
    except ToolError as exc:
        return {"error": exc.text}
    return out


def normalized(out: Any) -> Any:
    """The answer without what may differ: the access sentence, times, and the cursors' bytes."""
    if isinstance(out, str):
        return out.replace(f"  ({ACCESS_NOTE})", "")
    out = json.loads(json.dumps(out))
    out.pop("access", None)
    out.pop("snapshot_age_ms", None)
    if isinstance(out.get("completeness"), dict):
        out["completeness"].pop("within", None)
    if out.get("next_cursor"):
        out["next_cursor"] = "<cursor>"
    results = out.get("results")
    if isinstance(results, dict):
        for key in ("snapshot_built_at", "snapshot_age_ms"):
            results.pop(key, None)
    return out


def assert_same_pages(pair: Pair, tool: str, arguments: dict[str, Any]) -> None:
    """Page by page (the first six; cursors minted by each side), the view and the smaller graph answer alike."""
    view, part = pair.view(), pair.part
    args_view, args_part = dict(arguments), dict(arguments)
    for _page in range(6):
        seen, expected = answer(view, tool, args_view), answer(part, tool, args_part)
        assert normalized(seen) == normalized(expected), (tool, arguments)
        if isinstance(seen, dict) and "error" not in seen and seen.get("next_cursor"):
            assert "error" not in expected and expected.get("next_cursor")
            args_view["cursor"], args_part["cursor"] = seen["next_cursor"], expected["next_cursor"]
            continue
        return


@pytest.fixture(params=[("standard", ("alpha",)), ("standard", ("beta", "gamma")), ("cross", ("consumer",))])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    kind, visible = request.param
    made = Pair(tmp_path, build_standard if kind == "standard" else build_cross_repo, visible)
    yield made
    made.close()


def test_the_view_filters_every_reader_method_there_is() -> None:
    """A reader method added later must be filtered in the view before anything can call it through one."""
    public = {n for n in dir(Generation) if not n.startswith("_")}
    assert public - set(vars(RepositoryView)) == set()


def test_a_view_holds_only_the_repositories_of_the_token(pair: Pair) -> None:
    view = pair.view()
    assert [r.name for r in view.repositories()] == [r.name for r in pair.part.repositories()]
    assert view.counts() == pair.part.counts()
    assert view.breakdown() == pair.part.breakdown()
    assert view.lexicon_stats() == pair.part.lexicon_stats()


def test_a_view_of_every_repository_counts_what_the_indexer_counted(tmp_path: Path) -> None:
    made = Pair(tmp_path, build_standard, ("alpha", "beta", "gamma"))
    try:
        view = RepositoryView(made.whole, made.access)
        assert view.counts() == made.whole.counts()
        assert view.breakdown() == made.whole.breakdown()
        assert view.lexicon_stats() == made.whole.lexicon_stats()
    finally:
        made.close()


@pytest.mark.parametrize("tool", ["graph_status", "list_repositories"])
def test_the_index_tools_answer_as_the_smaller_graph(pair: Pair, tool: str) -> None:
    assert_same_pages(pair, tool, {})
    if tool == "list_repositories":
        assert_same_pages(pair, tool, {"limit": 1})


@pytest.mark.parametrize("tool", SYMBOL_TOOLS)
def test_every_symbol_of_the_whole_graph_is_named_alike_through_the_view(pair: Pair, tool: str) -> None:
    """Visible symbols answer the same; hidden ones answer as symbols that do not exist, in every form."""
    checked = set()
    for sym in pair.builder.symbols:
        if sym.name.startswith("caller_") and sym.name not in ("caller_000", "caller_129"):
            continue
        forms = [
            {"stable_key": sym.key},
            {"qualified_name": sym.qualified_name},
            {"qualified_name": sym.qualified_name, "repository": sym.repository},
            {"qualified_name": sym.qualified_name, "repository": sym.repository, "path": sym.path},
            {"name": sym.name},
            {"name": sym.name, "repository": sym.repository, "path": sym.path},
        ]
        for form in forms:
            if tool in PAGED:
                form = {**form, "limit": 2}
            for view in ("compact", "full") if tool != "get_symbol" else ("",):
                args = {**form, "view": view} if view else form
                assert_same_pages(pair, tool, args)
        checked.add(sym.repository)
    assert len(checked) >= 3  # hidden repositories' symbols were probed too


def test_outlines_and_sources_of_every_file_answer_alike(pair: Pair) -> None:
    for f in pair.builder.files:
        for args in (
            {"repository": f.repository, "path": f.path},
            {"repository": f.repository, "path": f.path, "view": "full", "limit": 2},
            {"repository": f.repository, "path": f.path.rsplit("/", 1)[0] if "/" in f.path else ""},
            {"repository": f.repository},
        ):
            assert_same_pages(pair, "get_file_outline", args)
    selectors = [{"stable_key": s.key} for s in pair.builder.symbols if s.kind != "module"][:40]
    for i in range(0, len(selectors), 5):
        assert_same_pages(pair, "get_source", {"symbols": selectors[i : i + 5], "context_lines": 1})


def test_find_symbol_and_find_by_intent_answer_alike(pair: Pair) -> None:
    names = sorted({s.name for s in pair.builder.symbols if not s.name.startswith("caller_")})
    repositories = [*pair.builder.repositories, "nowhere"]
    for name in names:
        assert_same_pages(pair, "find_symbol", {"name": name, "limit": 2})
        assert_same_pages(pair, "find_symbol", {"name": name, "view": "full", "include_tests": True})
    for mode, text in (("prefix", "h"), ("substring", "a"), ("prefix", "comp"), ("substring", "er")):
        assert_same_pages(pair, "find_symbol", {"name": text, "mode": mode, "limit": 3})
    for repository in repositories:
        assert_same_pages(pair, "find_symbol", {"name": "helper", "in_repository": repository})
        assert_same_pages(pair, "find_by_intent", {"query": "compute square area", "in_repository": repository})
    for query in ("square area shape", "hub caller", "compute loop", "draw circle render", "helper beta"):
        assert_same_pages(pair, "find_by_intent", {"query": query, "limit": 2})
        assert_same_pages(pair, "find_by_intent", {"query": query, "include_tests": True, "symbol_kinds": ["function"]})


def test_walks_filtered_by_repository_answer_alike(pair: Pair) -> None:
    for sym in pair.builder.symbols[:60]:
        for repository in pair.builder.repositories:
            for tool in ("find_references", "get_blast_radius", "find_cross_repo_consumers"):
                assert_same_pages(pair, tool, {"stable_key": sym.key, "in_repository": repository})


def test_a_limited_answer_says_what_it_covers_without_naming_anything(pair: Pair) -> None:
    visible = next(s for s in pair.builder.symbols if s.repository in pair.access.repositories and s.kind != "module")
    out = answer(pair.view(), "get_blast_radius", {"stable_key": visible.key})
    assert out["access"] == ACCESS_NOTE
    assert out["completeness"]["within"] == ACCESS_NOTE
    hidden = set(pair.builder.repositories) - set(pair.access.repositories)
    text = json.dumps([answer(pair.view(), t, {}) for t in ("graph_status", "list_repositories")])
    for name in hidden:
        assert not re.search(rf'"{re.escape(name)}[":]', text)
    source = answer(pair.view(), "get_source", {"symbols": [{"stable_key": visible.key}]})
    assert ACCESS_NOTE in source.splitlines()[0]


def test_a_cursor_of_another_view_is_refused_like_one_of_another_query(pair: Pair) -> None:
    """A cursor minted on the whole graph (a token that sees more) resumes nothing in the view."""
    whole = answer(pair.whole, "list_repositories", {"limit": 1})
    other_query = answer(pair.view(), "find_symbol", {"name": "helper", "limit": 1, "include_tests": True})
    refused = answer(pair.view(), "list_repositories", {"limit": 1, "cursor": whole["next_cursor"]})
    assert refused["error"].startswith("CURSOR_INVALID: ")
    if other_query.get("next_cursor"):
        foreign = answer(pair.view(), "list_repositories", {"limit": 1, "cursor": other_query["next_cursor"]})
        assert foreign == refused
