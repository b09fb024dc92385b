"""Fresh after every edit (issue 15): nothing published for an unchanged tree; content hashes decide.

Runs go through the real pipeline in this process (``tests.fresh_kit``); the exact analyzer is switched
off here (the staged publication with analyzers is in tests/test_fresh_exact.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from indexer.watch import watch_and_index
from tests.fresh_kit import Workspace, answers, full_rebuild
from tests.helpers import write_repo

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n",
    "pkg/more.py": "from pkg.core import helper\n\n\ndef more():\n    return helper() + 1\n",
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KIVGRAPH_SCIP_PYTHON", str(tmp_path / "no-analyzer"))
    workspace = Workspace(tmp_path / "home")
    workspace.register("repo", write_repo(tmp_path / "repo", FILES), "python")
    return workspace


def test_an_unchanged_tree_is_not_published_again_and_the_run_says_so(ws: Workspace) -> None:
    first = ws.index()
    assert first.names == ["exact"] and first.report.published
    again = ws.index()
    assert again.stages == [] and not again.report.published
    assert again.report.generation == "g000001.v1" and "nothing changed since g000001.v1" in again.report.note
    assert again.report.counts["files"] == 3 and again.report.index["python"]["files"] == 3
    assert ws.generations() == ["g000001.v1"]


def test_a_touched_file_with_the_same_bytes_publishes_nothing(ws: Workspace, tmp_path: Path) -> None:
    ws.index()
    core = tmp_path / "repo" / "pkg" / "core.py"
    os.utime(core, ns=(core.stat().st_atime_ns + 10**9, core.stat().st_mtime_ns + 10**9))
    core.write_bytes(core.read_bytes())  # rewritten, same content: only the mtime moved
    assert not ws.index().report.published
    assert ws.generations() == ["g000001.v1"]


def test_an_edit_publishes_and_its_revert_publishes_the_old_answers_again(ws: Workspace, tmp_path: Path) -> None:
    ws.index()
    with ws.current() as gen:
        before = answers(gen)
    core = tmp_path / "repo" / "pkg" / "core.py"
    original = core.read_text()
    core.write_text(original + "\n\ndef added():\n    return helper()\n")
    edited = ws.index()
    assert edited.report.published and edited.report.generation == "g000002.v1"
    with ws.current() as gen:
        assert gen.symbols_by_name("added")
    core.write_text(original)
    reverted = ws.index()
    assert reverted.report.published and reverted.report.generation == "g000003.v1"  # ids only grow
    assert reverted.report.cache["misses"] == 0  # the old bytes' facts are still cached
    with ws.current() as gen:
        assert answers(gen) == before
    assert not ws.index().report.published


def test_a_damaged_current_generation_is_published_again_though_nothing_changed(ws: Workspace) -> None:
    ws.index()
    with ws.current() as gen:
        symbol = next(gen.declarations("repo", "pkg/core.py"))
        (layer,) = gen.manifest.layers
        data = gen.path / layer.directory / "data.mdb"  # the repository's layer holds its declarations
    raw = bytearray(data.read_bytes())
    at = raw.find(symbol.qualified_name.encode())
    assert at >= 0
    raw[at] ^= 0x20  # a flipped letter in a stored record: same size, different digest
    data.write_bytes(bytes(raw))
    again = ws.index()
    assert again.report.published and again.report.generation == "g000002.v1"
    with ws.current() as gen:
        (fresh,) = gen.manifest.layers
        assert fresh.digest == layer.digest  # the same content, written again: a damaged layer is never carried
        assert (gen.path / fresh.directory / "data.mdb").stat().st_ino != data.stat().st_ino
        gen.verify_digest()


def test_full_publishes_even_when_nothing_changed(ws: Workspace) -> None:
    ws.index()
    assert ws.index("refresh").report.published
    assert ws.generations() == ["g000001.v1", "g000002.v1"]


def test_a_watch_started_over_an_unchanged_tree_publishes_only_when_content_changes(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.index()
    repo = tmp_path / "repo"
    core = repo / "pkg" / "core.py"
    runs = []

    def reindex() -> int:
        runs.append(ws.index())
        return 0

    def batches():  # scripted change sets; each edit is made when the watcher asks for the next batch
        core.write_bytes(core.read_bytes())
        yield {(2, str(core))}  # saved without a change
        core.write_text(core.read_text() + "\n\ndef later():\n    return 2\n")
        yield {(2, str(core))}  # a real edit

    reindex()  # what `kivgraph index --watch` does first, over the tree as it is
    watch_and_index(ws.layout, reindex, changes=batches())
    assert [r.report.published for r in runs] == [False, False, True]
    assert ws.generations() == ["g000001.v1", "g000002.v1"]


def test_a_branch_switch_and_back_is_decided_by_content_and_comes_back_from_the_cache(
    ws: Workspace, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(repo), *args],
            check=True,
            capture_output=True,
            env={
                **os.environ,
                "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@t",
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t",
            },
        )

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "main")
    git("checkout", "-qb", "feature")
    (repo / "pkg" / "feature.py").write_text("from pkg.core import run\n\n\ndef feature():\n    return run()\n")
    git("add", ".")
    git("commit", "-qm", "feature")
    git("checkout", "-q", "main")
    on_main = ws.index()
    assert on_main.report.published
    with ws.current() as gen:
        main_answers = answers(gen)
        assert gen.repository("repo").branch == "main"  # type: ignore[union-attr]
    git("checkout", "-q", "feature")
    on_feature = ws.index()
    assert on_feature.report.published
    with ws.current() as gen:
        assert gen.symbols_by_name("feature") and gen.repository("repo").branch == "feature"  # type: ignore[union-attr]
    git("checkout", "-q", "main")
    back = ws.index()
    assert back.report.published and back.report.cache["misses"] == 0
    with ws.current() as gen:
        assert answers(gen) == main_answers
        assert answers(gen) == full_rebuild(tmp_path, ws.repositories)
    git("commit", "-q", "--allow-empty", "-m", "a commit that changes no file")
    moved = ws.index()
    assert moved.report.published  # the recorded commit moved: the generation says where it was taken
    assert not ws.index().report.published
