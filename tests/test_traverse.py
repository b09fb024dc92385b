"""Bounded walks: diamonds and cycles terminate and count each node once; limits and blind spots are declared."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from indexer.publish import GenerationContent, publish
from server.queries import traverse
from snapshot_format import keys, records
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import Generation, open_current
from snapshot_format.stable_key import stable_key
from snapshot_format.vocab import Confidence, EdgeKind, Provenance


def _sym(repo: str, qn: str, kind: str = "function", path: str = "m.py", line: int = 1) -> records.Symbol:
    key = stable_key(
        language="python", repository=repo, package="m", module=path, qualified_name=qn, kind=kind, discriminator=""
    )
    return records.Symbol(
        key=key,
        name=qn.rsplit(".", 1)[-1],
        qualified_name=qn,
        kind=kind,
        language="python",
        repository=repo,
        path=path,
        start_line=line,
        start_col=0,
        end_line=line + 1,
        end_col=0,
        package=repo,
    )


def _call(src: records.Symbol, dst: records.Symbol, conf: int = Confidence.EXACT_TYPECHECKED) -> records.Edge:
    prov = Provenance.PYTHON_INDEXER_USE if conf == Confidence.EXACT_TYPECHECKED else Provenance.PYTHON_SYNTAX_CALL
    return records.Edge(
        kind=EdgeKind.CALLS_DIRECT,
        source=src.key,
        target=dst.key,
        confidence=conf,
        provenance=prov,
        line=src.start_line,
        col=4,
    )


@pytest.fixture
def graph(tmp_path: Path) -> tuple[Generation, dict[str, records.Symbol]]:
    # a provider repository A and a consumer B:   b.main -> b.helper -> a.api -> a.core
    # plus a diamond (a.left, a.right -> a.core) and a cycle (a.core <-> a.loop)
    s = {
        name: _sym("A" if name.startswith("a.") else "B", name, line=i + 1)
        for i, name in enumerate(
            ["a.core", "a.api", "a.left", "a.right", "a.top", "a.loop", "b.helper", "b.main", "a.unused"]
        )
    }
    edges = [
        _call(s["a.api"], s["a.core"]),
        _call(s["a.left"], s["a.core"]),
        _call(s["a.right"], s["a.core"]),
        _call(s["a.top"], s["a.left"]),
        _call(s["a.top"], s["a.right"]),
        _call(s["a.core"], s["a.loop"]),
        _call(s["a.loop"], s["a.core"]),
        _call(s["b.helper"], s["a.api"]),
        _call(s["b.main"], s["b.helper"]),
    ]
    unresolved = [
        records.Unresolved(
            name="api",
            reason="RECEIVER_NOT_RESOLVED",
            repository="B",
            path="b/x.py",
            line=3,
            language="python",
            source=s["b.main"].key,
        )
    ]
    content = GenerationContent(
        repositories=[records.Repository(name="A", root="/a"), records.Repository(name="B", root="/b")],
        files=[
            records.File(repository="A", path="m.py", language="python"),
            records.File(repository="B", path="m.py", language="python"),
        ],
        symbols=list(s.values()),
        edges=edges,
        unresolved=unresolved,
    )
    layout = resolve_layout(state_dir=tmp_path / "state", config=tmp_path / "k.toml")
    publish(layout, content, indexer_version="test")
    gen = open_current(layout)
    yield gen, s
    gen.close()


def _raw(sym: records.Symbol) -> bytes:
    return keys.key_to_bytes(sym.key)


def _by_name(gen: Generation, walk: traverse.Walk) -> dict[str, int]:
    return {gen.symbol_by_raw(r.key16).qualified_name: r.depth for r in walk.reached}  # type: ignore[union-attr]


def test_blast_radius_reaches_the_other_repositorys_caller_at_depth_two_with_the_via_edge(graph) -> None:
    gen, s = graph
    w = traverse.walk(gen, [_raw(s["a.api"])], outgoing=False, depth=3)
    depths = _by_name(gen, w)
    assert depths == {"b.helper": 1, "b.main": 2}
    main = next(r for r in w.reached if r.key16 == _raw(s["b.main"]))
    assert main.reached_from == _raw(s["b.helper"])
    assert (main.via_kind, main.via_confidence, main.via_provenance) == (
        EdgeKind.CALLS_DIRECT,
        Confidence.EXACT_TYPECHECKED,
        Provenance.PYTHON_INDEXER_USE,
    )


def test_a_diamond_and_a_cycle_terminate_and_count_each_node_once(graph) -> None:
    gen, s = graph
    w = traverse.walk(gen, [_raw(s["a.core"])], outgoing=False, depth=5)
    depths = _by_name(gen, w)
    assert depths == {"a.api": 1, "a.left": 1, "a.right": 1, "a.loop": 1, "a.top": 2, "b.helper": 2, "b.main": 3}
    assert len(w.reached) == len(set(r.key16 for r in w.reached))
    # a.top touches the visited set through two CALLS_DIRECT edges but is one row
    assert w.relation_kinds[_raw(s["a.top"])] == {EdgeKind.CALLS_DIRECT}


def test_depth_bounds_the_walk(graph) -> None:
    gen, s = graph
    w = traverse.walk(gen, [_raw(s["a.core"])], outgoing=False, depth=1)
    assert set(_by_name(gen, w).values()) == {1}


def test_max_nodes_truncates_discovery_and_says_so(graph) -> None:
    gen, s = graph
    w = traverse.walk(gen, [_raw(s["a.core"])], outgoing=False, depth=5, max_nodes=3)
    assert w.truncated and w.visited == 3 and len(w.reached) == 2
    full = traverse.walk(gen, [_raw(s["a.core"])], outgoing=False, depth=5)
    assert not full.truncated


def test_an_expired_deadline_raises_instead_of_answering_partially(graph) -> None:
    gen, s = graph
    with pytest.raises(traverse.TraversalDeadline):
        traverse.walk(gen, [_raw(s["a.core"])], outgoing=False, depth=5, deadline=0.0)


def test_unresolved_references_naming_the_root_make_the_answer_a_lower_bound(graph) -> None:
    gen, s = graph
    api = s["a.api"]
    c = traverse.completeness(gen, api, traverse.walk(gen, [_raw(api)], outgoing=False))
    assert c.verdict == "LOWER_BOUND"
    assert [(u.path, u.line) for u in c.blind_spots] == [("b/x.py", 3)]
    assert c.fallback == {"pattern": r"\bapi\b", "paths": ["/b/b/x.py"]}
    unused = s["a.unused"]
    clean = traverse.completeness(gen, unused, traverse.walk(gen, [_raw(unused)], outgoing=False))
    assert clean.verdict == "COMPLETE" and clean.fallback is None


def test_a_blind_spot_on_a_caller_the_walk_went_on_from_makes_a_deeper_answer_a_lower_bound(graph) -> None:
    # a.core's callers at one hop are all bound (a.api, a.left, a.right, a.loop); at two hops the walk looks
    # for a.api's callers too, and a use of `api` that failed to bind may be one of them.
    from server.tools.walk import completeness_block

    gen, s = graph
    core = _raw(s["a.core"])
    one = traverse.completeness(gen, s["a.core"], traverse.walk(gen, [core], outgoing=False, depth=1), 1)
    assert one.verdict == "COMPLETE"
    two = traverse.completeness(gen, s["a.core"], traverse.walk(gen, [core], outgoing=False, depth=2), 2)
    assert two.verdict == "LOWER_BOUND"
    assert [(u.name, u.path, u.line) for u in two.blind_spots] == [("api", "b/x.py", 3)]
    assert two.fallback == {"pattern": r"\b(core|api)\b", "paths": ["/b/b/x.py"]}
    block = completeness_block(two, gen)
    assert block["blind_spots"][0]["in"] == "b.main"  # the declaration the unbound use is written in
    compact = completeness_block(two, gen, compact=True)["blind_spots"]
    assert compact == [
        {"at": "B:b/x.py:3", "reason": "RECEIVER_NOT_RESOLVED", "in": "b.main", "requested_symbol": "api"}
    ]


def test_aggregates_partition_the_reached_rows(graph) -> None:
    gen, s = graph
    w = traverse.walk(gen, [_raw(s["a.core"])], outgoing=False, depth=5)
    rows = [(r, gen.symbol_by_raw(r.key16)) for r in w.reached]
    agg = traverse.aggregate(rows, w.relation_kinds)  # type: ignore[arg-type]
    assert agg.by_repository == {"A": 5, "B": 2}
    assert sum(agg.by_depth.values()) == len(rows)
    assert agg.by_kind == {"CALLS_DIRECT": 7}


def test_an_incoming_walk_stops_at_a_module_that_only_imports_the_name(tmp_path: Path) -> None:
    # m imports f (a module-level `from lib import f`); n imports the module m and calls m.g, not f.
    # A change to f reaches m (its import breaks), but not n; a module that calls f at import time goes on.
    f, g = _sym("L", "lib.f"), _sym("L", "m.g", path="m.py", line=5)
    m = _sym("L", "m", kind="module", path="m.py")
    n = _sym("L", "n", kind="module", path="n.py")
    k = _sym("L", "k", kind="module", path="k.py")
    user = _sym("L", "u", kind="module", path="u.py")

    def edge(kind: EdgeKind, src: records.Symbol, dst: records.Symbol) -> records.Edge:
        return msgspec.structs.replace(_call(src, dst), kind=kind)

    edges = [
        edge(EdgeKind.IMPORTS_SYMBOL, m, f),
        edge(EdgeKind.IMPORTS_SYMBOL, n, m),
        _call(k, f),  # k runs f when it is imported
        edge(EdgeKind.IMPORTS_SYMBOL, user, k),
    ]
    content = GenerationContent(
        repositories=[records.Repository(name="L", root="/l")],
        files=[records.File(repository="L", path=p, language="python") for p in ("m.py", "n.py", "k.py", "u.py")],
        symbols=[f, g, m, n, k, user],
        edges=edges,
    )
    layout = resolve_layout(state_dir=tmp_path / "state", config=tmp_path / "k.toml")
    publish(layout, content, indexer_version="test")
    gen = open_current(layout)
    try:
        reached = _by_name(gen, traverse.walk(gen, [_raw(f)], outgoing=False, depth=3))
        assert reached == {"m": 1, "k": 1, "u": 2}
    finally:
        gen.close()
