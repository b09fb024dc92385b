"""The indexer lock is taken once per run, by whoever starts it, and passed down to what publishes under it
(issue 26): a run takes it once however many generations it publishes, the CLI's run once, and a second acquisition inside the
process that holds it is refused as the bug it is, never waited on.

Dart repositories (no Dart SDK here: tree-sitter candidates) keep the fast runs free of analyzer subprocesses;\na run with a CANDIDATE stage in front needs an analyzer (scip-python).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.publish import PublishLock, holding
from kivgraph_cli.main import cli
from snapshot_format.layout import resolve_layout
from tests.fresh_kit import Workspace, indexed_copy

PUBSPEC = "name: shapes\nversion: 0.1.0\nenvironment:\n  sdk: '>=3.0.0 <4.0.0'\n"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "shapes"
    (repo / "lib").mkdir(parents=True)
    (repo / "pubspec.yaml").write_text(PUBSPEC)
    (repo / "lib" / "shapes.dart").write_text("int area() => 1;\n\nint twice() => area() * 2;\n")
    ws = Workspace(tmp_path / "home")
    ws.register("shapes", repo, "dart")
    return ws


def _count_acquisitions(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    taken: list[Path] = []
    enter = PublishLock.__enter__

    def counted(self: PublishLock) -> PublishLock:
        taken.append(self.path)
        return enter(self)

    monkeypatch.setattr(PublishLock, "__enter__", counted)
    return taken


def test_a_run_takes_the_lock_once(ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _count_acquisitions(monkeypatch)
    for source in ("int area() => 1;\n", "int area() => 2;\n"):
        (tmp_path / "shapes" / "lib" / "shapes.dart").write_text(source)
        taken.clear()
        assert ws.index().names == ["exact"]
        assert taken == [ws.layout.publish_lock]
    assert not ws.layout.publish_lock.read_text()  # released, its holder cleared


@pytest.mark.analyzers
def test_a_run_of_two_publications_takes_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, repo = indexed_copy(tmp_path, monkeypatch, "pyrepo_a", "shapes", "python")
    taken = _count_acquisitions(monkeypatch)
    square = repo / "src" / "shapes" / "square.py"
    square.write_text(square.read_text().replace("def area(self)", "def surface(self)"))
    assert ws.index().names == ["candidate", "exact"]
    assert taken == [ws.layout.publish_lock]


def test_the_cli_takes_it_once_and_the_run_under_it_does_not_again(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = _count_acquisitions(monkeypatch)
    result = CliRunner().invoke(cli, ["index", "--config", str(ws.layout.config_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert taken == [ws.layout.publish_lock]


def test_taking_the_lock_again_in_the_process_that_holds_it_is_refused(tmp_path: Path) -> None:
    layout = resolve_layout(str(tmp_path / "kivgraph.toml"), str(tmp_path / "state"))
    with PublishLock(layout) as lock:
        with pytest.raises(RuntimeError, match="already held by this process: pass the held lock down"):
            PublishLock(layout).__enter__()
        with holding(layout, lock) as passed:  # passed down: no second acquisition
            assert passed is lock
    assert not lock.held
    other = resolve_layout(str(tmp_path / "other" / "kivgraph.toml"), str(tmp_path / "other" / "state"))
    with PublishLock(other) as theirs, pytest.raises(RuntimeError, match="does not hold"), holding(layout, theirs):
        pass
    with pytest.raises(RuntimeError, match="does not hold"), holding(layout, PublishLock(layout)):
        pass  # a lock never taken
