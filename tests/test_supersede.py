"""When a newer edit stops an exact pass (``indexer.supersede``), without processes: the rules themselves."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from indexer import supersede


@pytest.fixture(autouse=True)
def watching(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supersede, "_watching", True)


def test_only_a_file_written_after_the_run_began_makes_its_exact_pass_moot(tmp_path: Path) -> None:
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text("x = 1\n")
    past = time.time() - 60
    os.utime(before, (past, past))  # saved before the run: the run read it
    supersede.begin_run()
    after.write_text("y = 2\n")
    os.utime(after, (time.time() + 1, time.time() + 1))
    assert not supersede.newer_than_run([(1, str(before))])
    assert not supersede.newer_than_run([(3, str(tmp_path / "gone.py"))])  # a removal never stops a pass
    assert supersede.newer_than_run([(1, str(before)), (2, str(after))])


def test_an_analyzer_is_stopped_only_in_the_exact_pass_of_a_run_that_published_its_candidate() -> None:
    supersede.begin_run()
    supersede._dirty.set()  # a newer edit arrived
    with supersede.exact_stage(candidate_published=False), supersede.analyzer_running():
        pass  # a rebuild: never superseded, so a stream of edits cannot starve it
    with (
        pytest.raises(supersede.Superseded),
        supersede.exact_stage(candidate_published=True),
        supersede.analyzer_running(),
    ):
        raise AssertionError("the analyzer must not start")
    supersede.begin_run()  # the next run takes the edit
    with supersede.exact_stage(candidate_published=True), supersede.analyzer_running():
        assert supersede._armed  # a signal now stops it
    assert not supersede._armed and not supersede._enabled


def test_superseded_is_no_analyzer_failure() -> None:
    # analyzer error handlers catch Exception; a newer edit must go past them to the stage boundary
    assert not issubclass(supersede.Superseded, Exception)


def test_a_listener_that_cannot_watch_leaves_the_watch_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    def refused(_stop: object):
        raise OSError("OS file watch limit reached")
        yield  # a generator, as watchfiles.watch is

    stop = supersede.listen(refused, lambda _batch: True)
    try:
        for _ in range(100):
            if "will wait" in capsys.readouterr().err:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the listener's failure was not reported")
    finally:
        stop()
