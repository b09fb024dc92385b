"""trace_dependencies ``to`` (shortest confirmed paths) and ``view: "tree"`` on a hand-made call graph.

The graph, worked out by hand::

    a -> b -> d -> e        two shortest paths from a to e, of three hops
    a -> c -> d
    x -> I.m  (Impl.m IMPLEMENTS I.m)  Impl.m -> t     a path through dispatch
    p ~> q -> r             p to q is CANDIDATE only: no confirmed path, a candidate one
    f0 -> f1 -> ... -> f5   f5 is five hops from f0
    u -> (an unbound call)  nothing u reaches leads to e, but its unbound use could
    w -> V (a variable) -> e
    lonely                  calls nothing
"""

from __future__ import annotations

from typing import Any

import pytest

from server.errors import ToolError
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.server_fixtures import GraphBuilder

CALLS = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"), ("x", "I.m"), ("Impl.m", "t"), ("q", "r")]
CALLS += [(f"f{i}", f"f{i + 1}") for i in range(5)]


def _source() -> str:
    names = ["a", "b", "c", "d", "e", "x", "t", "p", "q", "r", "u", "w", "lonely", *(f"f{i}" for i in range(6))]
    text = "".join(f"def {n}():\n    return 0\n\n\n" for n in names)
    text += "class I:\n    def m(self):\n        return 0\n\n\n"
    text += "class Impl(I):\n    def m(self):\n        return 0\n"
    return text


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Generation:
    tmp = tmp_path_factory.mktemp("paths")
    b = GraphBuilder(tmp / "src")
    b.repo("g")
    b.add_file("g", "m.py", _source())
    s = lambda name: b.sym("g", f"m.{name}")  # noqa: E731
    for caller, callee in CALLS:
        b.edge(s(caller), EdgeKind.CALLS_DIRECT, s(callee))
    b.edge(s("Impl.m"), EdgeKind.OVERRIDES, s("I.m"), provenance=Provenance.PYTHON_INDEXER_DEF)
    b.edge(
        s("p"), EdgeKind.CALLS_DIRECT, s("q"), confidence=Confidence.CANDIDATE, provenance=Provenance.PYTHON_SYNTAX_CALL
    )
    b.unresolved_ref("mystery", "NAME_NOT_RESOLVED", "g", "m.py", line=s("u").start_line + 1, source=s("u"))
    variable = b.add_symbol("g", "m.py", "V", "variable", 200)
    b.edge(variable, EdgeKind.REFERENCES, s("e"))
    b.edge(s("w"), EdgeKind.REFERENCES, variable)
    return Generation(b.publish(StateLayout(tmp / "kivgraph.toml", tmp / "state")).path)


def trace(gen: Generation, **arguments: Any) -> dict[str, Any]:
    return READ_TOOLS["trace_dependencies"](gen, arguments)


def spelled(path: list[dict[str, Any]]) -> list[str]:
    return [step["qn"].removeprefix("m.") for step in path]


def test_every_shortest_confirmed_path_is_listed_with_each_hops_edge(gen: Generation) -> None:
    answer = trace(gen, qualified_name="m.a", to={"qualified_name": "m.e"})
    results = answer["results"]
    assert answer["total"] == 2 and results["hops"] == 3
    assert sorted(spelled(p) for p in results["paths"]) == [["a", "b", "d", "e"], ["a", "c", "d", "e"]]
    assert results["confidence"] == "EXACT_TYPECHECKED"  # every hop's, stated once
    assert all(step["via"] == "CALLS_DIRECT" for path in results["paths"] for step in path[1:])
    assert results["to"] == "g:m.py:17"
    full = trace(gen, qualified_name="m.a", to={"qualified_name": "m.e"}, view="full")
    hop = full["results"]["paths"][0][1]
    assert (hop["confidence"], hop["provenance"], hop["kind"]) == (
        "EXACT_TYPECHECKED",
        "PYTHON_INDEXER_USE",
        "function",
    )


def test_a_path_crosses_dispatch_to_an_override_and_says_so(gen: Generation) -> None:
    answer = trace(gen, qualified_name="m.x", to={"qualified_name": "m.t"})
    (path,) = answer["results"]["paths"]
    assert spelled(path) == ["x", "I.m", "Impl.m", "t"]
    assert (path[2]["via"], path[2].get("dispatch")) == ("OVERRIDES", True)


def test_paths_page_with_a_cursor(gen: Generation) -> None:
    first = trace(gen, qualified_name="m.a", to={"qualified_name": "m.e"}, limit=1)
    assert (first["total"], first["returned"]) == (2, 1) and first["next_cursor"]
    second = trace(gen, qualified_name="m.a", to={"qualified_name": "m.e"}, limit=1, cursor=first["next_cursor"])
    assert second["returned"] == 1 and spelled(second["results"]["paths"][0]) != spelled(first["results"]["paths"][0])


def test_no_confirmed_path_lists_the_candidate_one_and_never_claims_independence(gen: Generation) -> None:
    answer = trace(gen, qualified_name="m.p", to={"qualified_name": "m.r"})
    results = answer["results"]
    assert answer["total"] == 0 and results["paths"] == []
    assert results["no_path"]["verdict"] == "NOT_FOUND_WITHIN_BOUNDS"
    assert "confidence" in results["no_path"]["could_hide_one"] and results["no_path"]["edges_not_followed"] == 1
    (candidate,) = results["candidate_paths"]
    assert spelled(candidate) == ["p", "q", "r"] and candidate[1]["confidence"] == "CANDIDATE"
    assert "CANDIDATE" in answer["guidance"]


def test_a_walk_that_runs_out_of_edges_with_no_blind_spot_is_unreachable(gen: Generation) -> None:
    answer = trace(gen, qualified_name="m.lonely", to={"qualified_name": "m.e"})
    assert answer["results"]["no_path"] == {"verdict": "UNREACHABLE", "depth": 3, "reached": 0}
    assert "unreachable" in answer["guidance"]


def test_a_target_past_the_depth_bound_is_not_found_within_the_bounds(gen: Generation) -> None:
    answer = trace(gen, qualified_name="m.f0", to={"qualified_name": "m.f5"})
    block = answer["results"]["no_path"]
    assert (block["verdict"], block["unexpanded"], block["could_hide_one"]) == ("NOT_FOUND_WITHIN_BOUNDS", 1, ["depth"])
    deeper = trace(gen, qualified_name="m.f0", to={"qualified_name": "m.f5"}, depth=5)
    assert spelled(deeper["results"]["paths"][0]) == ["f0", "f1", "f2", "f3", "f4", "f5"]


def test_an_unbound_use_inside_the_walk_could_hide_a_path(gen: Generation) -> None:
    block = trace(gen, qualified_name="m.u", to={"qualified_name": "m.e"})["results"]["no_path"]
    assert block["verdict"] == "NOT_FOUND_WITHIN_BOUNDS" and block["could_hide_one"] == ["unbound uses"]
    assert block["unbound"] == {"NAME_NOT_RESOLVED": {"mystery": {"g:m.py": ["u@41-42"]}}}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"to": {"qualified_name": "m.a"}}, "to names the subject or a part of it"),
        ({"to": "m.e"}, "to must be an object naming the target"),
        ({"to": {"qualified_name": "m.nope"}}, "m.nope"),
        ({"to": {"qualified_name": "m.e"}, "in_repository": "g"}, "in_repository filters walk rows"),
        ({"to": {"qualified_name": "m.e"}, "view": "tree"}, "view tree is only accepted by"),
        ({"to": {"qn": "m.e"}}, "unknown argument to.qn"),
    ],
)
def test_a_bad_target_is_refused_naming_the_field(gen: Generation, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        trace(gen, qualified_name="m.a", **arguments)
    assert message in caught.value.message, caught.value.message


# --- view tree ---------------------------------------------------------------------------------------------------


def _walk(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for child in node.get("children", []):
        out.append(child)
        out.extend(_walk(child))
    return out


def test_a_call_tree_spells_each_node_once_and_refers_to_it_elsewhere(gen: Generation) -> None:
    answer = trace(gen, qualified_name="m.a", view="tree")
    tree = answer["results"]["tree"]
    assert tree["qn"] == "m.a" and answer["results"]["via"] == "CALLS_DIRECT"
    b, c = tree["children"]
    assert (b["qn"], c["qn"]) == ("m.b", "m.c")
    (d,) = b["children"]
    assert d["qn"] == "m.d" and d["id"] == 1 and [x["qn"] for x in d["children"]] == ["m.e"]
    assert c["children"] == [{"ref": 1, "via": "CALLS_DIRECT"}]  # c calls d, spelled under b
    assert answer["total"] == answer["returned"] == 4
    assert [n["qn"] for n in _walk(tree) if "qn" in n].count("m.d") == 1


def test_a_blast_radius_tree_nests_callers_and_hangs_a_caller_over_a_left_out_variable(gen: Generation) -> None:
    answer = READ_TOOLS["get_blast_radius"](gen, {"qualified_name": "m.e", "view": "tree"})
    tree = answer["results"]["tree"]
    nodes = {n["qn"]: n for n in _walk(tree) if "qn" in n}
    assert set(nodes) == {"m.d", "m.b", "m.c", "m.a", "m.w"}  # the variable V is left out by default
    assert nodes["m.w"]["hop"] == 2  # under the root, through V
    assert [n["qn"] for n in nodes["m.d"]["children"] if "qn" in n] == ["m.b", "m.c"]
    refs = [n for n in nodes["m.c"].get("children", []) if "ref" in n]
    assert refs == [{"ref": nodes["m.a"]["id"], "via": "CALLS_DIRECT"}]  # a calls c too, spelled under b
    assert answer["completeness"]["verdict"] == "COMPLETE"


def test_a_tree_is_one_answer_and_refuses_a_cursor(gen: Generation) -> None:
    with pytest.raises(ToolError) as caught:
        trace(gen, qualified_name="m.a", view="tree", cursor="AAAA")
    assert caught.value.code in ("INVALID_ARGUMENT", "CURSOR_INVALID")
