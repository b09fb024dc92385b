"""Fresh after every edit, with the real analyzers: a CANDIDATE generation first, then the exact one, which
equals a full rebuild after every scripted change (add a caller, rename, delete a file, edit a comment,
revert). Go's exact pass re-analyses only the changed packages and their importers, Python's and TypeScript's
only the files an edit reaches; verify mode checks each against a whole run.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from indexer import incremental
from indexer.fact_cache import FactCacheDisagreement
from indexer.watch import watch_and_index
from snapshot_format.reader import Generation
from snapshot_format.vocab import Confidence, EdgeKind
from tests.fresh_kit import Run, Workspace, assert_like_a_full_rebuild, indexed_copy, pending
from tests.helpers import FIXTURES, copy_fixture, write_repo

pytestmark = pytest.mark.analyzers

GO_MODULE = {
    "go.mod": "module example.com/m\n\ngo 1.21\n",
    "a/a.go": (
        "package a\n\n// Store keeps values.\ntype Store struct{ items []string }\n\n"
        "// Put adds a value.\nfunc (s *Store) Put(v string) { s.items = append(s.items, v) }\n\n"
        "// Len counts values.\nfunc (s *Store) Len() int { return len(s.items) }\n\n"
        "// Write makes a Store an io.Writer, an interface outside the graph (EXTERNAL_IMPLEMENTS, recomputed by\n"
        "// every run; EXTERNAL_CONVERSION where b hands it to c.Dump)\n"
        "func (s *Store) Write(p []byte) (int, error) { return len(p), nil }\n\n"
        "func Helper() int { return 1 }\n"
    ),
    "a/a_test.go": (
        'package a\n\nimport "testing"\n\nfunc TestPut(t *testing.T) {\n\ts := &Store{}\n\ts.Put("y")\n'
        "\tif s.Len() != 1 {\n\t\tt.Fatal(Helper())\n\t}\n}\n"
    ),
    "b/b.go": (
        'package b\n\nimport (\n\t"example.com/m/a"\n\t"example.com/m/c"\n)\n\n'
        'func Use() int {\n\ts := &a.Store{}\n\ts.Put("x")\n\tc.Dump(s)\n'
        "\treturn s.Len() + a.Helper()\n}\n"
    ),
    "c/c.go": 'package c\n\nimport "io"\n\n// Sizer is anything with a length.\ntype Sizer interface{ Len() int }\n\n'
    "func Size(s Sizer) int { return s.Len() }\n\n"
    "// Dump calls through io.Writer (EXTERNAL_INTERFACE_CALL).\nfunc Dump(w io.Writer) { w.Write(nil) }\n",
    # a relation go/types leaves undecided (DISPATCH_UNDECIDED rows), recomputed by every run like IMPLEMENTS
    "e/e.go": "package e\n\ntype Keyed[K comparable] interface{ Key() K }\n\n"
    "type Box[T any] struct{ v T }\n\nfunc (b Box[T]) Key() T { return b.v }\n",
    "d/d.go": 'package d\n\nimport "example.com/m/b"\n\nfunc Top() int { return b.Use() }\n',
}


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first occurrence of ``old``."""
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def callers(gen: Generation, qualified_name: str) -> dict[str, int]:
    """Qualified name of each caller of the one symbol named so -> the edge's confidence."""
    (sym,) = gen.symbols_by_qualified_name(qualified_name)
    return {
        gen.symbol(e.source).qualified_name: e.confidence  # type: ignore[union-attr]
        for e in gen.edges_in(sym.key, [EdgeKind.CALLS_DIRECT])
    }


def indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, files: dict[str, str], *languages: str
) -> tuple[Workspace, Path]:
    """A repository written from ``files``, registered and indexed once (a whole exact run)."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    repo = write_repo(tmp_path / name, files)
    ws.register(name, repo, *languages)
    assert ws.index().names == ["exact"]
    return ws, repo


def reverter(repo: Path, files: dict[str, str]) -> Callable[[], None]:
    """What puts every file of ``files`` back as it was written (a deleted one too)."""

    def revert() -> None:
        write_repo(repo, files)

    return revert


@pytest.fixture
def go_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    return indexed(tmp_path, monkeypatch, "m", GO_MODULE, "go")


def go_changes(repo: Path) -> list[tuple[str, Callable[[], object]]]:
    """The scripted change sets, in order: each is applied to the module, then it is re-indexed."""
    revert = reverter(repo, GO_MODULE)
    return [
        (
            "add a caller",
            lambda: edit(
                repo / "b" / "b.go",
                "func Use() int {",
                "func Twice() int { return a.Helper() + a.Helper() }\n\nfunc Use() int {",
            ),
        ),
        (
            "rename a method (Store no longer implements Sizer)",
            lambda: [
                edit(repo / "a" / "a.go", "func (s *Store) Len() int", "func (s *Store) Count() int"),
                edit(repo / "b" / "b.go", "s.Len()", "s.Count()"),
                edit(repo / "a" / "a_test.go", "s.Len()", "s.Count()"),
            ],
        ),
        ("delete a file", lambda: (repo / "d" / "d.go").unlink()),
        ("edit a comment", lambda: edit(repo / "c" / "c.go", "// Sizer is", "// A comment.\n// Sizer is")),
        ("revert", revert),
    ]


def test_go_the_candidate_generation_shows_an_added_caller_at_once_and_keeps_the_other_exact_edges(
    go_ws: tuple[Workspace, Path],
) -> None:
    ws, repo = go_ws
    with ws.current() as gen:
        before = callers(gen, "Helper")
    assert set(before.values()) == {Confidence.EXACT_TYPECHECKED}
    edit(
        repo / "d" / "d.go",
        "func Top() int { return b.Use() }",
        "func Top() int { return b.Use() }\n\nfunc Again() int { return b.Use() }",
    )
    run = ws.index()
    candidate, exact = run.stages
    assert candidate.pending_files == 1
    with ws.generation(candidate.result.name) as gen:
        assert pending(gen, "m") == {"d/d.go"}
        assert callers(gen, "Use") == {"Top": Confidence.CANDIDATE, "Again": Confidence.CANDIDATE}
        assert callers(gen, "Helper") == before  # carried over: exact, from files the edit did not touch
        (analysis,) = gen.repository("m").analyses  # type: ignore[union-attr]
        assert analysis.mode == "pending" and "1 of 6 files (d/d.go)" in analysis.reason
    with ws.generation(exact.result.name) as gen:
        assert callers(gen, "Use") == {"Top": Confidence.EXACT_TYPECHECKED, "Again": Confidence.EXACT_TYPECHECKED}
        assert not pending(gen, "m")


def test_go_every_few_incremental_runs_a_whole_run_reconciles(
    go_ws: tuple[Workspace, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, repo = go_ws
    monkeypatch.setattr(incremental, "RECONCILE_EVERY", 3)
    routes = []
    for n in range(5):
        edit(repo / "c" / "c.go", "func Size", f"func Size{n}() int {{ return {n} }}\n\nfunc Size")
        routes.append(ws.index().report.index["go"]["analyzer_incremental"])
    assert routes == [1, 1, 0, 1, 1]


def test_go_an_analyzer_failing_in_the_exact_stage_degrades_and_the_watch_goes_on(
    go_ws: tuple[Workspace, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, repo = go_ws
    broken = tmp_path / "go"
    broken.write_text("#!/bin/sh\necho 'go: broken toolchain' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("KIVGRAPH_GO", str(broken))
    runs: list[Run] = []

    def reindex() -> int:
        runs.append(ws.index())
        return 0

    target = repo / "c" / "c.go"

    def batches():
        edit(target, "func Size", "func First() int { return 1 }\n\nfunc Size")
        yield {(2, str(target))}
        edit(target, "func Size", "func Second() int { return 2 }\n\nfunc Size")
        yield {(2, str(target))}

    watch_and_index(ws.layout, reindex, changes=batches())
    assert [r.names for r in runs] == [["candidate", "exact"], ["candidate", "exact"]]
    with ws.current() as gen:
        (analysis,) = gen.repository("m").analyses  # type: ignore[union-attr]
        assert analysis.mode == "fallback" and "broken toolchain" in analysis.reason
        assert gen.symbols_by_name("Second") and not pending(gen, "m")


# --- Python: scip-python over the files an edit reaches ------------------------------------------------


@pytest.fixture
def py_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    return indexed_copy(tmp_path, monkeypatch, "pyrepo_a", "shapes", "python")


def py_changes(repo: Path) -> list[tuple[str, Callable[[], object]]]:
    """The scripted change sets, in order; each reaches only some of the files (the others keep their uses)."""
    shapes = repo / "src" / "shapes"

    def revert() -> None:
        shutil.rmtree(repo / "src")
        shutil.copytree(FIXTURES / "pyrepo_a" / "src", repo / "src")

    return [
        (
            "add a caller",  # report is checked again; square and circle (their overrides of Shape) are not
            lambda: edit(
                shapes / "report.py",
                "def larger_area(",
                "def square_only(side: float) -> float:\n    return Square(side).area()\n\n\ndef larger_area(",
            ),
        ),
        ("rename", lambda: edit(shapes / "square.py", "def area(self)", "def surface(self)")),
        ("delete a file", lambda: (shapes / "units.py").unlink()),  # report's import of it no longer resolves
        ("edit a comment", lambda: edit(shapes / "circle.py", '"""', '# a comment\n"""')),
        ("revert", revert),
    ]


def test_python_the_candidate_generation_shows_each_change_at_once(py_ws: tuple[Workspace, Path]) -> None:
    ws, repo = py_ws
    for label, change in py_changes(repo)[:4]:
        change()
        run = ws.index()
        assert run.names == ["candidate", "exact"], label
        with ws.generation(run.stages[0].result.name) as gen:
            waiting = pending(gen, "shapes")
            assert waiting and all(
                f.analysis in ("exact", "pending") for f in gen.files("shapes") if f.status != "skipped"
            ), label
            if label == "add a caller":
                assert callers(gen, "shapes.square.Square.area")["shapes.report.square_only"] == Confidence.CANDIDATE
            if label == "edit a comment":
                assert waiting == {"src/shapes/circle.py"}  # nothing else can change with a comment


def test_python_an_incremental_run_keeps_overrides_and_calls_of_files_it_did_not_check(
    py_ws: tuple[Workspace, Path],
) -> None:
    ws, repo = py_ws
    label, change = py_changes(repo)[0]
    change()
    assert ws.index().report.index["python"]["analyzer_incremental"] == 1, label
    with ws.current() as gen:
        (area,) = gen.symbols_by_qualified_name("shapes.circle.Circle.area")
        overridden = {
            gen.symbol(e.target).qualified_name  # type: ignore[union-attr]
            for e in gen.edges_out(area.key, [EdgeKind.OVERRIDES])
        }
        assert overridden == {"shapes.base.Shape.area"}
        exact = Confidence.EXACT_TYPECHECKED
        assert callers(gen, "shapes.circle.circle_area") == {"shapes.circle.Circle.area": exact}
        assert callers(gen, "shapes.square.Square.area")["shapes.report.square_only"] == exact


# --- TypeScript: scip-typescript over the files an edit reaches ----------------------------------------------

TS_PROJECT = {
    "tsconfig.json": (
        '{ "compilerOptions": { "target": "es2022", "module": "esnext", "moduleResolution": "bundler", '
        '"strict": true }, "include": ["src"] }\n'
    ),
    "src/shapes.ts": (
        "export interface Shape {\n  area(): number;\n}\n\nexport type Options = { scale: number };\n\n"
        "export abstract class Base {\n  describe(): string {\n    return 'shape';\n  }\n}\n\n"
        "export function square(x: number): number {\n  return x * x;\n}\n"
    ),
    "src/circle.ts": (
        "import { Base, Options, Shape, square } from './shapes';\n\n"
        "export class Circle extends Base implements Shape {\n"
        "  constructor(private readonly r: number, private readonly options: Options) {\n    super();\n  }\n\n"
        "  area(): number {\n    return square(this.r) * this.options.scale;\n  }\n\n"
        "  describe(): string {\n    return 'circle';\n  }\n}\n"
    ),
    "src/report.ts": (
        "import { Circle } from './circle';\nimport { meters } from './units';\n\n"
        "export function report(): string {\n  return new Circle(meters(1), { scale: 2 }).describe();\n}\n"
    ),
    "src/units.ts": "export function meters(x: number): number {\n  return x;\n}\n",
    "src/other.ts": "export function alone(): number {\n  return 0;\n}\n",
}


@pytest.fixture
def ts_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    return indexed(tmp_path, monkeypatch, "shapes", TS_PROJECT, "typescript")


def ts_changes(repo: Path) -> list[tuple[str, Callable[[], object]]]:
    """The scripted change sets, in order; each reaches only some of the files (the others keep their uses)."""
    src = repo / "src"
    return [
        (
            "add a caller",  # circle and report are checked again; shapes, which Circle implements, is not
            lambda: edit(
                src / "circle.ts",
                "export class Circle",
                "export function unit(): Circle {\n  return new Circle(square(1), { scale: 1 });\n}\n\n"
                "export class Circle",
            ),
        ),
        (
            "rename",
            lambda: [
                edit(src / "shapes.ts", "export function square(", "export function squared("),
                edit(src / "circle.ts", "{ Base, Options, Shape, square }", "{ Base, Options, Shape, squared }"),
                edit(src / "circle.ts", "return square(this.r)", "return squared(this.r)"),
                edit(src / "circle.ts", "new Circle(square(1)", "new Circle(squared(1)"),
            ],
        ),
        ("delete a file", lambda: (src / "units.ts").unlink()),  # report's import of it no longer resolves
        ("edit a comment", lambda: edit(src / "shapes.ts", "export type Options", "// how big\nexport type Options")),
        ("revert", reverter(repo, TS_PROJECT)),
    ]


def test_typescript_an_incremental_run_keeps_implements_and_overrides_into_a_file_it_did_not_check(
    ts_ws: tuple[Workspace, Path],
) -> None:
    ws, repo = ts_ws
    label, change = ts_changes(repo)[0]
    change()
    assert ws.index().report.index["typescript"]["analyzer_incremental"] == 1, label
    with ws.current() as gen:

        def targets(qualified_name: str, kind: EdgeKind) -> set[tuple[str, int]]:
            (sym,) = gen.symbols_by_qualified_name(qualified_name)
            return {
                (gen.symbol(e.target).qualified_name, e.confidence)  # type: ignore[union-attr]
                for e in gen.edges_out(sym.key, [kind])
            }

        exact = Confidence.EXACT_TYPECHECKED
        assert targets("src.circle.Circle.area", EdgeKind.IMPLEMENTS) == {("src.shapes.Shape.area", exact)}
        assert targets("src.circle.Circle.describe", EdgeKind.OVERRIDES) == {("src.shapes.Base.describe", exact)}
        assert targets("src.circle.Circle", EdgeKind.IMPLEMENTS) == {("src.shapes.Shape", exact)}
        assert callers(gen, "src.shapes.square") == {"src.circle.Circle.area": exact, "src.circle.unit": exact}


# --- Go, Python and TypeScript: every incremental route against whole runs -----------------------------------------


@dataclass(frozen=True)
class Route:
    """One language's incremental route, as the scripted-change and verify-mode tests drive it."""

    fixture: str
    language: str
    analyzer: str
    repository: str
    changes: Callable[[Path], list[tuple[str, Callable[[], object]]]]
    module: str  # where ``update`` lives
    forget: Callable[[Any], Any]  # the last run's facts without their uses
    another_edit: Callable[[Path], None]


ROUTES = [
    Route(
        "py_ws",
        "python",
        "scip-python",
        "shapes",
        py_changes,
        "indexer.languages.python.incremental",
        lambda previous: msgspec.structs.replace(previous, uses=()),
        lambda repo: edit(
            repo / "src" / "shapes" / "circle.py",
            "def circle_area(",
            "def unit_circle() -> float:\n    return circle_area(1.0)\n\n\ndef circle_area(",
        ),
    ),
    Route(
        "go_ws",
        "go",
        "go/types",
        "m",
        go_changes,
        "indexer.languages.go.incremental",
        lambda previous: previous.__class__(analyzer_version=previous.analyzer_version),
        lambda repo: edit(
            repo / "c" / "c.go", "func Size", "func Measure(s Sizer) int { return Size(s) }\n\nfunc Size"
        ),
    ),
    Route(
        "ts_ws",
        "typescript",
        "scip-typescript",
        "shapes",
        ts_changes,
        "indexer.languages.typescript.incremental",
        lambda previous: msgspec.structs.replace(previous, uses=()),
        lambda repo: edit(
            repo / "src" / "other.ts",
            "export function alone",
            "export function lonely(): number {\n  return 1;\n}\n\nexport function alone",
        ),
    ),
]


@pytest.mark.parametrize("route", ROUTES, ids=[r.language for r in ROUTES])
def test_every_scripted_change_ends_in_the_answers_of_a_full_rebuild(
    route: Route, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ws, repo = request.getfixturevalue(route.fixture)
    for label, change in route.changes(repo):
        change()
        run = ws.index()
        if label == "revert":  # the old bytes: every fact and the analyzer run come from the cache
            assert run.names == ["exact"] and run.report.index[route.language]["analyzer_cache_hits"] == 1, label
        else:
            assert run.names == ["candidate", "exact"], label
            assert run.report.index[route.language]["analyzer_incremental"] == 1, label
        assert_like_a_full_rebuild(ws, tmp_path)


@pytest.mark.parametrize("route", ROUTES, ids=[r.language for r in ROUTES])
def test_verify_mode_checks_every_incremental_run_against_a_whole_one(
    route: Route, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, repo = request.getfixturevalue(route.fixture)
    for label, change in route.changes(repo)[:4]:
        change()
        run = ws.index("verify")
        assert run.names == ["exact"] and run.report.index[route.language]["analyzer_incremental"] == 1, label
    # a wrong incremental route is caught, not published
    module = importlib.import_module(route.module)
    real = module.update
    monkeypatch.setattr(module, "update", lambda previous, *a, **k: real(route.forget(previous), *a, **k))
    route.another_edit(repo)
    with pytest.raises(
        FactCacheDisagreement, match=f"incremental {route.analyzer} run of {route.repository} disagrees"
    ):
        ws.index("verify")


def test_typescript_the_monorepo_fixture_ends_in_the_answers_of_a_full_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Projects with references, a paths alias and a JavaScript file: the candidate stage and the exact one."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    repo = copy_fixture("ts_monorepo", tmp_path)
    ws.register("mono", repo, "typescript", "javascript")
    assert ws.index().names == ["exact"]
    main = repo / "packages" / "app" / "src" / "main.ts"
    math = repo / "packages" / "core" / "src" / "math.ts"
    original = math.read_text()
    changes: list[tuple[str, Callable[[], object]]] = [
        (
            "add a caller",
            lambda: main.write_text(
                main.read_text() + "\nexport function again(): number {\n"
                "  return new Calculator().twice(square(1));\n}\n"
            ),
        ),
        ("rename", lambda: edit(math, "twice(a: number)", "double(a: number)")),
        ("edit a comment", lambda: edit(math, "export class Calculator", "// adds numbers\nexport class Calculator")),
        ("revert", lambda: math.write_text(original)),
    ]
    for label, change in changes:
        change()
        run = ws.index()
        assert run.names[-1] == "exact" and run.report.published, label
        if label == "add a caller":
            assert run.names == ["candidate", "exact"]
            with ws.generation(run.stages[0].result.name) as gen:
                assert "packages/app/src/main.ts" in pending(gen, "mono")
                assert (
                    callers(gen, "packages.core.src.math.square").get("packages.app.src.main.again")
                    == Confidence.CANDIDATE
                )
                assert callers(gen, "packages.core.src.math.Calculator.twice") == {
                    "scripts.report.report": Confidence.EXACT_TYPECHECKED
                }  # carried over from the exact run
        assert_like_a_full_rebuild(ws, tmp_path)
