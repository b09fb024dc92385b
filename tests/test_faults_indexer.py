"""Fault suite, indexer side: racing indexers, killed and stopped runs, what an index leaves behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from snapshot_format.layout import read_current
from snapshot_format.reader import open_current
from tests.fault_kit import exits, indexed_home, layout_of, read_line, spawn_index, wait_stopped
from tests.fault_kit import index as run_index
from tests.helpers import run_kivgraph

pytestmark = pytest.mark.e2e


# --- fault 1: one indexer at a time, for the whole run -------------------------------------------------


def test_an_indexer_that_read_the_tree_before_an_edit_cannot_publish_over_a_later_one(tmp_path: Path) -> None:
    """A stops after discovery (old tree read); B, started after an edit, must not publish under A's nose."""
    home = indexed_home(tmp_path)
    repo = tmp_path / "repo"
    first = spawn_index(home, KIVGRAPH_FAULT_STOP_AT="extract")
    try:
        wait_stopped(first.pid)
        (repo / "pkg" / "late.py").write_text("def late_edit():\n    return 3\n")
        second = run_index(home, "--json")
        assert second.returncode == 3, second.stderr
        assert f"pid {first.pid}" in second.stderr and "another kivgraph index is running" in second.stderr
        assert '"passed":false' in second.stdout
    finally:
        os.kill(first.pid, signal.SIGCONT)
        first.communicate(timeout=120)
    assert first.returncode == 0
    # A read the tree before the edit: unchanged, so it published nothing over generation 1. The edit is
    # not lost: the next run publishes it under a newer id.
    assert read_current(layout_of(home)) == "g000001.v1"
    again = run_index(home)
    assert again.returncode == 0, again.stderr
    with open_current(layout_of(home)) as gen:
        assert gen.symbols_by_name("late_edit")
        assert gen.id == 2


def test_a_manual_index_beside_a_running_watch_exits_three_naming_the_watch(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    watch = spawn_index(home, "--watch", "--json")
    try:
        result_line = read_line(watch.stdout)
        while b'"event":"progress"' in result_line:
            result_line = read_line(watch.stdout)
        assert b'"event":"result"' in result_line and b'"passed":true' in result_line
        manual = run_index(home)
        assert manual.returncode == 3
        assert f"pid {watch.pid}" in manual.stderr
    finally:
        watch.send_signal(signal.SIGTERM)
        watch.communicate(timeout=60)
    assert watch.returncode == 128 + signal.SIGTERM
    assert layout_of(home).publish_lock.read_text() == ""  # released, holder cleared
    assert run_index(home).returncode == 0


# --- fault 6: nothing written into the repository, no scratch or analyzer left behind -------------------


def test_indexing_a_git_checkout_writes_nothing_into_its_git_directory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    home = indexed_home(tmp_path)
    for cmd in (["init", "-q"], ["add", "."], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True)
    (repo / "pkg" / "core.py").write_text("def helper():\n    return 2\n")  # dirty: git status has work to do
    os.utime(repo / "pkg" / "more.py")  # a stat change git status would write back into .git/index
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in (repo / ".git").rglob("*") if p.is_file()}
    result = run_index(home)
    assert result.returncode == 0, result.stderr
    after = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in (repo / ".git").rglob("*") if p.is_file()}
    assert after == before
    with open_current(layout_of(home)) as gen:
        (repository,) = gen.repositories()
        assert repository.dirty is True


FAKE_ANALYZER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo 0.6.6; exit 0; fi
sleep 600 &
echo "$$ $!" > "{fifo}"
wait
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stopping_an_index_kills_the_analyzer_group_and_removes_its_scratch(tmp_path: Path, sig: int) -> None:
    home = indexed_home(tmp_path)
    layout = layout_of(home)
    fifo = tmp_path / "analyzer.fifo"
    os.mkfifo(fifo)
    fake = tmp_path / "scip-python"
    fake.write_text(FAKE_ANALYZER.format(fifo=fifo))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "repo" / "pkg" / "new.py").write_text("def new():\n    return 1\n")  # a cache miss: the analyzer runs
    proc = spawn_index(home, analyzer=True, KIVGRAPH_SCIP_PYTHON=str(fake))
    with open(fifo) as fh:  # blocks until the analyzer runs
        pids = [int(p) for p in fh.read().split()]
    assert any(layout.scratch_dir.iterdir())  # its scratch lives under the state directory
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    for pid in pids:  # SIGKILL is delivered asynchronously: wait (bounded) for each to exit
        assert exits(pid), f"analyzer process {pid} survived"
    assert not layout.scratch_dir.exists()
    # Before the analyzer ran, the CANDIDATE generation was published, whole and labelled: new.py waits
    # for its exact analysis. Nothing of the stopped exact stage is visible.
    assert read_current(layout) == "g000002.v1"
    assert not [p for p in layout.generations_dir.iterdir() if p.name.startswith(".tmp-")]
    with open_current(layout) as gen:
        gen.verify_digest()
        new = gen.file("repo", "pkg/new.py")
        assert new is not None and new.analysis == "pending" and gen.symbols_by_name("new")
    # the next run finishes it (here on the fallback: the analyzer is switched off)
    assert run_index(home).returncode == 0
    with open_current(layout) as gen:
        assert gen.id == 3 and gen.file("repo", "pkg/new.py").analysis == "fallback"  # type: ignore[union-attr]


def test_scratch_left_by_a_killed_run_is_removed_by_the_next_one(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    layout = layout_of(home)
    killed = run_kivgraph(
        home, "index", "--full", KIVGRAPH_FAULT_KILL_AT="analyze", KIVGRAPH_SCIP_PYTHON="/nonexistent/scip-python"
    )
    assert killed.returncode == -signal.SIGKILL
    assert layout.scratch_dir.is_dir()
    (layout.scratch_dir / "kivgraph-scip-debris").mkdir()
    assert run_index(home).returncode == 0
    assert not layout.scratch_dir.exists()


def test_a_stop_signal_that_arrives_while_an_analyzer_starts_still_kills_its_group(monkeypatch) -> None:
    """Under load the signal can land inside Popen, after the fork: the child must not run on with parent 1."""
    import subprocess as sp

    from indexer import children

    real_popen = sp.Popen
    started: list[int] = []

    def popen_then_signal(*args, **kwargs):  # the handler runs while Popen is still returning
        proc = real_popen(*args, **kwargs)
        started.append(proc.pid)
        children.interrupt(KeyboardInterrupt())
        return proc

    monkeypatch.setattr(sp, "Popen", popen_then_signal)
    body_ran = False
    with pytest.raises(KeyboardInterrupt), children.spawned(["sleep", "600"]) as _proc:
        body_ran = True
    assert not body_ran and started
    assert exits(started[0], timeout=30), "the analyzer started during the signal survived"
    with pytest.raises(KeyboardInterrupt):  # outside a spawn the handler's exception is raised at once
        children.interrupt(KeyboardInterrupt())


# --- an edit saved while the exact pass's analyzer runs ---------------------------------------------------

SLOW_ANALYZER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo 0.6.6; exit 0; fi
if [ ! -e "{block}" ]; then echo "not this time" >&2; exit 1; fi
sleep 600 &
echo "$$ $!" >> "{pids}"
wait
"""


def _events(proc: subprocess.Popen[bytes], until: str) -> list[dict]:
    """The --json events of a running watch up to (and with) the first whose text holds ``until``
    (``candidate``: the publication of a CANDIDATE generation)."""
    import json

    seen = []
    while True:
        line = read_line(proc.stdout)
        assert line, f"the watch ended before {until!r}: {seen[-3:]}"
        event = json.loads(line)
        seen.append(event)
        if until == "candidate":
            if event["event"] == "published" and event["published"]["stage"] == "candidate":
                return seen
        elif until in line.decode():
            return seen


def _analyzer_pids(path: Path, count: int) -> list[list[int]]:
    """The process ids each blocked analyzer run wrote (bounded wait for ``count`` of them)."""
    import time

    for _ in range(1200):
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [[int(p) for p in line.split()] for line in lines]
        time.sleep(0.1)
    raise AssertionError(f"{count} analyzer runs expected, {path} holds {lines}")


def test_an_edit_saved_while_the_analyzer_runs_stops_it_and_gets_its_own_candidate_generation(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    layout = layout_of(home)
    block, pids = tmp_path / "block", tmp_path / "pids"
    fake = tmp_path / "scip-python"
    fake.write_text(SLOW_ANALYZER.format(block=block, pids=pids))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    watch = spawn_index(home, "--watch", "--json", analyzer=True, KIVGRAPH_SCIP_PYTHON=str(fake))
    try:
        _events(watch, '"event":"result"')  # the first run (the analyzer fails fast: its failure is cached)
        block.touch()  # from now on the analyzer runs until it is stopped
        (tmp_path / "repo" / "pkg" / "first.py").write_text("def first():\n    return 1\n")
        _events(watch, "candidate")
        (first_run,) = _analyzer_pids(pids, 1)  # the exact pass of the first edit is running
        (tmp_path / "repo" / "pkg" / "second.py").write_text("def second():\n    return 2\n")
        superseded = _events(watch, '"superseded"')
        assert any("newer edit" in json_text for json_text in map(str, superseded))
        for pid in first_run:
            assert exits(pid), f"the superseded analyzer's process {pid} survived"
        _events(watch, "candidate")  # the second edit's own, without waiting for an exact pass
        with open_current(layout) as gen:
            assert gen.symbols_by_name("second") and gen.symbols_by_name("first")
            assert gen.file("repo", "pkg/second.py").analysis == "pending"  # type: ignore[union-attr]
            assert gen.file("repo", "pkg/first.py").analysis == "pending"  # type: ignore[union-attr]
        (second_run,) = _analyzer_pids(pids, 2)[1:]  # the exact pass of both edits runs
    finally:
        watch.send_signal(signal.SIGTERM)
        watch.communicate(timeout=60)
    assert watch.returncode == 128 + signal.SIGTERM
    for pid in second_run:
        assert exits(pid), f"analyzer process {pid} survived the stop"
