"""The Dart exact adapter: the absence path for real, and its join and bind on a hand-encoded SCIP index.

No Dart SDK exists on these machines, so scip-dart itself never runs here. The absence tests put a PATH
without ``dart`` in place and go through the real exact pass; the join tests feed ``join_index`` an index
encoded by hand in the symbol scheme scip-dart documents, over the real fixture packages.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer import exact_pass as exact
from indexer.fact_cache import FactCache
from indexer.languages.dart import analyzer, resolve
from indexer.scip.decode import decode_index
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.dart_corpus import fixture_corpus
from tests.python_corpus import BuiltCorpus
from tests.test_scip_decode import _int, _len, _packed


@pytest.fixture
def no_dart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH that holds no dart (only an empty directory), and no override."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(analyzer.DART_ENV, raising=False)
    assert shutil.which("dart") is None
    return empty


def test_without_dart_on_path_the_adapter_says_exactly_why(no_dart: Path) -> None:
    built = fixture_corpus()
    app = built.corpus.repositories[0]
    for attempt in (
        analyzer.identity,
        analyzer.probe,
        lambda: analyzer.analyze_repository(app, built.corpus, timeout=5),
    ):
        with pytest.raises(analyzer.AnalyzerFailed) as failed:
            attempt()
        assert str(failed.value) == "no dart executable on PATH: Dart answers are CANDIDATE"


def test_an_override_that_names_no_executable_is_reported_as_such(
    no_dart: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    not_exe = tmp_path / "dart"
    not_exe.write_text("")
    monkeypatch.setenv(analyzer.DART_ENV, str(not_exe))
    with pytest.raises(
        analyzer.AnalyzerFailed, match=f"^{analyzer.DART_ENV}=.* is no executable: Dart answers are CANDIDATE$"
    ):
        analyzer.identity()


def test_the_exact_pass_leaves_every_dart_repository_on_the_fallback_with_the_reason(
    no_dart: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = fixture_corpus()
    with FactCache(tmp_path / "cache") as cache:
        result = exact.run_exact("dart", built.corpus, {"dart_app": {}, "dart_geo": {}}, cache, timeout=5)
    assert result is not None and not result.outcomes and result.runs == 0
    assert set(result.analyses) == {"dart_app", "dart_geo"}
    for analysis in result.analyses.values():
        assert (analysis.mode, analysis.analyzer) == ("fallback", "tree-sitter")
        assert "no dart executable on PATH: Dart answers are CANDIDATE" in analysis.reason
    # what is left is the resolver's answer, unchanged
    candidate = resolve(built.corpus)
    merged = exact.merge(candidate, result)
    assert len(merged.edges) == len(candidate.edges)
    assert all(e.confidence == Confidence.CANDIDATE for e in merged.edges)


# -- join and bind on a hand-encoded index -------------------------------------------------------------

GEO = "scip-dart pub geo 1.0.0 lib/src/`shapes.dart`/"


def _occurrence(line0: int, col: int, end: int, symbol: str, definition: bool = False) -> bytes:
    return _packed(1, [line0, col, end]) + _len(2, symbol.encode()) + (_int(3, 1) if definition else b"")


def _document(path: str, occurrences: list[bytes], symbols: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    return (
        _len(1, path.encode())
        + _len(4, b"Dart")
        + b"".join(_len(2, o) for o in occurrences)
        + b"".join(_len(3, s) for s in symbols)
    )


def _index(*documents: bytes) -> bytes:
    tool = _len(1, b"scip-dart") + _len(2, b"1.6.2")
    return _len(1, _len(2, tool)) + b"".join(_len(2, d) for d in documents)


def _geo_index() -> bytes:
    override = _len(1, f"{GEO}Circle#area().".encode()) + _len(4, _len(1, f"{GEO}Shape#area().".encode()) + _int(3, 1))
    return _index(
        _document(
            "lib/src/shapes.dart",
            [
                _occurrence(1, 15, 20, f"{GEO}Shape#", definition=True),
                _occurrence(2, 9, 13, f"{GEO}Shape#area().", definition=True),
                _occurrence(11, 6, 12, f"{GEO}Circle#", definition=True),
                _occurrence(11, 21, 26, f"{GEO}Shape#"),  # extends Shape
                _occurrence(14, 2, 8, f"{GEO}Circle#`<constructor>`().", definition=True),
                _occurrence(17, 9, 13, f"{GEO}Circle#area().", definition=True),
                _occurrence(17, 2, 8, "scip-dart pub dart:core 3.0.0 dart:core/`double.dart`/double#"),
            ],
            [override],
        )
    )


def _app_index() -> bytes:
    return _index(
        _document(
            "lib/app.dart",
            [
                _occurrence(14, 20, 23, "scip-dart pub dart:math 3.0.0 dart:math/max()."),  # math.max(0, 1)
                _occurrence(18, 17, 23, f"{GEO}Circle#`<constructor>`()."),  # Circle(2)
                _occurrence(19, 9, 13, f"{GEO}Circle#area()."),  # circle.area()
                _occurrence(20, 27, 33, "scip-dart pub geo 1.0.0 lib/src/`point.dart`/Point#origin()."),
                _occurrence(20, 0, 99, "local 3"),
            ],
        )
    )


def _exact(built: BuiltCorpus) -> exact.ExactPass:
    modules = analyzer.ModuleTable(built.corpus)
    passed = exact.ExactPass("dart")
    for repo, data in zip(built.corpus.repositories, (_app_index(), _geo_index()), strict=True):
        facts = analyzer.ADAPTER.decode(analyzer.ADAPTER.encode(analyzer.join_index(decode_index(data), repo, "")))
        assert facts.analyzer_version == "scip-dart 1.6.2"
        passed.outcomes.append(analyzer.bind(facts, repo.name, built.corpus, modules))
    return passed


def _rows(built: BuiltCorpus, edges: list) -> set[tuple[str, str, str, int, int]]:  # type: ignore[type-arg]
    out = set()
    for e in edges:
        s, t = built.declarations[e.source], built.declarations[e.target]
        out.add(
            (
                EdgeKind(e.kind).name,
                f"{s.repository}:{s.qualified_name}",
                f"{t.repository}:{t.qualified_name}",
                e.line,
                e.confidence,
            )
        )
    return out


def test_joined_uses_bind_to_the_declarations_each_package_publishes() -> None:
    built = fixture_corpus()
    passed = _exact(built)
    exact_rows = _rows(built, [e for o in passed.outcomes for e in o.edges])
    typed = int(Confidence.EXACT_TYPECHECKED)
    assert exact_rows == {
        ("CALLS_DIRECT", "dart_app:main", "dart_geo:Circle.new", 19, typed),
        ("CALLS_DIRECT", "dart_app:main", "dart_geo:Circle.area", 20, typed),
        ("CALLS_DIRECT", "dart_app:main", "dart_geo:Point.origin", 21, typed),
        ("EXTENDS", "dart_geo:Circle", "dart_geo:Shape", 12, typed),
        ("OVERRIDES", "dart_geo:Circle.area", "dart_geo:Shape.area", 18, typed),
    }
    assert passed.outcomes[0].cross_repository == 3
    overrides = [e for o in passed.outcomes for e in o.edges if e.kind == EdgeKind.OVERRIDES]
    assert [e.provenance for e in overrides] == [int(Provenance.DART_ANALYZER_DEF)]


def test_exact_answers_replace_the_candidates_at_their_sites_only() -> None:
    built = fixture_corpus()
    candidate = resolve(built.corpus)
    merged = exact.merge(candidate, _exact(built))
    rows = _rows(built, merged.edges)
    cand, typed = int(Confidence.CANDIDATE), int(Confidence.EXACT_TYPECHECKED)
    assert ("CALLS_DIRECT", "dart_app:main", "dart_geo:Circle.new", 19, typed) in rows
    assert ("CALLS_DIRECT", "dart_app:main", "dart_geo:Circle.new", 19, cand) not in rows
    # a site the analyzer did not report keeps its candidate
    assert ("CALLS_DIRECT", "dart_app:total", "dart_geo:Shape.area", 13, cand) in rows
    # the SDK's max settles its site: no edge there, exact or candidate
    assert not any(e.line == 15 and built.declarations[e.source].qualified_name == "total" for e in merged.edges)


def test_a_package_whose_provider_is_not_registered_is_a_row_not_an_edge() -> None:
    built = fixture_corpus()
    app = built.corpus.repositories[0]
    facts = analyzer.join_index(decode_index(_app_index()), app, "")
    lonely = BuiltCorpus(type(built.corpus)("dart", [app], built.corpus.key_of), built.declarations)
    outcome = analyzer.bind(facts, "dart_app", lonely.corpus, analyzer.ModuleTable(lonely.corpus))
    assert not outcome.edges
    assert {(u.name, u.reason) for u in outcome.unresolved} == {
        ("Circle.new", "DART_TARGET_NOT_INDEXED"),
        ("Circle.area", "DART_TARGET_NOT_INDEXED"),
        ("Point.origin", "DART_TARGET_NOT_INDEXED"),
    }
