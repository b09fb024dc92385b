"""Fault suite: a tree that changes between the run's read and its publication (``indexer.staleness``).

An edit is saved and reverted while the run that read the edit is in its exact pass, or right after it;
no generation published after the revert may hold the edit, the generation that serves in the end is what a
full rebuild of the reverted tree gives, and the fact cache keeps no facts of one tree under the key of the
other. The changes land at scripted points (hooks around the real analyzer and the real publication), so
timing decides nothing.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexer import run as index_run
from indexer import supersede
from indexer.config import load
from indexer.fact_cache import FactCache
from indexer.fingerprint import Inputs, run_inputs
from indexer.languages import registry
from indexer.languages.python.adapter import ScipPythonAdapter
from indexer.languages.spec import AnalyzerFailed
from indexer.pipeline import Build, Timer, discover_phase, extract_phase, git_state_of
from indexer.run import run_index
from indexer.staleness import TreeKeptChanging, tree_changes
from indexer.watch import watch_and_index
from kivgraph_cli.main import cli
from snapshot_format.layout import list_generations, read_current
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence, EdgeKind
from tests.fault_kit import SOURCE, indexed_home, layout_of, spawn_index, wait_stopped
from tests.fresh_kit import Run, Workspace, assert_like_a_full_rebuild, indexed_copy
from tests.helpers import copy_fixture, kept_signal_handlers, write_repo

MODIFIED = 2  # watchfiles.Change.modified

CALLER = "def square_only(side: float) -> float:\n    return Square(side).area()\n\n\ndef larger_area("


def add_caller(report: Path) -> None:
    """The edit: a new function in report.py calling Square.area."""
    report.write_text(report.read_text().replace("def larger_area(", CALLER, 1))


class Revert:
    """Puts a file back as it was, once, and remembers the newest generation id when it did."""

    def __init__(self, ws: Workspace, path: Path) -> None:
        self.ws, self.path, self.original = ws, path, path.read_text()
        self.at: int | None = None

    def __call__(self) -> None:
        if self.at is not None:
            return
        self.path.write_text(self.original)
        self.at = max((gid for gid, _fmt, _path in list_generations(self.ws.layout)), default=0)


def at_publication(monkeypatch: pytest.MonkeyPatch, nth: int | None, action: Callable[[], object]) -> None:
    """Run ``action`` when the ``nth`` publication of the test (every one: None) has built its generation,
    before the staleness check and before CURRENT names it."""
    real = index_run.publish
    count = itertools.count(1)

    def publish(layout: Any, content: Any, **options: Any) -> Any:
        n = next(count)
        step = options.pop("on_step")

        def on_step(name: str) -> None:
            if name == "built" and nth in (None, n):
                action()
            step(name)

        return real(layout, content, on_step=on_step, **options)

    monkeypatch.setattr(index_run, "publish", publish)


def around_analyzer(
    monkeypatch: pytest.MonkeyPatch,
    before: Callable[[], object] = lambda: None,
    after: Callable[[], object] = lambda: None,
) -> None:
    """Run ``before`` as scip-python is about to read the tree and ``after`` once it has (its whole run and its
    incremental route alike)."""
    analyze, update = ScipPythonAdapter.analyze, ScipPythonAdapter.update

    def analyzed(self: ScipPythonAdapter, repo: Any, corpus: Any, *, timeout: float) -> Any:
        before()
        facts = analyze(self, repo, corpus, timeout=timeout)
        after()
        return facts

    def updated(self: ScipPythonAdapter, previous: Any, changed: Any, repo: Any, corpus: Any, *, timeout: float) -> Any:
        before()
        facts = update(self, previous, changed, repo, corpus, timeout=timeout)
        if facts is not None:
            after()
        return facts

    monkeypatch.setattr(ScipPythonAdapter, "analyze", analyzed)
    monkeypatch.setattr(ScipPythonAdapter, "update", updated)


def once(action: Callable[[], object]) -> Callable[[], None]:
    done: list[bool] = []

    def run() -> None:
        if not done:
            done.append(True)
            action()

    return run


@pytest.fixture
def py_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    """The shapes fixture, registered and indexed once with scip-python."""
    return indexed_copy(tmp_path, monkeypatch, "pyrepo_a", "shapes", "python")


def report_of(repo: Path) -> Path:
    return repo / "src" / "shapes" / "report.py"


def assert_nothing_after_holds_the_edit(ws: Workspace, runs: list[Run], revert: Revert) -> None:
    assert revert.at is not None, "the revert was never saved"
    after = [s.result.name for run in runs for s in run.stages if s.result.generation_id > revert.at]
    for name in after:
        with ws.generation(name) as gen:
            assert not gen.symbols_by_name("square_only"), f"{name}, published after the revert, holds the edit"
    assert not [p for p in ws.layout.generations_dir.iterdir() if p.name.startswith(".tmp-")]


def square_only_callers(ws: Workspace) -> dict[str, int]:
    with ws.current() as gen:
        (area,) = gen.symbols_by_qualified_name("shapes.square.Square.area")
        return {
            gen.symbol(e.source).qualified_name: e.confidence  # type: ignore[union-attr]
            for e in gen.edges_in(area.key, [EdgeKind.CALLS_DIRECT])
        }


MOMENTS = {
    # where the revert lands -> the result the run drops
    "before the analyzer reads the tree": "analyzer",
    "after the analyzer read the tree, before it ends": "analyzer",
    "after the exact pass, before its generation is published": "exact",
    "before the CANDIDATE generation is published": "candidate",
}


@pytest.mark.analyzers
@pytest.mark.parametrize(
    "moment", list(MOMENTS), ids=["analyzer-reads", "analyzer-read", "exact-publication", "candidate-publication"]
)
def test_an_edit_reverted_during_or_right_after_the_exact_pass_is_in_no_generation_published_after_the_revert(
    py_ws: tuple[Workspace, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    ws, repo = py_ws
    report = report_of(repo)
    revert = Revert(ws, report)
    add_caller(report)
    if moment == "before the analyzer reads the tree":
        around_analyzer(monkeypatch, before=revert)
    elif moment == "after the analyzer read the tree, before it ends":
        around_analyzer(monkeypatch, after=revert)
    elif moment == "after the exact pass, before its generation is published":
        at_publication(monkeypatch, 2, revert)  # the CANDIDATE generation is the first
    else:
        at_publication(monkeypatch, 1, revert)
    run = ws.index()
    assert_nothing_after_holds_the_edit(ws, [run], revert)
    (dropped,) = run.report.stale
    assert dropped["stage"] == MOMENTS[moment]
    assert dropped["changed"] == ["shapes:src/shapes/report.py"]
    assert_like_a_full_rebuild(ws, tmp_path)
    if dropped["stage"] == "analyzer":
        # Nothing the analyzer read was cached under the key of the tree the run had read: the edit, saved
        # again, gets its own exact caller.
        monkeypatch.undo()
        monkeypatch.setenv("KIVGRAPH_HOME", str(ws.root))
        add_caller(report)
        assert ws.index().names[-1] == "exact"
        assert square_only_callers(ws)["shapes.report.square_only"] == Confidence.EXACT_TYPECHECKED


@pytest.mark.analyzers
def test_under_watch_an_edit_reverted_before_its_exact_generation_is_published_never_serves(
    py_ws: tuple[Workspace, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, repo = py_ws
    report = report_of(repo)
    revert = Revert(ws, report)
    at_publication(monkeypatch, 2, revert)
    runs: list[Run] = []

    def reindex() -> int:
        runs.append(ws.index())
        return 0

    def changes() -> Iterator[set[tuple[int, str]]]:
        add_caller(report)
        yield {(MODIFIED, str(report))}
        yield {(MODIFIED, str(report))}  # the revert, saved while the run above published

    watch_and_index(ws.layout, reindex, changes=changes(), watching=lambda _n: None)
    assert_nothing_after_holds_the_edit(ws, runs, revert)
    first, second = runs
    assert [d["stage"] for d in first.report.stale] == ["exact"]
    assert first.names == ["candidate", "exact"]  # the edit's CANDIDATE one (before the revert), then the revert's
    assert not second.report.published  # the run after the revert read again already published it


@pytest.mark.analyzers
def test_under_watch_an_edit_put_back_while_a_rebuilds_analyzer_ran_is_heard_and_the_tree_read_again(
    py_ws: tuple[Workspace, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edit and its revert both land while the analyzer runs: the hashes are as read, but the analyzer
    read the edit. The watcher heard the edit, so the result is dropped all the same."""
    ws, repo = py_ws
    report = report_of(repo)
    original = report.read_text()
    heard: queue.Queue[set[tuple[int, str]] | None] = queue.Queue()
    handled = threading.Event()

    def batches(_stop: threading.Event) -> Iterator[set[tuple[int, str]]]:  # a scripted watcher
        while (batch := heard.get(timeout=300)) is not None:
            yield batch
            handled.set()

    def edit_heard() -> None:
        add_caller(report)
        heard.put({(MODIFIED, str(report))})
        assert handled.wait(60), "the listener did not handle the edit"  # it asks for the next batch then

    supersede.begin_run()
    stop = supersede.listen(batches, lambda _batch: True)
    try:
        around_analyzer(monkeypatch, before=once(edit_heard), after=once(lambda: report.write_text(original)))
        run = ws.index("refresh")  # a rebuild: no CANDIDATE generation, so no edit stops its analyzer
    finally:
        heard.put(None)
        stop()
    (dropped,) = run.report.stale
    assert dropped["stage"] == "analyzer"
    assert dropped["changed"] == [f"{report} (written while the analyzer ran, as the watcher heard)"]
    assert run.names == ["exact"]
    monkeypatch.undo()
    assert_like_a_full_rebuild(ws, tmp_path)


def test_a_tree_that_changes_under_every_read_fails_the_run_and_the_served_generation_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIVGRAPH_SCIP_PYTHON", "/nonexistent/scip-python")
    ws = Workspace(tmp_path / "home")
    repo = write_repo(tmp_path / "repo", SOURCE)
    ws.register("repo", repo, "python")
    ws.index()
    served = read_current(ws.layout)
    core = repo / "pkg" / "core.py"
    counter = itertools.count()
    at_publication(monkeypatch, None, lambda: core.write_text(f"def helper():\n    return {next(counter)}\n"))
    core.write_text("def helper():\n    return -1\n")
    with pytest.raises(TreeKeptChanging, match=r"3 reads.*repo:pkg/core\.py.*run kivgraph index again"):
        ws.index()
    assert read_current(ws.layout) == served
    assert not [p for p in ws.layout.generations_dir.iterdir() if p.name.startswith(".tmp-")]


def test_the_command_fails_on_a_tree_that_keeps_changing_and_a_watch_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles

    monkeypatch.setenv("KIVGRAPH_SCIP_PYTHON", "/nonexistent/scip-python")
    home = tmp_path / "home"
    monkeypatch.setenv("KIVGRAPH_HOME", str(home))
    repo = write_repo(tmp_path / "repo", SOURCE)
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(repo), "--languages", "python"]).exit_code == 0
    core = repo / "pkg" / "core.py"
    counter = itertools.count()
    at_publication(monkeypatch, None, lambda: core.write_text(f"def helper():\n    return {next(counter)}\n"))

    with kept_signal_handlers():
        once_more = runner.invoke(cli, ["index", "--json"])
    assert once_more.exit_code == 1
    result = json.loads(once_more.stdout.splitlines()[-1])["result"]
    assert not result["passed"] and "kept changing" in result["error"] and "repo:pkg/core.py" in result["error"]
    stale = [json.loads(line)["progress"] for line in once_more.stdout.splitlines() if '"phase":"stale"' in line]
    assert [(p["completed"], p["total"]) for p in stale] == [(1, 3), (2, 3), (3, 3)]
    assert "reading the tree again" in stale[0]["detail"] and "giving up" in stale[-1]["detail"]

    def no_more_changes(*_roots: object, **options: object) -> Iterator[set[tuple[int, str]]]:
        if "stop_event" not in options:
            yield set()  # the watcher is live; nothing else happens

    monkeypatch.setattr(watchfiles, "watch", no_more_changes)
    with kept_signal_handlers():
        watching = runner.invoke(cli, ["index", "--watch"])
    assert watching.exit_code == 0, watching.output
    assert "the watch goes on" in watching.stderr and "watching 1 repositories" in watching.stderr


@pytest.mark.e2e
def test_a_revert_saved_while_the_indexer_stood_before_publication_is_dropped_and_its_events_say_so(
    tmp_path: Path,
) -> None:
    home = indexed_home(tmp_path)
    served = read_current(layout_of(home))
    core = tmp_path / "repo" / "pkg" / "core.py"
    original = core.read_text()
    core.write_text(original + "\n\ndef edited():\n    return helper()\n")
    proc = spawn_index(home, "--json", KIVGRAPH_FAULT_STOP_AT="built")
    try:
        wait_stopped(proc.pid)  # the edited tree's generation is built, not yet checked nor named
        core.write_text(original)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    events = [json.loads(line) for line in out.decode().splitlines()]
    (stale,) = [e["progress"] for e in events if e["event"] == "progress" and e["progress"]["phase"] == "stale"]
    assert "repo:pkg/core.py changed since the run read the tree" in stale["detail"]
    result = events[-1]["result"]
    assert result["stale"] == [{"stage": "exact", "changed": ["repo:pkg/core.py"], "count": 1}]
    assert result["published"] is False and "nothing changed" in result["note"]  # the second read: as served
    assert read_current(layout_of(home)) == served
    with open_current(layout_of(home)) as gen:
        assert not gen.symbols_by_name("edited")


@pytest.mark.analyzers
def test_an_analyzer_never_runs_over_a_carried_repository_whose_files_on_disk_are_not_the_carried_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--repository shapes``: drawing is carried over, but its analyzer run is due (what it sees of its
    provider changed: ``Square``'s constructor, which it calls) and its files on disk were edited since. The run
    must not publish what scip-python reads there."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    ws = Workspace(tmp_path / "home")
    shapes, drawing = copy_fixture("pyrepo_a", tmp_path), copy_fixture("pyrepo_b", tmp_path)
    ws.register("shapes", shapes, "python")
    ws.register("drawing", drawing, "python")
    assert ws.index().names == ["exact"]
    with ws.current() as gen:
        before = {f.path: f.content_hash for f in gen.files("drawing")}
    canvas = drawing / "drawing" / "canvas.py"
    canvas.write_text(canvas.read_text() + "\n\ndef extra_canvas() -> Canvas:\n    return default_canvas()\n")
    square = shapes / "src" / "shapes" / "square.py"
    text = square.read_text().replace(
        "def __init__(self, side: float)", 'def __init__(self, side: float, unit: str = "m")'
    )
    square.write_text(text + "\n\ndef unit_square() -> Square:\n    return Square(1.0)\n")
    run_index(load(ws.layout.config_path), ws.layout, only=frozenset({"shapes"}))
    with ws.current() as gen:
        assert gen.symbols_by_name("unit_square") and not gen.symbols_by_name("extra_canvas")
        assert {f.path: f.content_hash for f in gen.files("drawing")} == before
        (analysis,) = gen.repository("drawing").analyses  # type: ignore[union-attr]
        assert analysis.mode == "fallback"
        assert "carried over" in analysis.reason and "drawing:drawing/canvas.py" in analysis.reason
        (shapes_analysis,) = gen.repository("shapes").analyses  # type: ignore[union-attr]
        assert shapes_analysis.mode == "exact"


# --- what the check sees: every kind of change, by content ----------------------------------------------


def _read(home: Path, cache: FactCache) -> tuple[Build, Inputs]:
    """One read of the registered tree, as a run makes it (discovery, hashes, git state, inputs)."""
    loaded = load(home / "kivgraph.toml")
    b = Build(loaded, cache, lambda _p: None, Timer())
    discover_phase(b)
    extract_phase(b)
    b.git = {w.name: git_state_of(w) for w in b.work}
    return b, run_inputs(b)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", *args], check=True)


def test_the_check_names_each_change_since_the_read_and_content_decides(tmp_path: Path) -> None:
    files = {**SOURCE, "web/app.ts": "export function greet(): string {\n  return 'hi';\n}\n", "tsconfig.json": "{}\n"}
    repo = write_repo(tmp_path / "repo", {k: v for k, v in files.items() if k != "tsconfig.json"})  # untracked
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "x")
    home = tmp_path / "home"
    home.mkdir()
    (home / "kivgraph.toml").write_text(
        f'version = 1\n\n[[repository]]\nname = "repo"\npath = "{repo}"\nlanguages = ["python", "typescript"]\n'
    )
    core, more = repo / "pkg" / "core.py", repo / "pkg" / "more.py"
    late = repo / "pkg" / "late.py"

    def nothing() -> None:
        return None

    def same_size_same_time() -> None:  # an edit that keeps the size and the modification time
        st = core.stat()
        core.write_text(SOURCE["pkg/core.py"].replace("1", "2"))
        os.utime(core, ns=(st.st_atime_ns, st.st_mtime_ns))

    changes: list[tuple[Callable[[], object], Callable[[], object], list[str]]] = [
        # (what the tree had when it was read, beyond the commit; what changed since; what the check names)
        (nothing, lambda: os.utime(core, (1, 1)), []),  # a touch: the same content
        (nothing, lambda: core.write_text(SOURCE["pkg/core.py"] + "# x\n"), ["repo:pkg/core.py"]),
        (nothing, same_size_same_time, ["repo:pkg/core.py"]),
        (nothing, lambda: late.write_text("x = 1\n"), ["repo:pkg/late.py (added)"]),
        (nothing, lambda: more.unlink(), ["repo:pkg/more.py (removed)"]),
        (
            lambda: late.write_text("x = 1\n"),
            lambda: (repo / ".gitignore").write_text("pkg/late.py\n"),
            ["repo:pkg/late.py (removed)"],
        ),  # an untracked file ignored since
        (
            nothing,
            lambda: _git(repo, "commit", "-q", "--allow-empty", "-m", "y"),
            ["repo (its git commit, branch or dirty state)"],
        ),
    ]
    adapter = registry.adapter_for("typescript")
    try:
        assert adapter is not None
        adapter.identity()
        changes.append(
            (
                nothing,
                lambda: (repo / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n'),
                ["repo (the inputs of its typescript analyzer)"],
            )
        )
    except AnalyzerFailed:
        pass  # no scip-typescript here: its inputs are not part of the fingerprint
    with FactCache(tmp_path / "cache") as cache:
        for before, change, expected in changes:
            write_repo(repo, files)  # the tree as committed, before each change
            late.unlink(missing_ok=True)
            (repo / ".gitignore").unlink(missing_ok=True)
            before()
            b, inputs = _read(home, cache)
            change()
            assert tree_changes(b, inputs, run_inputs) == expected, expected
