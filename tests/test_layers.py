"""Layered generations (feature 10, issue 24): one layer per repository plus the link layer.

What is checked here: every tool answers a layered generation exactly as the one environment of earlier
feature versions, field by field; an unchanged repository's layer is the same file (one inode) in the next
generation; a generation with a layer missing or cut short is refused, and the server keeps the last
complete one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from indexer.lexicon import LexiconBuilder, file_terms
from indexer.publish import GenerationContent, PublishError, publish
from snapshot_format import keys
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current, open_newest_readable
from tests.generation_golden import GOLDEN_DIR
from tests.server_fixtures import GraphBuilder, build_standard
from tests.test_server_mcp import connect, make_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _content(builder: GraphBuilder, *, reverse: bool = False) -> GenerationContent:
    """The graph's content; the lexicon numbers files in registry order, as the pipeline adds them."""
    repositories = list(builder.repositories.values())
    if reverse:
        repositories.reverse()
    order = {r.name: i for i, r in enumerate(repositories)}
    lexicon = LexiconBuilder()
    for f in sorted(builder.files, key=lambda f: order[f.repository]):
        text = (builder.root(f.repository) / f.path).read_text()
        lexicon.add(f.repository, f.path, f.language, file_terms(f.path, text, None))
    return GenerationContent(
        repositories=repositories,
        files=builder.files,
        symbols=builder.symbols,
        edges=builder.edges,
        unresolved=builder.unresolved,
        package_dependencies=builder.package_dependencies,
        analyzers={"python": "hand-made 1"},
        derived=lexicon.items(),
    )


def _layout(base: Path) -> StateLayout:
    return StateLayout(config_path=base / "kivgraph.toml", state_dir=base / "state")


# Calls that reach every reader method through the tools: names, prefixes, fuzzy names, cross-repository
# edges (beta calls alpha), walks, outlines, blind spots, the lexicon, paging.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("graph_status", {}),
    ("list_repositories", {}),
    ("find_symbol", {"name": "area"}),
    ("find_symbol", {"name": "caller_", "mode": "prefix", "limit": 7}),
    ("find_symbol", {"name": "make_sqare"}),
    ("find_symbol", {"name": "helper", "repository": "beta"}),
    ("get_symbol", {"qualified_name": "pkg.shapes.make_square"}),
    ("get_symbol", {"qualified_name": "util.helper", "repository": "alpha"}),
    ("find_references", {"name": "make_square"}),
    ("find_references", {"qualified_name": "pkg.shapes.make_square", "view": "full"}),
    ("find_references", {"qualified_name": "hub.hub", "limit": 9}),
    ("find_references", {"qualified_name": "pkg.use.main", "direction": "outgoing"}),
    ("get_blast_radius", {"qualified_name": "pkg.shapes.Shape", "depth": 3}),
    ("get_blast_radius", {"qualified_name": "hub.hub2", "view": "files"}),
    ("trace_dependencies", {"qualified_name": "pkg.use.main", "depth": 3}),
    ("trace_dependencies", {"qualified_name": "app.run.run"}),
    ("find_cross_repo_consumers", {"repository": "alpha"}),
    ("find_cross_repo_consumers", {"qualified_name": "pkg.shapes.make_square"}),
    ("get_file_outline", {"repository": "alpha", "path": "pkg/shapes.py"}),
    ("get_file_outline", {"repository": "gamma", "path": "callers"}),
    ("get_source", {"symbols": [{"qualified_name": "pkg.use.main"}]}),
    ("find_by_intent", {"query": "square area shapes"}),
    ("find_by_intent", {"query": "caller hub", "limit": 3}),
]


async def _answers(layout: StateLayout) -> list[Any]:
    out = []
    async with connect(make_app(layout)) as (client, _inbox):
        for tool, arguments in CALLS:
            result = await client.call_tool(tool, arguments)
            block = result.content[0]
            text = getattr(block, "text", "")
            answer = text if tool == "get_source" or result.is_error else json.loads(text)
            if isinstance(answer, dict) and answer.get("next_cursor"):
                page = await client.call_tool(tool, {**arguments, "cursor": answer["next_cursor"]})
                answer["next_page"] = json.loads(getattr(page.content[0], "text", "null"))
            out.append([tool, arguments, bool(result.is_error), answer])
    return out


_WHEN = frozenset(
    {"size_tokens", "snapshot_age_ms", "snapshot_built_at"}
)  # when each was published: not a fact of the graph


def _without_generation_identity(answers: Any) -> Any:
    """Answers without the moment each generation was published (the two were written a moment apart)."""
    if isinstance(answers, dict):
        return {k: _without_generation_identity(v) for k, v in answers.items() if k not in _WHEN}
    if isinstance(answers, list):
        return [_without_generation_identity(v) for v in answers]
    return answers


def _differences(x: Any, y: Any, at: str = "") -> list[str]:
    if type(x) is not type(y):
        return [f"{at}: {x!r} != {y!r}"]
    if isinstance(x, dict):
        return [d for k in sorted(set(x) | set(y)) for d in _differences(x.get(k), y.get(k), f"{at}.{k}")]
    if isinstance(x, list):
        out = [f"{at}: {len(x)} items != {len(y)}"] if len(x) != len(y) else []
        return out + [d for i, (u, v) in enumerate(zip(x, y, strict=False)) for d in _differences(u, v, f"{at}[{i}]")]
    return [] if x == y else [f"{at}: {x!r} != {y!r}"]


@pytest.mark.parametrize("reverse", [False, True], ids=["registry-in-name-order", "registry-reversed"])
async def test_every_tool_answers_a_layered_generation_as_the_one_environment_of_earlier_versions(
    tmp_path: Path, reverse: bool
) -> None:
    builder = build_standard(GraphBuilder(tmp_path / "src"))
    layered, single = _layout(tmp_path / "layered"), _layout(tmp_path / "single")
    publish(layered, _content(builder, reverse=reverse), indexer_version="test")
    publish(single, _content(builder, reverse=reverse), indexer_version="test", layered=False)
    with open_current(layered) as a, open_current(single) as b:
        assert len(a.manifest.layers) == 3 and not b.manifest.layers
        assert (a.path / keys.DB_FILES.decode()).exists() is False
        a.verify_digest()
        b.verify_digest()
        assert a.counts() == b.counts() and a.breakdown() == b.breakdown()
        assert a.lexicon_stats() == b.lexicon_stats()
        assert list(a.lexicon_documents()) == list(b.lexicon_documents())
        assert [list(a.distinct_names(p)) for p in ("", "ca", "h")] == [
            list(b.distinct_names(p)) for p in ("", "ca", "h")
        ]
        with a.name_trie() as ta, b.name_trie() as tb:
            for prefix in (b"", b"c", b"ca", b"hub", b"zzz"):
                assert ta.children(prefix) == tb.children(prefix)
    got, expected = await _answers(layered), await _answers(single)
    assert len(got) == len(CALLS)
    for (tool, arguments, *answer), (_t, _a, *wanted) in zip(
        _without_generation_identity(got), _without_generation_identity(expected), strict=True
    ):
        assert answer == wanted, f"{tool} {arguments}: {_differences(answer, wanted)}"


def _layer_files(gen: Generation) -> dict[str, os.stat_result]:
    return {e.repository: (gen.path / e.directory / "data.mdb").stat() for e in gen.manifest.layers}


def test_an_unchanged_repository_layer_is_the_same_file_in_the_next_generation(tmp_path: Path) -> None:
    builder = build_standard(GraphBuilder(tmp_path / "src"))
    layout = _layout(tmp_path)
    first = publish(layout, _content(builder), indexer_version="test")
    builder.add_file("beta", "app/extra.py", "def extra():\n    return 2\n")
    second = publish(layout, _content(builder), indexer_version="test")
    with Generation(first.path) as one, Generation(second.path) as two:
        before, after = _layer_files(one), _layer_files(two)
        entries = {e.repository: e for e in one.manifest.layers}
        for repo in ("alpha", "gamma"):
            assert after[repo].st_ino == before[repo].st_ino and after[repo].st_nlink == 2, repo
            assert next(e for e in two.manifest.layers if e.repository == repo) == entries[repo]
        assert after["beta"].st_ino != before["beta"].st_ino
        assert two.counts().files == one.counts().files + 1
        two.verify_digest()
        assert two.symbols_by_qualified_name("app.extra.extra")[0].repository == "beta"
        # an edge between two repositories lives in the link layer, rewritten each time, and still answers
        square = two.symbols_by_qualified_name("pkg.shapes.make_square")[0]
        assert {two.symbol(e.source).repository for e in two.edges_in(square.key)} == {"alpha", "beta"}  # type: ignore[union-attr]


def test_a_layer_whose_rows_come_in_another_order_is_the_same_file_in_the_next_generation(tmp_path: Path) -> None:
    """The stages of a run list a repository's unresolved rows in different orders (the CANDIDATE stage carries
    them, the exact stage makes them afresh); the same facts are the same layer, not a rewrite under other keys."""
    builder = build_standard(GraphBuilder(tmp_path / "src"))
    layout = _layout(tmp_path)
    content = _content(builder)
    rows = [u for u in content.unresolved if u.repository == "beta"]
    assert len(rows) >= 2  # the fixture has rows to reorder
    first = publish(layout, content, indexer_version="test")
    reordered = _content(builder)
    reordered.unresolved = [u for u in reordered.unresolved if u.repository != "beta"] + rows[::-1]
    second = publish(layout, reordered, indexer_version="test")
    with Generation(first.path) as one, Generation(second.path) as two:
        before, after = _layer_files(one), _layer_files(two)
        assert after["beta"].st_ino == before["beta"].st_ino  # carried, not written again
        two.verify_digest()
        assert sorted(map(repr, two.unresolved_in("beta"))) == sorted(map(repr, rows))
    builder.unresolved.append(msgspec.structs.replace(rows[0], detail="another row"))
    third = publish(layout, _content(builder), indexer_version="test")  # a row more: written anew
    with Generation(second.path) as two, Generation(third.path) as three:
        assert _layer_files(three)["beta"].st_ino != _layer_files(two)["beta"].st_ino
        three.verify_digest()


def test_a_generation_missing_a_layer_is_refused_and_the_complete_one_serves(tmp_path: Path) -> None:
    builder = build_standard(GraphBuilder(tmp_path / "src"))
    layout = _layout(tmp_path)
    first = publish(layout, _content(builder), indexer_version="test")
    builder.add_file("beta", "app/extra.py", "def extra():\n    return 2\n")
    second = publish(layout, _content(builder), indexer_version="test")
    beta = next(e for e in second.manifest.layers if e.repository == "beta")
    (second.path / beta.directory / "data.mdb").unlink()  # a copy that stopped before this layer
    gen, refused = open_newest_readable(layout)
    with gen:
        assert gen.name == first.name
    assert any("the layer of beta" in r and "incomplete" in r for r in refused), refused


def test_a_layer_for_a_repository_the_generation_does_not_register_is_refused(tmp_path: Path) -> None:
    builder = build_standard(GraphBuilder(tmp_path / "src"))
    content = _content(builder)
    content.repositories = [r for r in content.repositories if r.name != "gamma"]
    with pytest.raises(PublishError, match="repository 'gamma', which is not in the generation"):
        publish(_layout(tmp_path), content, indexer_version="test")
    assert not (tmp_path / "state" / "CURRENT").exists()


def _serve_copy(generation: Path, base: Path) -> StateLayout:
    layout = _layout(base)
    layout.generations_dir.mkdir(parents=True)
    shutil.copytree(generation, layout.generations_dir / generation.name)
    (layout.generations_dir / generation.name / "hold.lock").touch()
    layout.current_pointer.write_text(generation.name + "\n")
    return layout


def _golden_calls(answers: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Calls over the fixture corpus's committed generations: every symbol and file, names, walks, the lexicon."""
    calls: list[tuple[str, dict[str, Any]]] = [("graph_status", {}), ("list_repositories", {})]
    for repo in answers["repositories"]:
        calls.append(("find_cross_repo_consumers", {"repository": repo}))
    files = sorted({(s[0], s[1]) for s in answers["symbols"]})
    calls += [("get_file_outline", {"repository": r, "path": p}) for r, p in files]
    for _repo, _path, qn, _kind, key, incoming in answers["symbols"]:
        calls.append(("get_symbol", {"stable_key": key}))
        calls.append(("find_symbol", {"name": qn.rsplit(".", 1)[-1]}))
        if incoming:
            calls.append(("find_references", {"stable_key": key, "view": "full"}))
            calls.append(("get_blast_radius", {"stable_key": key, "depth": 3}))
        calls.append(("trace_dependencies", {"stable_key": key, "depth": 2}))
    calls += [("find_by_intent", {"query": q}) for q in ("shape area", "compute total", "user service", "helper")]
    return calls


_DECLARATION_ROWS = ("IMPLICIT_CALL", "EXTERNAL_OVERRIDE")
_FEATURE = frozenset(
    {"schema_version", "schema_outdated", "size_tokens"}
)  # the two were written under feature 9 and 10


def _machine_free(answers: Any) -> Any:
    """Answers without the feature version and the build machine's checkout paths (each golden's own tmp)."""
    text = re.sub(r"/tmp/kivgraph-golden-[^/\"]+/", "<root>/", json.dumps(answers))
    return _without(json.loads(text), _FEATURE)


def _without(answers: Any, drop: frozenset[str]) -> Any:
    if isinstance(answers, dict):
        return {k: _without(v, drop) for k, v in answers.items() if k not in drop}
    if isinstance(answers, list):
        return [_without(v, drop) for v in answers]
    return answers


async def _golden_answers(layout: StateLayout, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    out = []
    async with connect(make_app(layout)) as (client, _inbox):
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            text = getattr(result.content[0], "text", "")
            out.append([tool, arguments, bool(result.is_error), text if result.is_error else json.loads(text)])
    return _machine_free(_without_generation_identity(out))


async def test_the_layered_golden_generation_answers_every_tool_as_the_last_one_environment_one(tmp_path: Path) -> None:
    """The fixture corpus's committed generations: feature 9 (one environment) and feature 10 (layered),
    indexed from the same corpus by the same facts (their recorded answers are equal): every tool agrees."""
    (single,) = sorted((GOLDEN_DIR / "feature-9").glob("g*.v*"))
    (layered,) = sorted((GOLDEN_DIR / "feature-10").glob("g*.v*"))
    recorded = json.loads((single.parent / "answers.json").read_text())
    layered_recorded = json.loads((layered.parent / "answers.json").read_text())
    # The one difference of facts: the rows about a declaration itself (IMPLICIT_CALL, EXTERNAL_OVERRIDE; docs/
    # surface.md §4.8), which the indexer records since after the feature-9 golden was written.
    new_rows = [u for u in layered_recorded["unresolved"] if u[4] in _DECLARATION_ROWS]
    assert new_rows and all(u[3].startswith("__") or u[3] == "constructor" for u in new_rows)
    layered_facts = {
        **layered_recorded,
        "feature_version": 9,
        "unresolved": [u for u in layered_recorded["unresolved"] if u[4] not in _DECLARATION_ROWS],
        "counts": {
            **layered_recorded["counts"],
            "unresolved": layered_recorded["counts"]["unresolved"] - len(new_rows),
        },
    }
    assert recorded == layered_facts
    calls = _golden_calls(recorded)
    got = await _golden_answers(_serve_copy(layered, tmp_path / "layered"), calls)
    expected = await _golden_answers(_serve_copy(single, tmp_path / "single"), calls)
    assert len(got) == len(calls) > 150
    compared = 0
    for (tool, arguments, *answer), (_t, _a, *wanted) in zip(
        _without_generation_identity(got), _without_generation_identity(expected), strict=True
    ):
        if any(word in json.dumps([arguments, answer]) for word in (*_DECLARATION_ROWS, *{u[3] for u in new_rows})):
            continue  # an answer about a special method or a constructor: its blind spot is the one new fact
        compared += 1
        assert answer == wanted, f"{tool} {arguments}: {_differences(answer, wanted)}"
    assert compared > 140
