"""The Python resolver over the fixture repositories and on the corpus-level rules annotations cannot show."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.corpus import Resolution
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.helpers import FIXTURES, write_repo
from tests.python_corpus import BuiltCorpus, build_corpus

# The pipeline leaves these out of pyrepo_a (.gitignore, vendored code); so does this corpus.
SKIPPED = ("ignored_dir", "vendor")


@pytest.fixture(scope="module")
def fixtures() -> tuple[BuiltCorpus, Resolution]:
    built = build_corpus([("pyrepo_a", FIXTURES / "pyrepo_a"), ("pyrepo_b", FIXTURES / "pyrepo_b")], SKIPPED)
    return built, built.resolve()


def _rows(built: BuiltCorpus, resolution: Resolution, kind: EdgeKind | None = None) -> set[tuple[str, str, str]]:
    return {built.edge_row(e) for e in resolution.edges if kind is None or e.kind == kind}


def test_fixture_modules_are_named_from_the_src_layout_and_the_broken_file_is_partial_alone(
    fixtures: tuple[BuiltCorpus, Resolution],
) -> None:
    built, _ = fixtures
    files = built.files()
    assert files[("pyrepo_a", "src/shapes/__init__.py")].package == "shapes"
    assert files[("pyrepo_a", "src/shapes/circle.py")].package == "shapes.circle"
    broken = files[("pyrepo_a", "src/shapes/broken.py")]
    assert (broken.status, broken.reason) == (
        "partial",
        "syntax error at line 4; lines 4-5 not parsed, the rest indexed",
    )
    assert ("unfinished", 4, 4) in broken.unparsed
    assert [f.status for f in files.values()].count("partial") == 1


def test_fixture_homonym_methods_bind_to_their_own_class(fixtures: tuple[BuiltCorpus, Resolution]) -> None:
    built, resolution = fixtures
    calls = _rows(built, resolution, EdgeKind.CALLS_DIRECT)
    assert ("CALLS_DIRECT", "shapes.report.larger_area", "shapes.circle.Circle.area") in calls
    assert ("CALLS_DIRECT", "shapes.report.larger_area", "shapes.square.Square.area") in calls
    assert ("CALLS_DIRECT", "shapes.base.Shape.describe", "shapes.base.Shape.area") in calls
    assert ("CALLS_DIRECT", "shapes.circle.Circle.label", "shapes.base.Shape.describe") in calls
    assert ("CALLS_DIRECT", "shapes.square.Square.__init__", "shapes.base.Shape.__init__") in calls
    assert ("CALLS_DIRECT", "shapes.report.build_report", "shapes.units.to_cm") in calls


def test_fixture_cross_repository_uses_bind_into_the_provider_through_its_reexports(
    fixtures: tuple[BuiltCorpus, Resolution],
) -> None:
    built, resolution = fixtures
    crossing = {
        built.edge_row(e)
        for e in resolution.edges
        if built.declarations[e.source].repository == "pyrepo_b"
        and built.declarations[e.target].repository == "pyrepo_a"
    }
    assert crossing == {
        ("IMPORTS_SYMBOL", "drawing.canvas", "shapes"),
        ("IMPORTS_SYMBOL", "drawing.canvas", "shapes.circle.Circle"),
        ("IMPORTS_SYMBOL", "drawing.canvas", "shapes.circle.circle_area"),
        ("TYPE_USES", "drawing.canvas.Canvas.__init__", "shapes.base.Shape"),
        ("TYPE_USES", "drawing.canvas.Canvas.add", "shapes.base.Shape"),
        ("CALLS_DIRECT", "drawing.canvas.Canvas.add_circle", "shapes.circle.Circle"),
        ("CALLS_DIRECT", "drawing.canvas.Canvas.add_circle", "shapes.circle.circle_area"),
        ("CALLS_DIRECT", "drawing.canvas.default_canvas", "shapes.square.Square"),
    }
    (dependency,) = resolution.package_dependencies
    assert (
        dependency.consumer_repository,
        dependency.consumer_package,
        dependency.provider_repository,
        dependency.provider_package,
        dependency.path,
    ) == ("pyrepo_b", "drawing", "pyrepo_a", "shapes", "drawing/canvas.py")


def test_fixture_module_level_code_is_attributed_to_the_module_symbol(fixtures: tuple[BuiltCorpus, Resolution]) -> None:
    built, resolution = fixtures
    calls = _rows(built, resolution, EdgeKind.CALLS_DIRECT)
    assert ("CALLS_DIRECT", "drawing.cli", "drawing.canvas.default_canvas") in calls
    assert ("CALLS_DIRECT", "drawing.cli", "drawing.canvas.Canvas.describe_all") in calls


def test_fixture_uncalled_function_has_no_incoming_edge(fixtures: tuple[BuiltCorpus, Resolution]) -> None:
    built, resolution = fixtures
    key = built.key("shapes.units.legacy_to_inches")
    assert [e for e in resolution.edges if e.target == key] == []
    assert [e for e in resolution.edges if e.target == built.key("shapes.units.to_cm")] != []


def test_fixture_unknown_receivers_are_unresolved_rows_with_their_source(
    fixtures: tuple[BuiltCorpus, Resolution],
) -> None:
    built, resolution = fixtures
    rows = {
        (u.path, u.line, u.reason, u.name, u.detail, built.declarations[u.source].qualified_name)
        for u in resolution.unresolved
        if u.reason != "IMPLICIT_CALL"
    }
    assert rows == {
        (
            "src/shapes/report.py",
            11,
            "RECEIVER_NOT_RESOLVED",
            "describe",
            "shape.describe",
            "shapes.report.build_report",
        ),
        ("src/shapes/report.py", 12, "RECEIVER_NOT_RESOLVED", "area", "shape.area", "shapes.report.build_report"),
        (
            "drawing/canvas.py",
            25,
            "RECEIVER_NOT_RESOLVED",
            "describe",
            "item.describe",
            "drawing.canvas.Canvas.describe_all",
        ),
    }
    assert {u.language for u in resolution.unresolved} == {"python"}


def test_every_edge_is_a_candidate_with_syntax_provenance(fixtures: tuple[BuiltCorpus, Resolution]) -> None:
    _, resolution = fixtures
    assert resolution.edges
    for edge in resolution.edges:
        assert edge.confidence == Confidence.CANDIDATE
        expected = (
            Provenance.PYTHON_SYNTAX_CALL if edge.kind == EdgeKind.CALLS_DIRECT else Provenance.TREE_SITTER_SYNTAX
        )
        assert edge.provenance == expected


def test_resolution_is_deterministic(fixtures: tuple[BuiltCorpus, Resolution]) -> None:
    built, resolution = fixtures
    again = built.resolve()
    assert again.edges == resolution.edges
    assert again.unresolved == resolution.unresolved
    assert again.package_dependencies == resolution.package_dependencies


def _corpus(tmp_path: Path, files: dict[str, str], repo: str = "main") -> tuple[BuiltCorpus, Resolution]:
    built = build_corpus([(repo, write_repo(tmp_path / repo, files))])
    return built, built.resolve()


def test_uses_of_a_module_that_failed_to_parse_are_target_not_indexed(tmp_path: Path) -> None:
    _, resolution = _corpus(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/bad.py": "def f(:\n",
            "pkg/use.py": "from pkg.bad import f\n\n\ndef g():\n    return f()\n",
        },
    )
    assert {(u.line, u.reason, u.package) for u in resolution.unresolved} == {
        (1, "TARGET_NOT_INDEXED", "pkg.bad"),
        (5, "TARGET_NOT_INDEXED", "pkg.bad"),
    }
    assert resolution.edges == []


def test_a_star_import_from_an_unindexed_module_or_a_module_getattr_silences_unknown_names(tmp_path: Path) -> None:
    _, resolution = _corpus(
        tmp_path,
        {
            "a.py": "from os.path import *\n\n\ndef f():\n    return join('a')\n",
            "b.py": "def __getattr__(name):\n    return name\n",
            "c.py": "import b\n\n\ndef g():\n    return b.anything()\n",
        },
    )
    assert resolution.unresolved == []


def test_an_implementation_module_wins_over_its_stub(tmp_path: Path) -> None:
    built, resolution = _corpus(
        tmp_path,
        {
            "fast.pyi": "def run() -> int: ...\n",
            "fast.py": "def run():\n    return 1\n",
            "main.py": "from fast import run\n",
        },
    )
    (edge,) = [e for e in resolution.edges if e.kind != EdgeKind.STANDS_FOR]
    assert built.declarations[edge.target].path == "fast.py"
    # and the stub stands for it, declaration by declaration (their uses answer as one: docs/surface.md §4.6)
    assert {
        (built.declarations[e.source].path, built.declarations[e.target].path, built.edge_row(e)[1])
        for e in resolution.edges
        if e.kind == EdgeKind.STANDS_FOR
    } == {("fast.pyi", "fast.py", "fast"), ("fast.pyi", "fast.py", "fast.run")}


def test_a_module_found_in_the_importing_repository_is_never_taken_from_another(tmp_path: Path) -> None:
    own = write_repo(tmp_path / "own", {"util.py": "def f():\n    pass\n", "app.py": "import util\nutil.f()\n"})
    other = write_repo(tmp_path / "other", {"util.py": "def f():\n    pass\n"})
    built = build_corpus([("other", other), ("own", own)])
    resolution = built.resolve()
    assert {built.declarations[e.target].repository for e in resolution.edges} == {"own"}
    assert resolution.package_dependencies == []


def test_a_resolver_run_handles_many_files_with_shared_names(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "from .m0 import Thing\n"}
    for i in range(60):
        files[f"pkg/m{i}.py"] = (
            f"from pkg import Thing\n\n\nclass Thing{i}(Thing):\n    def run(self):\n        return self.go()\n\n"
            f"def helper():\n    return Thing{i}().run()\n"
        )
    files["pkg/m0.py"] = "class Thing:\n    def go(self):\n        return 0\n"
    built, resolution = _corpus(tmp_path, files)
    go = built.key("pkg.m0.Thing.go")
    callers = {built.declarations[e.source].qualified_name for e in resolution.edges if e.target == go}
    assert len(callers) == 59 and "pkg.m7.Thing7.run" in callers
    assert resolution.unresolved == []


def test_a_name_declared_only_in_the_stub_beside_an_implementation_still_resolves(tmp_path: Path) -> None:
    built, resolution = _corpus(
        tmp_path,
        {
            "fast/__init__.py": "from ._native import *\n",
            "fast/__init__.pyi": "class Engine:\n    def start(self) -> None: ...\n",
            "main.py": "from fast import Engine\n\n\ndef go(e: Engine):\n    e.start()\n",
        },
    )
    uses = [e for e in resolution.edges if e.kind != EdgeKind.STANDS_FOR]
    targets = {built.edge_row(e)[2] for e in uses}
    assert {"fast.Engine", "fast.Engine.start"} <= targets
    assert {built.declarations[e.target].path for e in uses} == {"fast/__init__.pyi"}
    # Only the compiled module itself is missing; nothing reached through the stub is.
    assert [(u.path, u.reason, u.package) for u in resolution.unresolved] == [
        ("fast/__init__.py", "IMPORT_NOT_RESOLVED", "fast._native")
    ]


def test_a_module_that_writes_its_own_namespace_answers_unknown_names_silently(tmp_path: Path) -> None:
    _, resolution = _corpus(
        tmp_path,
        {
            "flags.py": "import enum\n\n\nclass Flag(enum.IntFlag):\n    A = 1\n\n\nglobals().update(Flag.__members__)\n",
            "plain.py": "X = 1\n",
            "use.py": "import flags\nimport plain\n\nflags.A\nplain.Y\n",
        },
    )
    assert [(u.path, u.line, u.reason, u.name) for u in resolution.unresolved] == [
        ("use.py", 5, "NAME_NOT_RESOLVED", "Y")
    ]


def test_fixture_special_methods_carry_their_implicit_call_row(fixtures: tuple[BuiltCorpus, Resolution]) -> None:
    """Each special method a class declares has one IMPLICIT_CALL row on itself (docs/surface.md §4.8): Python
    calls it through syntax and built-ins, which no analyzer records as uses. Other methods have none."""
    built, resolution = fixtures
    rows = [u for u in resolution.unresolved if u.reason == "IMPLICIT_CALL"]
    assert rows
    special = {
        key
        for key, d in built.declarations.items()
        if d.kind == "method" and _last(d.qualified_name).startswith("__") and _last(d.qualified_name).endswith("__")
    }
    assert {u.source for u in rows} == special
    assert len(rows) == len(special)
    for u in rows:
        assert u.name == _last(built.declarations[u.source].qualified_name)
        assert u.detail.startswith(f"Python calls {u.name} through ")
    init = next(u for u in rows if u.name == "__init__")
    assert "construction of its class" in init.detail


def _last(qualified_name: str) -> str:
    return qualified_name.rsplit(".", 1)[-1]
