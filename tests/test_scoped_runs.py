"""An edit costs its repositories (issue 24): a run started by a change set rebuilds the repositories it
touches and those linked to them; every other layer is carried over as the same file, and the generation
answers as a whole re-index of the same tree does.

Dart repositories (no exact analyzer: tree-sitter candidates) keep these runs free of analyzer
subprocesses: the scope is the pipeline's, not a language's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.config import load
from indexer.progress import Progress
from indexer.run import run_index
from server.tools import READ_TOOLS
from snapshot_format.vocab import Confidence
from tests.fresh_kit import Workspace, answers, differences, full_rebuild
from tests.helpers import copy_fixture

LONELY = """name: lonely
description: A package nobody registered uses.
version: 0.1.0
environment:
  sdk: ">=3.0.0 <4.0.0"
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    ws.register("geo", copy_fixture("dart_geo", tmp_path), "dart")
    ws.register("app", copy_fixture("dart_app", tmp_path), "dart")
    lonely = tmp_path / "lonely"
    (lonely / "lib").mkdir(parents=True)
    (lonely / "pubspec.yaml").write_text(LONELY)
    (lonely / "lib" / "lonely.dart").write_text("int alone() => 1;\n")
    ws.register("lonely", lonely, "dart")
    assert ws.index().names == ["exact"]
    return ws


def _scoped(ws: Workspace, *paths: Path) -> tuple[list[Progress], object]:
    events: list[Progress] = []
    report, result = run_index(
        load(ws.layout.config_path), ws.layout, progress=events.append, scope_paths=frozenset(str(p) for p in paths)
    )
    assert report.passed
    return events, result


def _inodes(ws: Workspace) -> dict[str, int]:
    with ws.current() as gen:
        return {e.repository: (gen.path / e.directory / "data.mdb").stat().st_ino for e in gen.manifest.layers}


def test_an_edit_to_an_unlinked_repository_rebuilds_it_alone_and_carries_the_other_layers(
    ws: Workspace, tmp_path: Path
) -> None:
    before = _inodes(ws)
    source = tmp_path / "lonely" / "lib" / "lonely.dart"
    source.write_text("int alone() => 1;\n\nint together() => alone() + 1;\n")
    events, _result = _scoped(ws, source)
    scope = [p.detail for p in events if p.phase == "scope"]
    assert scope == ["rebuilding lonely; carried over unchanged: geo, app"]
    assert {p.repository for p in events if p.phase == "discover"} == {"lonely"}
    after = _inodes(ws)
    assert after["geo"] == before["geo"] and after["app"] == before["app"]  # the same files
    assert after["lonely"] != before["lonely"]
    ran = [p.detail for p in events if p.phase == "analyzers"]
    assert ran == ["none ran: every analyzer run came from the fact cache"]
    with ws.current() as gen:
        assert gen.symbols_by_name("together")
        gen.verify_digest()
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


def test_an_edit_to_a_provider_rebuilds_its_consumer_and_nothing_else(ws: Workspace, tmp_path: Path) -> None:
    before = _inodes(ws)
    shapes = tmp_path / "dart_geo" / "lib" / "src" / "shapes.dart"
    shapes.write_text(shapes.read_text() + "\nint extraShape() => 3;\n")
    events, _result = _scoped(ws, shapes)
    assert [p.detail for p in events if p.phase == "scope"] == [
        "first geo; carried over unchanged: app, lonely",  # no CANDIDATE stage without an analyzer to wait for
        # geo declares one more function, which app does not name: what app sees of geo is the same
        "rebuilding geo; carried over unchanged: app, lonely",
    ]
    assert _inodes(ws)["lonely"] == before["lonely"] and _inodes(ws)["app"] == before["app"]
    with ws.current() as gen:
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


def test_a_body_only_edit_in_a_provider_rebuilds_it_alone_and_keeps_its_consumer_layer(
    ws: Workspace, tmp_path: Path
) -> None:
    """What a consumer's resolver sees of its provider is its declarations (its interface): an edit inside a
    function body changes none of them, so the consumer's layer and its edges into the provider are carried."""
    before = _inodes(ws)
    shapes = tmp_path / "dart_geo" / "lib" / "src" / "shapes.dart"
    text = shapes.read_text()
    assert "3.14 * radius * radius" in text
    shapes.write_text(text.replace("3.14 * radius * radius", "3.14159 * radius * radius", 1))
    events, _result = _scoped(ws, shapes)
    assert [p.detail for p in events if p.phase == "scope"] == [
        "first geo; carried over unchanged: app, lonely",
        "rebuilding geo; carried over unchanged: app, lonely",
    ]
    after = _inodes(ws)
    assert (after["app"], after["lonely"]) == (before["app"], before["lonely"]) and after["geo"] != before["geo"]
    with ws.current() as gen:
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


def test_a_declaration_the_consumer_names_changes_what_it_sees_and_it_is_bound_again(
    ws: Workspace, tmp_path: Path
) -> None:
    """app calls Circle's area(): a Circle that no longer declares it changes what app's resolver sees of geo, so
    app is bound again in the exact stage (Dart has no analyzer to run again), and the answers are a whole
    re-index's."""
    before = _inodes(ws)
    shapes = tmp_path / "dart_geo" / "lib" / "src" / "shapes.dart"
    text = shapes.read_text()
    old = "  @override\n  double area() => 3.14 * radius * radius;\n"
    assert old in text
    shapes.write_text(text.replace(old, "  double surface() => 3.14 * radius * radius;\n", 1))
    events, _result = _scoped(ws, shapes)
    assert [p.detail for p in events if p.phase == "scope"][-2:] == [
        "rebuilding geo; carried over unchanged: app, lonely",
        "binding again geo, app; carried over unchanged: lonely",
    ]
    assert _inodes(ws)["lonely"] == before["lonely"]  # app's own layer may be the same: its edges into geo are links
    with ws.current() as gen:
        gone = [s for s in gen.symbols_by_name("area", "geo") if s.qualified_name.startswith("Circle")]
        assert not gone
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


def test_a_config_edit_widens_a_scoped_run_to_the_repositories_whose_configuration_changed(
    ws: Workspace, tmp_path: Path
) -> None:
    """kivgraph.toml is read again by every run: a repository whose exclude changed since its layer was built is
    rebuilt too (its layer carried as it was would still hold the excluded file), the others are not."""
    extra = tmp_path / "lonely" / "lib" / "extra.dart"
    extra.write_text("int extra() => 2;\n")
    ws.index()
    with ws.current() as gen:
        assert gen.file("lonely", "lib/extra.dart") is not None
    config = ws.layout.config_path.read_text()
    marker = f'path = "{tmp_path / "lonely"}"\n'
    assert marker in config
    ws.layout.config_path.write_text(config.replace(marker, marker + 'exclude = ["lib/extra.dart"]\n'))
    before = _inodes(ws)
    source = tmp_path / "dart_geo" / "lib" / "src" / "shapes.dart"
    source.write_text(source.read_text().replace("3.14 * radius * radius", "3.14159 * radius * radius"))
    events, _result = _scoped(ws, source)
    scope = [p.detail for p in events if p.phase == "scope"]
    assert scope[-1] == "rebuilding geo, lonely; carried over unchanged: app", scope
    after = _inodes(ws)
    assert after["app"] == before["app"] and after["lonely"] != before["lonely"]
    with ws.current() as gen:
        assert gen.file("lonely", "lib/extra.dart") is None
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories, exclude={"lonely": ["lib/extra.dart"]}))
    events, _result = _scoped(ws, source)  # and then nothing changed
    assert _result is None
    # an [indexing] setting every repository is read with: the run is the whole set
    config = ws.layout.config_path.read_text()
    ws.layout.config_path.write_text(config.replace("[indexing]\n", "[indexing]\nmax_file_bytes = 500000\n", 1))
    source.write_text(source.read_text().replace("3.14159", "3.1416"))
    events, _result = _scoped(ws, source)
    assert _result is not None and not [p.detail for p in events if p.phase == "scope"]


def test_a_change_nobody_registered_owns_or_an_unchanged_file_is_not_scoped_wrongly(
    ws: Workspace, tmp_path: Path
) -> None:
    source = tmp_path / "lonely" / "lib" / "lonely.dart"
    events, result = _scoped(ws, source)  # saved again with the same bytes: nothing to publish
    assert result is None and any(p.phase == "unchanged" for p in events)
    outside = tmp_path / "elsewhere.dart"
    outside.write_text("int x() => 1;\n")
    report, _ = run_index(load(ws.layout.config_path), ws.layout, scope_paths=frozenset({str(outside)}))
    assert report.passed  # the whole set, as an unscoped run


def test_a_whole_read_rebuilds_only_what_changed_and_what_is_linked_to_it(ws: Workspace, tmp_path: Path) -> None:
    """``kivgraph index`` (no watch): every file is read and hashed, then only the changed part is rebuilt."""
    before = _inodes(ws)
    source = tmp_path / "lonely" / "lib" / "lonely.dart"
    source.write_text("int alone() => 2;\n")
    events: list[Progress] = []
    report, result = run_index(load(ws.layout.config_path), ws.layout, progress=events.append)
    assert report.passed and result is not None
    assert [p.detail for p in events if p.phase == "scope"] == ["rebuilding lonely; carried over unchanged: geo, app"]
    after = _inodes(ws)
    assert (after["geo"], after["app"]) == (before["geo"], before["app"]) and after["lonely"] != before["lonely"]
    with ws.current() as gen:
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))
    assert not ws.index().report.published  # and then nothing changed


@pytest.mark.analyzers
def test_a_watch_edit_to_a_provider_publishes_its_candidate_from_it_alone_then_rebuilds_its_consumer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CANDIDATE stage builds the changed provider alone (its consumer's layer and edges into it kept);
    the exact stage rebuilds both, and the answers are a whole re-index's."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    ws.register("pyrepo_a", copy_fixture("pyrepo_a", tmp_path), "python")
    ws.register("pyrepo_b", copy_fixture("pyrepo_b", tmp_path), "python")
    ws.register("lonely", copy_fixture("dart_geo", tmp_path), "dart")
    assert ws.index().names == ["exact"]
    before = _inodes(ws)
    units = tmp_path / "pyrepo_a" / "src" / "shapes" / "units.py"
    units.write_text(units.read_text() + "\n\ndef kivgraph_added(x):\n    return x\n")
    events: list[Progress] = []
    report, _result = run_index(
        load(ws.layout.config_path), ws.layout, progress=events.append, scope_paths=frozenset({str(units)})
    )
    # a declaration more that pyrepo_b does not name: what it sees of pyrepo_a is the same, it is not analysed
    assert report.passed and [s["stage"] for s in report.stages] == ["candidate", "exact"]
    assert [p.detail for p in events if p.phase == "scope"] == [
        "first pyrepo_a; carried over unchanged: pyrepo_b, lonely",
        "rebuilding pyrepo_a; carried over unchanged: pyrepo_b, lonely",
    ]
    candidate = ws.generation(report.stages[0]["generation"])  # type: ignore[arg-type]
    with candidate:
        kept = {
            e.repository: (candidate.path / e.directory / "data.mdb").stat().st_ino for e in candidate.manifest.layers
        }
        assert kept["pyrepo_b"] == before["pyrepo_b"] and kept["lonely"] == before["lonely"]
        assert candidate.symbols_by_name("kivgraph_added")
        circle = candidate.symbols_by_name("circle_area", "pyrepo_a")  # pyrepo_b's uses of it are kept
        assert circle and any(
            candidate.symbol(e.source).repository == "pyrepo_b"  # type: ignore[union-attr]
            for sym in circle
            for e in candidate.edges_in(sym.key)
        )
        # ... and the answers say they are from before the edit until the exact stage
        waiting = [{"repository": "pyrepo_b", "of": "pyrepo_a"}]
        for tool, arguments in [
            ("graph_status", {}),
            ("find_cross_repo_consumers", {"qualified_name": "shapes.circle.circle_area"}),
            ("find_references", {"qualified_name": "shapes.circle.circle_area"}),
        ]:
            assert READ_TOOLS[tool](candidate, arguments)["pending_exact"]["consumers"] == waiting, tool
        blast = READ_TOOLS["get_blast_radius"](candidate, {"qualified_name": "shapes.circle.circle_area"})
        assert blast["completeness"]["verdict"] == "LOWER_BOUND"
        assert [p["repository"] for p in blast["completeness"]["pending_consumers"]] == ["pyrepo_b"]
    ran = [p.detail for p in events if p.phase == "analyzers"]
    assert len(ran) == 1 and "ran scip-python on pyrepo_a" in ran[0] and "pyrepo_b" not in ran[0], ran
    assert _inodes(ws)["lonely"] == before["lonely"] and _inodes(ws)["pyrepo_b"] == before["pyrepo_b"]
    with ws.current() as gen:
        assert "pending_exact" not in READ_TOOLS["graph_status"](gen, {})
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


LIB_CORE = """\"\"\"The provider's core.\"\"\"


def scale(x: float) -> float:
    \"\"\"Twice x.\"\"\"
    return x * 2


def label(x):
    return x + 1


def spare() -> int:
    return 0


class Box:
    def __init__(self, x: int) -> None:
        self.x = x
"""

APP_MAIN = """\"\"\"The consumer.\"\"\"

from libpkg.core import Box, label, scale, spare


def run() -> float:
    return scale(1.0) + label(2) + spare() + Box(3).x
"""


def _python_pair(tmp_path: Path) -> tuple[Workspace, Path]:
    for name, package, files in (
        ("lib", "libpkg", {"__init__.py": "", "core.py": LIB_CORE}),
        ("app", "apppkg", {"__init__.py": "", "main.py": APP_MAIN}),
    ):
        root = tmp_path / name
        (root / package).mkdir(parents=True)
        (root / "pyproject.toml").write_text(f'[project]\nname = "{package}"\nversion = "0.1.0"\n')
        for path, text in files.items():
            (root / package / path).write_text(text)
    ws = Workspace(tmp_path / "home")
    ws.register("lib", tmp_path / "lib", "python")
    ws.register("app", tmp_path / "app", "python")
    assert ws.index().names == ["exact"]
    return ws, tmp_path / "lib" / "libpkg" / "core.py"


def _watch_edit(ws: Workspace, path: Path, text: str) -> tuple[list[str], list[str]]:
    """The scope and analyzers events of a watch run after ``path`` is written with ``text``, and its stages."""
    path.write_text(text)
    events: list[Progress] = []
    report, _result = run_index(
        load(ws.layout.config_path), ws.layout, progress=events.append, scope_paths=frozenset({str(path)})
    )
    assert report.passed
    return [p.detail for p in events if p.phase == "analyzers"], [str(s["stage"]) for s in report.stages]


def _cross_edges(ws: Workspace) -> set[tuple[str, str, int]]:
    with ws.current() as gen:
        out = set()
        for sym in gen.declarations("app", "apppkg/main.py"):
            for e in gen.edges_out(sym.key):
                target = gen.symbol(e.target)
                if target is not None and target.repository == "lib":
                    out.add((target.qualified_name, Confidence(e.confidence).name, e.line))
        return out


@pytest.mark.analyzers
def test_a_body_only_edit_in_a_provider_runs_its_analyzer_alone_and_keeps_the_consumer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scip-python states the same signatures of lib after an edit inside a function body: app's analysis is
    not run again, its layer is the same file, its edges into lib are the same, and the generation is a whole
    re-index's."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws, core = _python_pair(tmp_path)
    before, edges = _inodes(ws), _cross_edges(ws)
    assert {qn for qn, _c, _l in edges} >= {"libpkg.core.scale", "libpkg.core.label"}
    ran, stages = _watch_edit(ws, core, LIB_CORE.replace("return x * 2", "return x + x"))
    assert stages == ["candidate", "exact"]
    assert ran == ["ran scip-python on lib (incremental)"] or ran == ["ran scip-python on lib (whole)"], ran
    assert _inodes(ws)["app"] == before["app"] and _cross_edges(ws) == edges
    with ws.current() as gen:
        assert next(a for a in gen.repository("app").analyses).mode == "exact"  # type: ignore[union-attr]
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


@pytest.mark.analyzers
@pytest.mark.parametrize(
    ("what", "before_text", "after_text"),
    [
        ("a signature", "def scale(x: float) -> float:", "def scale(x: float, by: float = 2.0) -> float:"),
        # no annotation: the return type scip-python states is the one it infers from the body
        ("an inferred return type", "    return x + 1\n", "    return str(x)\n"),
        # app writes Box, never __init__: a constructor is seen by every consumer
        (
            "a constructor's signature",
            "def __init__(self, x: int) -> None:",
            "def __init__(self, x: int, y: int = 0) -> None:",
        ),
    ],
)
def test_a_changed_interface_runs_the_consumer_in_the_stage_that_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, before_text: str, after_text: str
) -> None:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws, core = _python_pair(tmp_path)
    assert before_text in LIB_CORE, what
    ran, stages = _watch_edit(ws, core, LIB_CORE.replace(before_text, after_text, 1))
    assert stages == ["candidate", "exact", "exact"], what
    assert "on app" not in ran[0].split(";")[0] and ran[0].endswith(
        "; next: scip-python on app (the interface of lib changed)"
    ), ran
    assert ran[1] == "ran scip-python on app (whole)" or ran[1] == "ran scip-python on app (incremental)", ran
    with ws.current() as gen:
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


@pytest.mark.analyzers
def test_a_removed_function_the_consumer_uses_is_named_as_unresolved_never_a_dangling_edge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws, core = _python_pair(tmp_path)
    published: list[str] = []
    core.write_text(LIB_CORE.replace("def spare() -> int:\n    return 0\n", ""))
    report, _ = run_index(
        load(ws.layout.config_path),
        ws.layout,
        scope_paths=frozenset({str(core)}),
        on_published=lambda stage: published.append(stage.result.name),
    )
    assert report.passed and [s["stage"] for s in report.stages] == ["candidate", "exact", "exact"]
    for name in published:  # every publication on the way: no edge to spare, a row of app naming it
        with ws.generation(name) as gen:
            gen.verify_digest()
            assert not gen.symbols_by_name("spare")
            rows = [u for u in gen.unresolved_by_name("spare") if u.repository == "app"]
            assert rows and rows[0].path == "apppkg/main.py", name
    with ws.generation(published[1]) as middle:  # the exact stage of lib: app bound again, pending its analyzer
        (analysis,) = middle.repository("app").analyses  # type: ignore[union-attr]
        assert analysis.mode == "pending" and "the interface of lib changed" in analysis.reason
        status = READ_TOOLS["graph_status"](middle, {})
        assert status["pending_exact"]["files"] >= 1 and "app:apppkg/main.py" in status["pending_exact"]["paths"]
    assert "libpkg.core.spare" not in {qn for qn, _c, _l in _cross_edges(ws)}
    with ws.current() as gen:
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))


@pytest.mark.analyzers
def test_a_go_edit_costs_its_repository_and_the_ones_that_import_it_not_every_go_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """go/types reads a repository's own files and those of the registered modules its imports reach: an edit
    in a Go repository nothing imports leaves every other Go repository's run cached and its layer carried,
    while an edit in a provider reruns its importer (found by benchmarks/results/large-layers.md: one edit in
    gods rebuilt all five Go repositories)."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    repos = {
        "lib": {
            "go.mod": "module example.com/lib\n\ngo 1.21\n",
            "lib.go": "package lib\n\nfunc F() int { return 1 }\n",
        },
        "app": {
            "go.mod": "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib v0.0.0\n",
            "app.go": 'package app\n\nimport "example.com/lib"\n\nfunc G() int { return lib.F() }\n',
        },
        "alone": {
            "go.mod": "module example.com/alone\n\ngo 1.21\n",
            "alone.go": "package alone\n\nfunc H() int { return 3 }\n",
        },
    }
    for name, files in repos.items():
        root = tmp_path / name
        root.mkdir()
        for path, text in files.items():
            (root / path).write_text(text)
        ws.register(name, root, "go")
    assert ws.index().names == ["exact"]
    before = _inodes(ws)

    def edit(path: Path, text: str) -> list[str]:
        path.write_text(text)
        events: list[Progress] = []
        report, _result = run_index(load(ws.layout.config_path), ws.layout, progress=events.append)
        assert report.passed
        return [p.detail for p in events if p.phase in ("scope", "analyzers")]

    details = edit(tmp_path / "alone" / "alone.go", "package alone\n\nfunc H() int { return 4 }\n")
    assert "rebuilding alone; carried over unchanged: lib, app" in details, details
    after = _inodes(ws)
    assert (after["lib"], after["app"]) == (before["lib"], before["app"]) and after["alone"] != before["alone"]
    # a body-only edit in lib: go/types prints the same exported declarations, app is carried, not analysed
    details = edit(tmp_path / "lib" / "lib.go", "package lib\n\nfunc F() int { return 2 }\n")
    assert details[-1].startswith("ran go/types on lib") and "app" not in details[-1], details
    assert _inodes(ws)["app"] == after["app"] and _inodes(ws)["alone"] == after["alone"]
    # a signature: app is analysed again, in the stage that follows
    details = edit(tmp_path / "lib" / "lib.go", "package lib\n\nfunc F() int64 { return 2 }\n")
    assert any(d.endswith("; next: go/types on app (the interface of lib changed)") for d in details), details
    assert any(
        d.startswith("rebuilding") and "app" in d and "lib" in d and "alone" not in d.split(";")[0] for d in details
    ), details
    assert details[-1].startswith("ran go/types on app"), details
    assert _inodes(ws)["alone"] == after["alone"]
    with ws.current() as gen:
        got = answers(gen)
    assert not differences(got, full_rebuild(tmp_path, ws.repositories))
