"""find_references ``relation`` on hand-made generations: walks, bounds, filters and where it is blind.

The real analyzers' hierarchies (Python, TypeScript, Go, Rust) are asked through a real ``kivgraph serve`` in
tests/test_serve_questions.py; Go generics and the fallbacks in tests/test_dispatch.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.errors import ToolError
from server.queries.hierarchy import MAX_LEVELS
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import DISPATCH_UNDECIDED, Confidence, EdgeKind, Provenance
from tests.server_fixtures import GraphBuilder

SHAPES = """class Shape:
    def area(self):
        raise NotImplementedError


class Polygon(Shape):
    def area(self):
        return 0


class Square(Polygon):
    def area(self):
        return 1


class Circle(Shape):
    def area(self):
        return 3
"""
TEST_SHAPES = """from pkg.shapes import Shape


class FakeShape(Shape):
    def area(self):
        return 0
"""


def _graph(tmp: Path, *, mode: str = "exact") -> tuple[Generation, GraphBuilder]:
    b = GraphBuilder(tmp / "src")
    b.repo("geo", mode=mode)
    b.add_file("geo", "pkg/shapes.py", SHAPES)
    b.add_file("geo", "tests/test_shapes.py", TEST_SHAPES)
    drawable = b.add_symbol("geo", "pkg/shapes.py", "Drawable", "interface", 20)
    s = lambda qn: b.sym("geo", qn)  # noqa: E731
    conf = Confidence.EXACT_TYPECHECKED if mode == "exact" else Confidence.CANDIDATE
    prov = Provenance.PYTHON_INDEXER_DEF if mode == "exact" else Provenance.PYTHON_SYNTAX_CALL
    for sub, base in (("Polygon", "Shape"), ("Square", "Polygon"), ("Circle", "Shape")):
        b.edge(s(f"pkg.shapes.{sub}"), EdgeKind.EXTENDS, s(f"pkg.shapes.{base}"), confidence=conf, provenance=prov)
        b.edge(
            s(f"pkg.shapes.{sub}.area"),
            EdgeKind.OVERRIDES,
            s(f"pkg.shapes.{base}.area"),
            confidence=conf,
            provenance=prov,
        )
    b.edge(s("tests.test_shapes.FakeShape"), EdgeKind.EXTENDS, s("pkg.shapes.Shape"), confidence=conf, provenance=prov)
    b.edge(s("pkg.shapes.Shape"), EdgeKind.IMPLEMENTS, drawable, confidence=conf, provenance=prov)
    gen = Generation(b.publish(StateLayout(tmp / "kivgraph.toml", tmp / "state")).path)
    return gen, b


def refs(gen: Generation, **arguments: Any) -> dict[str, Any]:
    return READ_TOOLS["find_references"](gen, arguments)


def nodes(answer: dict[str, Any]) -> set[tuple[str, int, str, str]]:
    return {(n["qualified_name"], n["depth"], n["via_kind"], n["reached_from"]) for n in answer["results"]["nodes"]}


def test_subtypes_are_transitive_with_the_hop_and_the_type_each_came_through(tmp_path: Path) -> None:
    gen, _b = _graph(tmp_path)
    answer = refs(gen, qualified_name="pkg.shapes.Drawable", relation="subtypes", view="full")
    assert nodes(answer) == {
        ("pkg.shapes.Shape", 1, "IMPLEMENTS", "pkg.shapes.Drawable"),
        ("pkg.shapes.Polygon", 2, "EXTENDS", "pkg.shapes.Shape"),
        ("pkg.shapes.Circle", 2, "EXTENDS", "pkg.shapes.Shape"),
        ("pkg.shapes.Square", 3, "EXTENDS", "pkg.shapes.Polygon"),
    }
    assert answer["tests"] == "+1 in 1 test file; include_tests=true lists them"
    assert answer["completeness"]["verdict"] == "COMPLETE"
    listed = refs(gen, qualified_name="pkg.shapes.Drawable", relation="subtypes", include_tests=True, view="full")
    assert ("tests.test_shapes.FakeShape", 2, "EXTENDS", "pkg.shapes.Shape") in nodes(listed)


def test_implementations_pass_through_interfaces_and_list_what_implements(tmp_path: Path) -> None:
    gen, b = _graph(tmp_path)
    b2 = b.sym("geo", "pkg.shapes.Drawable")
    assert b2.kind == "interface"
    down = refs(gen, qualified_name="pkg.shapes.Drawable", relation="implementations", view="full")
    assert {n[0] for n in nodes(down)} == {
        "pkg.shapes.Shape",
        "pkg.shapes.Polygon",
        "pkg.shapes.Circle",
        "pkg.shapes.Square",
    }
    # a method's implementations are the methods overriding it, at every level
    area = refs(gen, qualified_name="pkg.shapes.Shape.area", relation="implementations", view="full")
    assert nodes(area) == {
        ("pkg.shapes.Polygon.area", 1, "OVERRIDES", "pkg.shapes.Shape.area"),
        ("pkg.shapes.Circle.area", 1, "OVERRIDES", "pkg.shapes.Shape.area"),
        ("pkg.shapes.Square.area", 2, "OVERRIDES", "pkg.shapes.Polygon.area"),
    }


def test_supertypes_and_overrides_walk_upward(tmp_path: Path) -> None:
    gen, _b = _graph(tmp_path)
    up = refs(gen, qualified_name="pkg.shapes.Square", relation="supertypes", view="full")
    assert nodes(up) == {
        ("pkg.shapes.Polygon", 1, "EXTENDS", "pkg.shapes.Square"),
        ("pkg.shapes.Shape", 2, "EXTENDS", "pkg.shapes.Polygon"),
        ("pkg.shapes.Drawable", 3, "IMPLEMENTS", "pkg.shapes.Shape"),
    }
    over = refs(gen, qualified_name="pkg.shapes.Square.area", relation="overrides", view="full")
    assert [n["qualified_name"] for n in over["results"]["nodes"]] == [
        "pkg.shapes.Polygon.area",
        "pkg.shapes.Shape.area",
    ]


def test_the_compact_view_writes_hierarchy_rows_as_the_walks_do(tmp_path: Path) -> None:
    gen, _b = _graph(tmp_path)
    answer = refs(gen, qualified_name="pkg.shapes.Shape", relation="subtypes")
    results = answer["results"]
    assert results["relation"] == "subtypes" and results["kind"] == "class"
    assert results["edge_kind"] == "EXTENDS" and results["confidence"] == "EXACT_TYPECHECKED"
    # one column per position on the page: Square's hop and the node it was reached from, named once
    assert results["columns"] == ["at", "hop", "from"]
    rows = results.get("files") or {k: v for g in results["groups"] for k, v in g["files"].items()}
    assert rows == {"pkg/shapes.py": ["Polygon@6-8", "Circle@16-18", ["Square@11-13", "2", "Polygon"]]}
    files = refs(gen, qualified_name="pkg.shapes.Shape", relation="subtypes", view="files")
    assert files["results"]["files"] == {"geo": {"pkg/shapes.py": 3}}


def test_a_relation_that_does_not_fit_or_mixes_with_edges_is_refused(tmp_path: Path) -> None:
    gen, _b = _graph(tmp_path)
    for arguments, message in (
        ({"relation": "overrides"}, "relation overrides is about a method; pkg.shapes.Shape is a class"),
        ({"relation": "subtypes", "direction": "outgoing"}, "pass relation or direction, not both"),
        ({"relation": "subtypes", "edge_kinds": ["EXTENDS"]}, "pass relation or edge_kinds, not both"),
        ({"relation": "children"}, "relation must be one of implementations, supertypes, subtypes, overrides"),
    ):
        with pytest.raises(ToolError) as caught:
            refs(gen, qualified_name="pkg.shapes.Shape", **arguments)
        assert caught.value.code == "INVALID_ARGUMENT" and message in caught.value.message, caught.value.message


def test_a_relation_the_checker_left_undecided_is_named_and_never_complete(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("geo")
    b.add_file("geo", "pkg/shapes.py", SHAPES)
    keyed = b.add_symbol("geo", "pkg/shapes.py", "Keyed", "interface", 20)
    b.unresolved_ref(
        "pkg.shapes.Keyed",
        DISPATCH_UNDECIDED,
        "geo",
        "pkg/shapes.py",
        line=1,
        source=b.sym("geo", "pkg.shapes.Shape"),
        package="pkg.shapes",
        detail="go/types could not decide whether type Shape implements Keyed",
    )
    gen = Generation(b.publish(StateLayout(tmp_path / "k.toml", tmp_path / "state")).path)
    answer = refs(gen, stable_key=keyed.key, relation="implementations")
    assert answer["total"] == 0
    assert answer["completeness"]["verdict"] == "LOWER_BOUND"
    assert "could not decide whether type Shape implements Keyed" in answer["completeness"]["dispatch_unknown"]
    assert "not proof of absence" in answer["guidance"]


def test_without_the_type_checker_the_hierarchy_is_a_lower_bound(tmp_path: Path) -> None:
    gen, _b = _graph(tmp_path, mode="fallback")
    answer = refs(gen, qualified_name="pkg.shapes.Shape", relation="subtypes")
    block = answer["completeness"]
    assert block["verdict"] == "LOWER_BOUND" and block["candidate_edges"] == 4  # the test file's subclass too
    assert block["missing_analyzers"][0]["repository"] == "geo"
    assert answer["coverage"]["candidate"] == 3


def test_an_unbound_base_in_a_class_head_is_a_blind_spot_of_the_subtypes(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("geo")
    b.add_file("geo", "pkg/shapes.py", SHAPES)
    b.add_file("geo", "pkg/more.py", "class Hexagon(shapes_alias.Shape):\n    pass\n")
    b.unresolved_ref(
        "Shape", "NAME_NOT_RESOLVED", "geo", "pkg/more.py", line=1, source=b.sym("geo", "pkg.more.Hexagon")
    )
    gen = Generation(b.publish(StateLayout(tmp_path / "k.toml", tmp_path / "state")).path)
    answer = refs(gen, qualified_name="pkg.shapes.Shape", relation="subtypes")
    block = answer["completeness"]
    assert block["verdict"] == "LOWER_BOUND"
    assert [(s["at"], s["in"]) for s in block["blind_spots"]] == [("geo:pkg/more.py:1", "Hexagon")]


def test_a_hierarchy_deeper_than_the_bound_is_cut_and_says_so(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("deep")
    depth = MAX_LEVELS + 2
    b.add_file("deep", "chain.py", "".join(f"class C{i}:\n    pass\n\n\n" for i in range(depth + 1)))
    for i in range(1, depth + 1):
        b.edge(b.sym("deep", f"chain.C{i}"), EdgeKind.EXTENDS, b.sym("deep", f"chain.C{i - 1}"))
    gen = Generation(b.publish(StateLayout(tmp_path / "k.toml", tmp_path / "state")).path)
    answer = refs(gen, qualified_name="chain.C0", relation="subtypes", view="full", limit=500)
    assert answer["total"] == MAX_LEVELS and answer["results"]["traversal_truncated"] is True
    assert answer["completeness"]["verdict"] == "LOWER_BOUND"
