"""Publication with real processes: SIGKILL at every step, a second indexer, corrupt generations."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from indexer.publish import PUBLISH_STEPS
from snapshot_format.errors import DigestMismatchError, GenerationUnreadableError
from snapshot_format.layout import list_generations, read_current, resolve_layout
from snapshot_format.reader import Generation, open_current
from tests.fault_kit import wait_stopped
from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph, write_repo

pytestmark = pytest.mark.e2e

SOURCE = {
    "pkg/__init__.py": "from .core import run\n",
    "pkg/core.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    repo = write_repo(tmp_path / "repo", SOURCE)
    h = tmp_path / "home"
    result = run_kivgraph(h, "init", str(repo), "--languages", "python")
    assert result.returncode == 0, result.stderr
    first = run_kivgraph(h, "index")
    assert first.returncode == 0, first.stderr
    return h


def _readable_generations(home: Path) -> list[str]:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    names = []
    for _gid, _fmt, path in list_generations(layout):
        with Generation(path) as gen:
            gen.verify_digest()  # every visible generation is whole
            names.append(gen.name)
    return names


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_sigkill_at_a_publication_step_leaves_the_previous_generation_serving(home: Path, step: str) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    before = read_current(layout)
    (home.parent / "repo" / "pkg" / "extra.py").write_text("def more():\n    return 2\n")
    killed = run_kivgraph(home, "index", KIVGRAPH_FAULT_KILL_AT=step)
    assert killed.returncode == -signal.SIGKILL
    current = read_current(layout)
    if step == "current":
        assert current != before  # killed after the pointer moved: the new generation is complete
    else:
        assert current == before
    with open_current(layout) as gen:
        gen.verify_digest()
        assert gen.counts().symbols > 0
    assert current in _readable_generations(home)
    # The next indexer cleans the debris and publishes normally.
    again = run_kivgraph(home, "index")
    assert again.returncode == 0, again.stderr
    assert not [p for p in layout.generations_dir.iterdir() if p.name.startswith(".tmp-")]
    with open_current(layout) as gen:
        assert gen.symbols_by_name("more")


def test_a_second_indexer_exits_at_once_with_a_clear_message_while_the_first_holds_the_lock(home: Path) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    first = subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "index", "--full"],
        cwd=REPO_ROOT,  # --full: publishes again
        env=kivgraph_env(home, KIVGRAPH_FAULT_STOP_AT="locked"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while layout.publish_lock.read_text().strip() != str(first.pid):
            assert time.monotonic() < deadline, "the first indexer never took the lock"
            time.sleep(0.05)
        wait_stopped(first.pid)  # the lock is taken at the start; it stops later, at publication
        # The first one is stopped while it holds the lock: a second that waited for it would never return.
        second = run_kivgraph(home, "index", "--json", timeout=120)
        assert second.returncode == 3
        assert "another kivgraph index is running" in second.stderr
        assert str(first.pid) in second.stderr
        assert '"passed":false' in second.stdout
    finally:
        os.kill(first.pid, signal.SIGCONT)
        _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err


def test_a_generation_with_a_truncated_data_file_is_refused_on_open(home: Path) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    name = read_current(layout)
    data = layout.generations_dir / str(name) / "data.mdb"
    with open(data, "r+b") as fh:
        fh.truncate(data.stat().st_size // 2)
    with pytest.raises(GenerationUnreadableError, match="size"):
        open_current(layout)


def test_a_generation_whose_bytes_were_altered_fails_the_digest_check(home: Path) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    with open_current(layout) as gen:
        sym = gen.symbols_by_name("helper")[0]
        (layer,) = [e for e in gen.manifest.layers if e.repository == sym.repository]
        data = gen.path / layer.directory / "data.mdb"
    raw = data.read_bytes()
    needle = sym.qualified_name.encode()
    assert needle in raw
    data.write_bytes(raw.replace(needle, needle.upper()))
    with open_current(layout) as gen, pytest.raises(DigestMismatchError, match=f"the layer of {sym.repository}"):
        gen.verify_digest()


def test_a_truncated_layer_or_a_missing_one_is_refused_on_open(home: Path) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    with open_current(layout) as gen:
        layers = [gen.path / e.directory / "data.mdb" for e in gen.manifest.layers]
        names = [e.repository for e in gen.manifest.layers]
    assert layers
    with open(layers[0], "r+b") as fh:
        fh.truncate(layers[0].stat().st_size // 2)
    with pytest.raises(GenerationUnreadableError, match=f"size .* for the layer of {names[0]}"):
        open_current(layout)
    layers[0].unlink()
    with pytest.raises(GenerationUnreadableError, match="generation incomplete"):
        open_current(layout)


def test_a_generation_from_a_newer_format_is_refused_naming_both_versions(home: Path) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    name = str(read_current(layout))
    manifest = layout.generations_dir / name / "manifest"
    text = manifest.read_text().replace('"min_reader_version": 1', '"min_reader_version": 9')
    manifest.write_text(text)
    with pytest.raises(GenerationUnreadableError, match="reader of format 9"):
        open_current(layout)
    result = run_kivgraph(home, "status")
    assert result.returncode == 1 and "format 9" in result.stderr
