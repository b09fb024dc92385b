"""Fresh after every edit, with the real analyzers: a CANDIDATE generation first, then the exact one, which
equals a full rebuild after every scripted change (add a caller, rename, delete a file, edit a comment,
revert). Go's exact pass re-analyses only the changed packages and their importers; verify mode checks it
against a whole run.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer import incremental
from indexer.fact_cache import FactCacheDisagreement
from indexer.watch import watch_and_index
from snapshot_format.reader import Generation
from snapshot_format.vocab import Confidence, EdgeKind
from tests.fresh_kit import Run, Workspace, answers, differences, full_rebuild
from tests.helpers import copy_fixture, write_repo

pytestmark = pytest.mark.analyzers

GO_MODULE = {
    "go.mod": "module example.com/m\n\ngo 1.21\n",
    "a/a.go": (
        "package a\n\n// Store keeps values.\ntype Store struct{ items []string }\n\n"
        "// Put adds a value.\nfunc (s *Store) Put(v string) { s.items = append(s.items, v) }\n\n"
        "// Len counts values.\nfunc (s *Store) Len() int { return len(s.items) }\n\n"
        "func Helper() int { return 1 }\n"
    ),
    "a/a_test.go": (
        'package a\n\nimport "testing"\n\nfunc TestPut(t *testing.T) {\n\ts := &Store{}\n\ts.Put("y")\n'
        "\tif s.Len() != 1 {\n\t\tt.Fatal(Helper())\n\t}\n}\n"
    ),
    "b/b.go": (
        'package b\n\nimport "example.com/m/a"\n\nfunc Use() int {\n\ts := &a.Store{}\n\ts.Put("x")\n'
        "\treturn s.Len() + a.Helper()\n}\n"
    ),
    "c/c.go": "package c\n\n// Sizer is anything with a length.\ntype Sizer interface{ Len() int }\n\n"
    "func Size(s Sizer) int { return s.Len() }\n",
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


def pending(gen: Generation, repository: str) -> set[str]:
    return {f.path for f in gen.files(repository) if f.analysis == "pending"}


def assert_like_a_full_rebuild(ws: Workspace, tmp_path: Path) -> None:
    with ws.current() as gen:
        got = answers(gen)
        assert not pending(gen, ws.repositories[0][0])
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


@pytest.fixture
def go_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    repo = write_repo(tmp_path / "m", GO_MODULE)
    ws.register("m", repo, "go")
    assert ws.index().names == ["exact"]
    return ws, repo


def go_changes(repo: Path) -> list[tuple[str, Callable[[], object]]]:
    """The scripted change sets, in order: each is applied to the module, then it is re-indexed."""
    original = {rel: (repo / rel).read_text() for rel in GO_MODULE}

    def revert() -> None:
        for rel, text in original.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)

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


def test_go_every_scripted_change_ends_in_the_answers_of_a_full_rebuild(
    go_ws: tuple[Workspace, Path], tmp_path: Path
) -> None:
    ws, repo = go_ws
    for label, change in go_changes(repo):
        change()
        run = ws.index()
        if label == "revert":  # the old bytes: every fact and the analyzer run come from the cache
            assert run.names == ["exact"] and run.report.index["go"]["analyzer_cache_hits"] == 1, label
        else:
            assert run.names == ["candidate", "exact"], label
            assert run.report.index["go"]["analyzer_incremental"] == 1, label
        assert_like_a_full_rebuild(ws, tmp_path)


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
        assert analysis.mode == "pending" and "1 of 5 files (d/d.go)" in analysis.reason
    with ws.generation(exact.result.name) as gen:
        assert callers(gen, "Use") == {"Top": Confidence.EXACT_TYPECHECKED, "Again": Confidence.EXACT_TYPECHECKED}
        assert not pending(gen, "m")


def test_go_verify_mode_checks_every_incremental_run_against_a_whole_one(
    go_ws: tuple[Workspace, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, repo = go_ws
    for label, change in go_changes(repo)[:4]:
        change()
        run = ws.index("verify")
        assert run.names == ["exact"] and run.report.index["go"]["analyzer_incremental"] == 1, label
    # a wrong incremental route is caught, not published
    from indexer.languages.go import incremental as go_incremental

    real = go_incremental.update
    monkeypatch.setattr(
        go_incremental,
        "update",
        lambda previous, *a, **k: real(previous.__class__(analyzer_version=previous.analyzer_version), *a, **k),
    )  # forgets the old uses
    edit(repo / "c" / "c.go", "func Size", "func Measure(s Sizer) int { return Size(s) }\n\nfunc Size")
    with pytest.raises(FactCacheDisagreement, match="incremental go/types run of m disagrees"):
        ws.index("verify")


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


# --- Python: scip-python over the whole repository in the exact stage ------------------------------------


@pytest.fixture
def py_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    repo = copy_fixture("pyrepo_a", tmp_path)
    ws.register("shapes", repo, "python")
    assert ws.index().names == ["exact"]
    return ws, repo


def test_python_every_scripted_change_ends_in_the_answers_of_a_full_rebuild(
    py_ws: tuple[Workspace, Path], tmp_path: Path
) -> None:
    ws, repo = py_ws
    shapes = repo / "src" / "shapes"
    pristine = tmp_path / "pristine"
    shutil.copytree(repo, pristine)
    changes: list[tuple[str, Callable[[], object]]] = [
        (
            "add a caller",
            lambda: edit(
                shapes / "report.py",
                "def larger_area(",
                "def square_only(side: float) -> float:\n    return Square(side).area()\n\n\ndef larger_area(",
            ),
        ),
        ("rename", lambda: edit(shapes / "square.py", "def area(self)", "def surface(self)")),
        ("delete a file", lambda: (shapes / "units.py").unlink()),
        ("edit a comment", lambda: edit(shapes / "circle.py", '"""', '# a comment\n"""')),
        ("revert", lambda: (shutil.rmtree(repo), shutil.copytree(pristine, repo))),
    ]
    for label, change in changes:
        change()
        run = ws.index()
        if label == "revert":
            assert run.names == ["exact"] and run.report.index["python"]["analyzer_cache_hits"] == 1, label
        else:
            assert run.names == ["candidate", "exact"], label
            with ws.generation(run.stages[0].result.name) as gen:
                waiting = pending(gen, "shapes")
                assert waiting and all(
                    f.analysis in ("exact", "pending") for f in gen.files("shapes") if f.status != "skipped"
                ), label
                if label == "add a caller":
                    assert (
                        callers(gen, "shapes.square.Square.area")["shapes.report.square_only"] == Confidence.CANDIDATE
                    )
                if label == "edit a comment":
                    assert waiting == {"src/shapes/circle.py"}  # nothing else can change with a comment
        assert_like_a_full_rebuild(ws, tmp_path)


# --- TypeScript: scip-typescript over the whole repository in the exact stage ------------------------------


def test_typescript_scripted_changes_end_in_the_answers_of_a_full_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
