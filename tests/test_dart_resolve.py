"""The Dart CANDIDATE resolver on the two fixture packages (tests/fixtures/dart_app uses dart_geo).

Real tree-sitter extraction, the resolver over both repositories as the pipeline hands them over; edges are
read back as (kind, source repository:qualified name, target repository:qualified name) at their line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.languages.dart import resolve
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.dart_corpus import FIXTURES, build_dart_corpus, fixture_corpus
from tests.python_corpus import BuiltCorpus

Row = tuple[str, str, str, int]


@pytest.fixture(scope="module")
def resolved() -> tuple[BuiltCorpus, Resolution]:
    built = fixture_corpus()
    return built, resolve(built.corpus)


def _rows(built: BuiltCorpus, res: Resolution) -> set[Row]:
    out: set[Row] = set()
    for e in res.edges:
        s, t = built.declarations[e.source], built.declarations[e.target]
        out.add(
            (EdgeKind(e.kind).name, f"{s.repository}:{s.qualified_name}", f"{t.repository}:{t.qualified_name}", e.line)
        )
    return out


def _unresolved(res: Resolution) -> set[tuple[str, str, str, int]]:
    return {(u.path, u.name, u.reason, u.line) for u in res.unresolved}


def test_every_edge_is_a_syntax_candidate(resolved: tuple[BuiltCorpus, Resolution]) -> None:
    _built, res = resolved
    assert res.edges
    assert {e.confidence for e in res.edges} == {int(Confidence.CANDIDATE)}
    calls = {e.provenance for e in res.edges if e.kind == EdgeKind.CALLS_DIRECT}
    assert calls == {int(Provenance.DART_SYNTAX_CALL)}
    assert {e.provenance for e in res.edges if e.kind != EdgeKind.CALLS_DIRECT} == {int(Provenance.TREE_SITTER_SYNTAX)}


def test_names_bind_through_show_prefixes_and_re_exports_into_the_other_package(
    resolved: tuple[BuiltCorpus, Resolution],
) -> None:
    rows = _rows(*resolved)
    # import 'package:geo/geo.dart' show Circle, Shape: geo.dart re-exports src/shapes.dart
    assert ("IMPORTS_SYMBOL", "dart_app:lib.app", "dart_geo:Circle", 4) in rows
    assert ("REEXPORTS", "dart_geo:lib.geo", "dart_geo:Circle", 4) in rows
    assert ("CALLS_DIRECT", "dart_app:main", "dart_geo:Circle.new", 19) in rows  # Circle(2): its constructor
    # import ... as geo: geo.Point.origin() and geo.Point(1, 2).distanceTo(...)
    assert ("CALLS_DIRECT", "dart_app:main", "dart_geo:Point.origin", 21) in rows
    assert ("CALLS_DIRECT", "dart_app:main", "dart_geo:Point.new", 22) in rows
    assert ("CALLS_DIRECT", "dart_app:main", "dart_geo:Point.distanceTo", 22) in rows
    # report.dart imports geo without a combinator: Square is visible there
    assert ("CALLS_DIRECT", "dart_app:Report.show", "dart_geo:Square.new", 8) in rows
    assert ("REFERENCES", "dart_app:Report.show", "dart_geo:Square.name", 9) in rows  # sq.name: a getter


def test_hide_and_show_keep_names_out_and_say_so(resolved: tuple[BuiltCorpus, Resolution]) -> None:
    _built, res = resolved
    unresolved = _unresolved(res)
    # Point is not in `show Circle, Shape`, so the bare Point(0, 0) binds to nothing
    assert ("lib/app.dart", "Point", "NAME_NOT_RESOLVED", 24) in unresolved
    assert ("lib/src/report.dart", "unknownFunction", "NAME_NOT_RESOLVED", 10) in unresolved
    # math.max of a dart: library and lines.add on a List field are nobody's declarations: no row at all
    assert not any(u.name in ("max", "math", "add") for u in res.unresolved)
    # a receiver syntax cannot type is an honest row
    assert ("lib/src/point.dart", "abs", "RECEIVER_NOT_RESOLVED", 9) in unresolved


def test_homonym_methods_on_two_types_are_never_merged(resolved: tuple[BuiltCorpus, Resolution]) -> None:
    rows = _rows(*resolved)
    area_calls = {(src, tgt, line) for kind, src, tgt, line in rows if kind == "CALLS_DIRECT" and tgt.endswith(".area")}
    assert area_calls == {
        ("dart_app:total", "dart_geo:Shape.area", 13),  # s.area() on `final Shape s`
        ("dart_app:main", "dart_geo:Circle.area", 20),  # circle.area() on `final circle = Circle(2)`
        ("dart_app:Summary.run", "dart_app:Summary.area", 23),  # bare area() inside Summary
        ("dart_app:Summary.run", "dart_app:Summary.area", 24),  # this.area()
        ("dart_geo:Shape.describe", "dart_geo:Shape.area", 5),
        ("dart_geo:Square.compareTo", "dart_geo:Square.area", 33),
    }
    assert not any(tgt == "dart_app:Report.area" for _k, _s, tgt, _l in rows)


def test_the_class_hierarchy_gives_dispatch_relations(resolved: tuple[BuiltCorpus, Resolution]) -> None:
    rows = _rows(*resolved)
    assert ("EXTENDS", "dart_geo:Circle", "dart_geo:Shape", 12) in rows
    assert ("EXTENDS", "dart_geo:Square", "dart_geo:Shape", 21) in rows
    assert ("EXTENDS", "dart_geo:Square", "dart_geo:Named", 21) in rows  # with Named
    # members override the nearest declaration up the chain: what dispatch walks climb from a callee
    overrides = {(s, t) for k, s, t, _l in rows if k in ("OVERRIDES", "IMPLEMENTS") and "." in s}
    assert overrides == {
        ("dart_geo:Circle.area", "dart_geo:Shape.area"),
        ("dart_geo:Square.area", "dart_geo:Shape.area"),
        ("dart_geo:Square.name", "dart_geo:Named.name"),
    }


def test_a_part_file_sees_its_library_and_is_part_of_it(resolved: tuple[BuiltCorpus, Resolution]) -> None:
    rows = _rows(*resolved)
    assert ("PART_OF", "dart_app:lib.src.app_part", "dart_app:lib.app", 1) in rows
    assert ("CALLS_DIRECT", "dart_app:partHelper", "dart_app:total", 5) in rows  # declared in app.dart
    assert ("CALLS_DIRECT", "dart_app:partHelper", "dart_geo:Circle.new", 6) in rows  # app.dart's import
    assert ("CALLS_DIRECT", "dart_app:main", "dart_app:partHelper", 25) in rows


def test_an_import_of_a_registered_package_is_a_package_dependency(resolved: tuple[BuiltCorpus, Resolution]) -> None:
    _built, res = resolved
    deps = {
        (d.consumer_repository, d.consumer_package, d.provider_repository, d.provider_package, d.path)
        for d in res.package_dependencies
    }
    assert deps == {
        ("dart_app", "app", "dart_geo", "geo", "lib/app.dart"),
        ("dart_app", "app", "dart_geo", "geo", "lib/src/report.dart"),
    }


def test_without_the_provider_registered_its_names_are_not_indexed_targets() -> None:
    built = build_dart_corpus([("dart_app", FIXTURES / "dart_app")])
    res = resolve(built.corpus)
    assert not any(built.declarations[e.target].repository != "dart_app" for e in res.edges)
    unresolved = _unresolved(res)
    assert ("lib/app.dart", "Circle", "DART_TARGET_NOT_INDEXED", 19) in unresolved
    assert ("lib/src/report.dart", "Square", "DART_TARGET_NOT_INDEXED", 8) in unresolved
    assert not res.package_dependencies


def test_two_repositories_with_the_same_package_name_are_an_ambiguity(tmp_path: Path) -> None:
    twin = tmp_path / "geo_twin"
    shutil.copytree(FIXTURES / "dart_geo", twin)
    built = build_dart_corpus(
        [("dart_app", FIXTURES / "dart_app"), ("dart_geo", FIXTURES / "dart_geo"), ("geo_twin", twin)]
    )
    res = resolve(built.corpus)
    ambiguous = {(u.path, u.line) for u in res.unresolved if u.reason == "AMBIGUOUS_PACKAGE_PROVIDER"}
    assert ambiguous == {("lib/app.dart", 4), ("lib/app.dart", 5), ("lib/src/report.dart", 1)}
    assert not any(
        built.declarations[e.target].repository != "dart_app"
        for e in res.edges
        if built.declarations[e.source].repository == "dart_app"
    )


def test_a_relative_import_of_a_missing_file_is_a_row(tmp_path: Path) -> None:
    (tmp_path / "pubspec.yaml").write_text("name: solo\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.dart").write_text("import 'missing.dart';\nimport 'b.dart';\n\nvoid run() => helper();\n")
    (tmp_path / "lib" / "b.dart").write_text("void helper() {}\n")
    built = build_dart_corpus([("solo", tmp_path)])
    res = resolve(built.corpus)
    assert ("lib/a.dart", "missing.dart", "IMPORT_NOT_RESOLVED", 1) in _unresolved(res)
    assert ("CALLS_DIRECT", "solo:run", "solo:helper", 4) in _rows(built, res)
